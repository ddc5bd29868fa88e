package eval

import (
	"regexp"
	"strings"
	"sync"

	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// compareOp evaluates a comparison operator over two non-NULL values: the
// orderings and equality (values.Compare), LIKE and ILIKE (like.go) and
// the POSIX regular expression matches ~, ~*, !~ and !~*.
func compareOp(op string, l, r any) (any, error) {
	switch op {
	case "~~", "~~*", "!~~", "!~~*", "~", "~*", "!~", "!~*":
		return match(op, l, r)
	}
	c, err := values.Compare(l, r)
	if err != nil {
		return nil, err
	}
	switch op {
	case "=":
		return c == 0, nil
	case "<>":
		return c != 0, nil
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	case ">=":
		return c >= 0, nil
	}
	return nil, pgerror.AssertionFailed("unknown comparison %s", op)
}

var regexCache sync.Map // pattern key -> *regexp.Regexp

func match(op string, l, r any) (any, error) {
	switch op {
	case "~~", "!~~", "~~*", "!~~*":
		return like(op, l, r)
	}
	s, ok1 := l.(string)
	p, ok2 := r.(string)
	if !ok1 || !ok2 {
		return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "operator %s needs text operands", op)
	}
	key := op + "\x00" + p
	re, ok := regexCache.Load(key)
	if !ok {
		src := p
		if strings.Contains(op, "*") {
			src = "(?i)" + src
		}
		c, err := regexp.Compile(src)
		if err != nil {
			return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "invalid regular expression: %v", err)
		}
		re, _ = regexCache.LoadOrStore(key, c)
	}
	m := re.(*regexp.Regexp).MatchString(s)
	if strings.HasPrefix(op, "!") {
		return !m, nil
	}
	return m, nil
}
