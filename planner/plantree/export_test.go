package plantree

import "slices"

// WithoutRule drops the named rule until the function it returns puts
// the rules back (the rule cases print each tree with and without it).
func WithoutRule(name string) (restore func()) {
	chain, block := rules, blockRules
	rules = slices.DeleteFunc(slices.Clone(chain), func(r rule) bool { return r.name == name })
	blockRules = slices.DeleteFunc(slices.Clone(block), func(r blockRule) bool { return r.name == name })
	return func() { rules, blockRules = chain, block }
}
