package eval

import (
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	"topicgate/planner/catalog"
	"topicgate/sql/values"

	"github.com/stretchr/testify/require"
)

func TestBuiltinsMatchPlanner(t *testing.T) {
	for name := range catalog.Builtins {
		_, ok := builtins[name]
		require.True(t, ok, "builtin %s is planned but not implemented", name)
	}
	for name := range builtins {
		_, ok := catalog.Builtins[name]
		require.True(t, ok, "builtin %s is implemented but not planned", name)
	}
}

// program at init (register panics).
// declaration, or a declaration without an implementation, stops the
// executor at init (registerBuiltins panics).
func TestRegisterBuiltinsRefusesDivergence(t *testing.T) {
	fns := map[string]Func{}
	for name, fn := range builtins {
		fns[name] = fn
	}
	require.NotPanics(t, func() { register(fns) })
	fns["no_such_builtin"] = builtins["length"]
	require.PanicsWithValue(t, "builtin no_such_builtin is implemented but not declared in catalog.Builtins", func() { register(fns) })
	delete(fns, "no_such_builtin")
	delete(fns, "length")
	require.PanicsWithValue(t, "builtin length is declared in catalog.Builtins but not implemented", func() { register(fns) })
}

// TestBuiltinsNeverPanic calls every builtin with extreme arguments of its
// declared types: each call must return a value or an error, never panic
// (client input reaches these directly).
func TestBuiltinsNeverPanic(t *testing.T) {
	samples := map[values.Type][]any{
		values.TText:        {"", "a", "héllo wörld", strings.Repeat("ab", 500), "\x00", "{a,b}"},
		values.TInt8:        {int64(0), int64(1), int64(-1), int64(3), int64(math.MaxInt64), int64(math.MinInt64), int64(1 << 40)},
		values.TFloat8:      {0.0, -1.0, 2.5, 1e308, -1e308, math.NaN(), math.Inf(1), math.Inf(-1)},
		values.TTimestamptz: {time.Time{}, time.Date(2024, 5, 17, 13, 4, 5, 6, time.UTC), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)},
		values.TTextArray:   {[]string{}, []string{"a", ""}},
		values.TBytea:       {[]byte{}, []byte{0xff, 0x00}, []byte("abc")},
		values.TJSONB:       {"{}", "[1,2]", `{"a":{"b":1}}`, "null"},
	}
	for _, ty := range []values.Type{values.TInt8, values.TFloat8, values.TText, values.TBytea, values.TTimestamptz} {
		samples[values.TUnknown] = append(samples[values.TUnknown], samples[ty]...)
	}
	ctx := fakeContext{now: time.Now()}
	rng := rand.New(rand.NewSource(1))
	for name, fn := range builtins {
		sig := catalog.Builtins[name]
		for iter := 0; iter < 300; iter++ {
			n := sig.Min()
			if max := sig.Max(); max > n {
				n += rng.Intn(max - n + 1)
			}
			args := make([]any, n)
			for i := range args {
				vs := samples[sig.ArgType(i)]
				if len(vs) == 0 {
					vs = samples[values.TUnknown]
				}
				args[i] = vs[rng.Intn(len(vs))]
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("%s%v panicked: %v", name, args, r)
					}
				}()
				_, _ = fn(ctx, args)
			}()
		}
	}
}

// fakeContext is a session with nothing set and no relations.
type fakeContext struct{ now time.Time }

func (c fakeContext) Now() time.Time                                { return c.now }
func (fakeContext) DateStyle() values.DateStyle                     { return values.DateStyle{} }
func (fakeContext) Location() *time.Location                        { return time.UTC }
func (fakeContext) Session() Session                                { return Session{User: "u", Database: "d"} }
func (fakeContext) Setting(string) (string, bool)                   { return "", false }
func (fakeContext) SetSetting(_, v string, _ bool) (string, error)  { return v, nil }
func (fakeContext) Catalog() Catalog                                { return fakeContext{} }
func (fakeContext) Relation(int64) (Relation, bool)                 { return Relation{}, false }
func (fakeContext) DatabaseSize() int64                             { return 0 }
func (fakeContext) Privilege(string, any, any, string) (any, error) { return true, nil }
func (fakeContext) RoleName(int64) (string, bool)                   { return "postgres", true }
func (fakeContext) Signal(int64, bool) (bool, error)                { return false, nil }
