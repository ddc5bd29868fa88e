package eval

import (
	"regexp"
	"sort"
	"time"

	"github.com/cockroachdb/apd/v3"

	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// The set-returning functions (planner/scalar/srf.go declares them):
// generate_series, generate_subscripts, unnest, jsonb_array_elements[_text],
// jsonb_object_keys, jsonb_each[_text] and regexp_split_to_table. Package
// rowexec steps them, in a select list (ProjectSet) or in FROM.

// Generator yields the values of one set-returning call for one input
// row; ok false means it is exhausted.
type Generator interface {
	Next() (v any, ok bool, err error)
}

// Values is a Generator of vals (a function scan of a scalar call yields
// its one value).
func Values(vals ...any) Generator { return &sliceGen{vals: vals} }

// NewGenerator starts a set-returning function over its evaluated
// arguments. A
// NULL argument yields no rows (they are all strict), except for
// generate_subscripts's optional reverse flag.
func NewGenerator(f *plantree.FuncExpr, args []any) (Generator, error) {
	for _, a := range args {
		if a == nil {
			return &sliceGen{}, nil
		}
	}
	switch f.Name {
	case "unnest":
		n, _ := arrayLen(args[0]).(int64)
		vals := make([]any, n)
		for i := range vals {
			vals[i] = arrayElem(args[0], int64(i+1))
		}
		return &sliceGen{vals: vals}, nil
	case "generate_subscripts":
		n, _ := arrayLen(args[0]).(int64)
		if args[1].(int64) != 1 {
			n = 0 // topicgate's arrays have one dimension
		}
		reverse := len(args) == 3 && args[2].(bool)
		vals := make([]any, n)
		for i := range vals {
			vals[i] = int64(i + 1)
			if reverse {
				vals[i] = n - int64(i)
			}
		}
		return &sliceGen{vals: vals}, nil
	case "generate_series":
		return newSeries(f.T, args)
	case "jsonb_array_elements", "jsonb_array_elements_text", "jsonb_object_keys":
		return jsonbElements(f.Name, args[0].(string))
	case "jsonb_each", "jsonb_each_text":
		return jsonbEach(f.Name, args[0].(string))
	case "regexp_split_to_table":
		return regexpSplit(args)
	}
	return nil, pgerror.AssertionFailed("set-returning function %s has no implementation", f.Name)
}

// sliceGen yields precomputed values.
type sliceGen struct {
	vals []any
	i    int
}

func (g *sliceGen) Next() (any, bool, error) {
	if g.i >= len(g.vals) {
		return nil, false, nil
	}
	g.i++
	return g.vals[g.i-1], true, nil
}

// seriesGen is generate_series: integers, numerics or timestamps from
// start to stop by step, lazily (a series may be long).
type seriesGen struct {
	t              values.Type
	cur, stop, inc int64
	dcur, dstop    *apd.Decimal
	dstep          *apd.Decimal
	tcur, tstop    time.Time
	tstep          time.Duration
	done           bool
}

func newSeries(t values.Type, args []any) (Generator, error) {
	g := &seriesGen{t: t}
	switch t {
	case values.TTimestamptz:
		g.tcur, g.tstop, g.tstep = args[0].(time.Time), args[1].(time.Time), args[2].(time.Duration)
		if g.tstep == 0 {
			return nil, pgerror.New(pgerror.CodeInvalidParameterValue, "step size cannot equal zero")
		}
	case values.TNumeric:
		var err error
		if g.dcur, err = values.ToNumeric(args[0]); err != nil {
			return nil, err
		}
		if g.dstop, err = values.ToNumeric(args[1]); err != nil {
			return nil, err
		}
		g.dstep = values.NumericFromInt(1)
		if len(args) == 3 {
			if g.dstep, err = values.ToNumeric(args[2]); err != nil {
				return nil, err
			}
		}
		for _, d := range []*apd.Decimal{g.dcur, g.dstop, g.dstep} {
			if d.Form == apd.NaN {
				which := "start value"
				switch d {
				case g.dstop:
					which = "stop value"
				case g.dstep:
					which = "step size"
				}
				return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "%s cannot be NaN", which)
			}
		}
		if g.dstep.IsZero() {
			return nil, pgerror.New(pgerror.CodeInvalidParameterValue, "step size cannot equal zero")
		}
	default:
		g.cur, g.stop, g.inc = args[0].(int64), args[1].(int64), 1
		if len(args) == 3 {
			g.inc = args[2].(int64)
		}
		if g.inc == 0 {
			return nil, pgerror.New(pgerror.CodeInvalidParameterValue, "step size cannot equal zero")
		}
	}
	return g, nil
}

func (g *seriesGen) Next() (any, bool, error) {
	if g.done {
		return nil, false, nil
	}
	switch g.t {
	case values.TTimestamptz:
		if g.tstep > 0 && g.tcur.After(g.tstop) || g.tstep < 0 && g.tcur.Before(g.tstop) {
			g.done = true
			return nil, false, nil
		}
		v := g.tcur
		g.tcur = g.tcur.Add(g.tstep)
		return v, true, nil
	case values.TNumeric:
		c := g.dcur.Cmp(g.dstop)
		if g.dstep.Negative && c < 0 || !g.dstep.Negative && c > 0 {
			g.done = true
			return nil, false, nil
		}
		v := g.dcur
		next, err := values.NumericArith("+", g.dcur, g.dstep)
		if err != nil {
			return nil, false, err
		}
		g.dcur = next
		return v, true, nil
	}
	if g.inc > 0 && g.cur > g.stop || g.inc < 0 && g.cur < g.stop {
		g.done = true
		return nil, false, nil
	}
	v := g.cur
	next := g.cur + g.inc
	if (g.inc > 0) != (next > g.cur) { // overflow: v was the last
		g.done = true
	}
	g.cur = next
	return v, true, nil
}

// jsonbElements is jsonb_array_elements(_text) and jsonb_object_keys, with
// PostgreSQL's errors for a document of the wrong shape. Object keys come
// in jsonb's order: shorter keys first, then bytewise.
func jsonbElements(name, doc string) (Generator, error) {
	v, err := decodeJSON(doc)
	if err != nil {
		return nil, err
	}
	kind := func() string {
		switch v.(type) {
		case map[string]any:
			return "an object"
		case []any:
			return "an array"
		case string:
			return "a scalar"
		}
		return "a scalar"
	}
	var vals []any
	if name == "jsonb_object_keys" {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "cannot call %s on %s", name, kind())
		}
		for _, k := range jsonbKeys(obj) {
			vals = append(vals, k)
		}
		return &sliceGen{vals: vals}, nil
	}
	arr, ok := v.([]any)
	if !ok {
		what := "extract elements from " + kind()
		if _, obj := v.(map[string]any); !obj {
			what = "extract elements from a scalar"
		}
		return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "cannot %s", what)
	}
	for _, e := range arr {
		x, err := jsonResult(e, name == "jsonb_array_elements_text")
		if err != nil {
			return nil, err
		}
		vals = append(vals, x)
	}
	return &sliceGen{vals: vals}, nil
}

// jsonbKeys are an object's keys in jsonb's order: shorter keys first,
// then bytewise.
func jsonbKeys(obj map[string]any) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) < len(keys[j])
		}
		return keys[i] < keys[j]
	})
	return keys
}

// JSONBPair is a row of jsonb_each(_text), a value of two columns: an
// object's key and its value (jsonb, or text with JSON null as NULL).
type JSONBPair struct {
	Key   string
	Value any
}

// jsonbEach is jsonb_each and jsonb_each_text, in jsonb's key order; a
// document that is not an object is PostgreSQL's 22023.
func jsonbEach(name, doc string) (Generator, error) {
	v, err := decodeJSON(doc)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "cannot call %s on a non-object", name)
	}
	vals := make([]any, 0, len(obj))
	for _, k := range jsonbKeys(obj) {
		x, err := jsonResult(obj[k], name == "jsonb_each_text")
		if err != nil {
			return nil, err
		}
		vals = append(vals, JSONBPair{k, x})
	}
	return &sliceGen{vals: vals}, nil
}

// regexpSplit is regexp_split_to_table(text, pattern[, flags]): the text
// between the pattern's matches (an empty match splits between
// characters), with the flags i (case-insensitive) and g (accepted).
func regexpSplit(args []any) (Generator, error) {
	s, pat := args[0].(string), args[1].(string)
	if len(args) == 3 {
		for _, fl := range args[2].(string) {
			switch fl {
			case 'i':
				pat = "(?i)" + pat
			case 'c', 'g':
			default:
				return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "invalid regular expression option: \"%c\"", fl)
			}
		}
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, pgerror.Newf(pgerror.CodeInvalidRegularExpression, "invalid regular expression: %v", err)
	}
	var vals []any
	start := 0
	for _, m := range re.FindAllStringIndex(s, -1) {
		if m[0] == m[1] && (m[0] == 0 || m[0] == len(s) || m[0] == start) {
			continue // PostgreSQL ignores empty matches at either end
		}
		vals = append(vals, s[start:m[0]])
		start = m[1]
	}
	vals = append(vals, s[start:])
	return &sliceGen{vals: vals}, nil
}
