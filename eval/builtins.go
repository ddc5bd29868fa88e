package eval

import (
	"time"

	"topicgate/planner/catalog"
	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// Func implements one builtin. Arguments arrive already converted to the
// planner's declared types; a NULL argument makes the result NULL without
// a call unless the declaration is NullAware.
type Func func(ctx Context, args []any) (any, error)

// builtins are the implementations of catalog.Builtins, by name, merged
// from the families' maps at init; impls holds each at its declaration's
// ID.
var builtins map[string]Func

// impls[b.ID] implements catalog.BuiltinList[b.ID]; register fills every
// slot or panics, so a binary whose implementations and the planner's
// declarations differ never starts.
var impls []Func

func init() {
	builtins = map[string]Func{}
	for _, family := range []map[string]Func{
		stringBuiltins, mathBuiltins, datetimeBuiltins, jsonBuiltins,
		arrayBuiltins, systemBuiltins, catalogBuiltins,
	} {
		for name, fn := range family {
			if _, dup := builtins[name]; dup {
				panic("builtin " + name + " is implemented twice")
			}
			builtins[name] = fn
		}
	}
	impls = register(builtins)
}

// register keys each implementation by the planner's declaration of the
// same name: one without a declaration, or a declaration without an
// implementation, is a programming error caught before anything runs.
func register(fns map[string]Func) []Func {
	out := make([]Func, len(catalog.BuiltinList))
	for name, fn := range fns {
		b, ok := catalog.Builtins[name]
		if !ok {
			panic("builtin " + name + " is implemented but not declared in catalog.Builtins")
		}
		out[b.ID] = fn
	}
	for _, b := range catalog.BuiltinList {
		if out[b.ID] == nil {
			panic("builtin " + b.Name + " is declared in catalog.Builtins but not implemented")
		}
	}
	return out
}

// call runs the builtin of call x over its evaluated arguments args
// (NULLs already handled as its declaration says). args may be modified.
func call(ctx Context, x *plantree.FuncExpr, args []any) (any, error) {
	if x.Fn == nil {
		return nil, pgerror.AssertionFailed("builtin %s was planned without its declaration", x.Name)
	}
	if x.Name == "to_char" && x.Args[0].Type() == values.TDate {
		if t, ok := args[0].(time.Time); ok {
			args[0] = civilDate(t)
		}
	}
	return impls[x.Fn.ID](ctx, args)
}
