package planner

import (
	"strconv"
	"strings"

	"topicgate/planner/plantree"
	"topicgate/planner/scalar"
	"topicgate/planner/topicopts"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

func hintExpr(b *binder, o sql.Option, t Type) (plantree.Expr, error) {
	var e plantree.Expr
	switch o.Value.Kind {
	case sql.LitParam:
		e = b.Param(o.Value.Param)
	case sql.LitIdent:
		e = &plantree.ConstExpr{V: o.Value.Str, T: TUnknown}
	default:
		var err error
		if e, err = scalar.Const(o.Value); err != nil {
			return nil, err
		}
	}
	if scalar.IsUntyped(e) {
		return coerceHint(e, t, o.Name)
	}
	if e.Type() != t && !(e.Type().IsInt() && t.IsInt()) {
		if t == TText {
			return &plantree.CastExpr{X: e, T: TText}, nil
		}
		return nil, topicopts.BadOption("read option \"%s\" must be of type %s, not %s", o.Name, t, e.Type())
	}
	return e, nil
}

func coerceHint(e plantree.Expr, t Type, name string) (plantree.Expr, error) {
	x, err := scalar.Coerce(e, t)
	if err != nil {
		return nil, topicopts.BadOption("read option \"%s\": %v", name, err)
	}
	return x, nil
}

// planConsumerRead validates the WITH (...) read options of a SELECT.
func planConsumerRead(b *binder, ti topicstore.TopicInfo, hints []sql.Option) (*plantree.ConsumerRead, error) {
	if err := topicopts.CheckDuplicates(hints); err != nil {
		return nil, err
	}
	cr := &plantree.ConsumerRead{Topic: ti.Config.Name}
	for _, o := range hints {
		var err error
		switch o.Name {
		case "consumer":
			if o.Value.Kind != sql.LitIdent && o.Value.Kind != sql.LitString {
				return nil, topicopts.BadOption("read option \"consumer\" must be a consumer name")
			}
			cr.Consumer = o.Value.Str
		case "wait":
			cr.Wait, err = hintExpr(b, o, TInterval)
		case "max_bytes":
			cr.MaxBytes, err = hintExpr(b, o, TInt8)
		case "read_from":
			cr.ReadFrom, err = hintExpr(b, o, TTimestamptz)
		case "max_lag":
			cr.MaxLag, err = hintExpr(b, o, TInterval)
		case "partitions":
			cr.Partitions, err = hintExpr(b, o, TText)
		case "partition_max_in_flight_bytes":
			cr.MaxInFlight, err = hintExpr(b, o, TInt8)
		case "processing_timeout":
			cr.ProcessingTimeout, err = hintExpr(b, o, TInterval)
		default:
			return nil, topicopts.BadOption("unrecognized read option \"%s\" (known: consumer, wait, max_bytes, read_from, max_lag, partitions, partition_max_in_flight_bytes, processing_timeout)", o.Name)
		}
		if err != nil {
			return nil, err
		}
	}
	if cr.Consumer == "" {
		return nil, topicopts.BadOption("read options on topic \"%s\" need CONSUMER = name", ti.Config.Name)
	}
	found := false
	for _, c := range ti.Config.Consumers {
		if c.Name == cr.Consumer {
			found, cr.Shared = true, c.Shared
		}
	}
	if !found {
		return nil, pgerror.Newf(pgerror.CodeUndefinedObject, "consumer \"%s\" does not exist in topic \"%s\"", cr.Consumer, ti.Config.Name)
	}
	if cr.ProcessingTimeout != nil && !cr.Shared {
		return nil, topicopts.BadOption("read option \"processing_timeout\" is only valid for a shared consumer; \"%s\" is streaming", cr.Consumer)
	}
	return cr, nil
}

// ParsePartitionList parses '0,2,5'.
func ParsePartitionList(s string) ([]int32, error) {
	var out []int32
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil || n < 0 {
			return nil, topicopts.BadOption("read option \"partitions\": \"%s\" is not a partition number", p)
		}
		out = append(out, int32(n))
	}
	return out, nil
}
