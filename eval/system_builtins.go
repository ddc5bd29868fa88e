package eval

import (
	"fmt"

	"topicgate/sql/pgerror"
)

// systemBuiltins are the session information and settings functions.
var systemBuiltins = map[string]Func{
	"version": func(ctx Context, _ []any) (any, error) {
		return "PostgreSQL 15.0 (topicgate " + ctx.Session().ServerVersion + ") on x86_64-pc-linux-gnu", nil
	},
	"current_database": func(ctx Context, _ []any) (any, error) { return ctx.Session().Database, nil },
	"current_schema":   func(Context, []any) (any, error) { return "public", nil },
	"current_schemas": func(_ Context, a []any) (any, error) {
		// The search path as topicgate resolves names: pg_catalog first
		// (implicit), then public.
		if a[0] == true {
			return []string{"pg_catalog", "public"}, nil
		}
		return []string{"public"}, nil
	},
	"current_user":   func(ctx Context, _ []any) (any, error) { return ctx.Session().User, nil },
	"session_user":   func(ctx Context, _ []any) (any, error) { return ctx.Session().SessionUser, nil },
	"pg_backend_pid": func(ctx Context, _ []any) (any, error) { return int64(ctx.Session().ProcessID), nil },
	"current_setting": func(ctx Context, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		v, ok := ctx.Setting(a[0].(string))
		if !ok {
			if len(a) > 1 && a[1] == true {
				return nil, nil
			}
			return nil, pgerror.Newf(pgerror.CodeUndefinedObject, "unrecognized configuration parameter \"%s\"", a[0])
		}
		return v, nil
	},
	"set_config": func(ctx Context, a []any) (any, error) {
		name, _ := a[0].(string)
		val, _ := a[1].(string)
		local := len(a) > 2 && a[2] == true
		v, err := ctx.SetSetting(name, val, local)
		if err != nil {
			return nil, err
		}
		return v, nil
	},
	"pg_size_pretty": fnSizePretty,
}

func fnSizePretty(_ Context, a []any) (any, error) {
	n := a[0].(int64)
	units := []string{"bytes", "kB", "MB", "GB", "TB"}
	v := n
	i := 0
	for i < len(units)-1 && (v >= 10240 || v <= -10240) {
		v = (v + 512) / 1024
		i++
	}
	return fmt.Sprintf("%d %s", v, units[i]), nil
}
