package consume

import (
	"context"
	"fmt"

	"topicgate/planner/plantree"
	"topicgate/rowexec"
	"topicgate/sql/pgerror"
	"topicgate/txn"
)

// SetPositions runs UPDATE sys.consumers SET committed_offset = ...:
// each selected row's position is set (synced) on its own. consumers
// returns sys.consumers' rows (the filter and the new offset read them;
// topic, consumer and partition are its columns 0, 1 and 4).
func (rd *Reader) SetPositions(ctx context.Context, ec *rowexec.EvalCtx, p *plantree.SetPositionPlan, consumers func() ([][]any, error)) (string, error) {
	if rd.cfg.Conn.Block() != nil {
		return "", pgerror.New(pgerror.CodeActiveSQLTransaction, "UPDATE sys.consumers cannot run inside a transaction block: positions set explicitly take effect at once")
	}
	rows, err := consumers()
	if err != nil {
		return "", err
	}
	n := 0
	for _, r := range rows {
		if p.Filter != nil {
			ok, err := ec.Eval(p.Filter, rowexec.ValuesRow(r))
			if err != nil {
				return "", err
			}
			if ok != true {
				continue
			}
		}
		v, err := ec.Eval(p.Offset, rowexec.ValuesRow(r))
		if err != nil {
			return "", err
		}
		off, ok := v.(int64)
		if !ok {
			return "", pgerror.New(pgerror.CodeNullValueNotAllowed, "committed_offset must not be NULL")
		}
		topic, consumer, part := r[0].(string), r[1].(string), int32(r[4].(int64))
		if err := rd.cfg.Store.SetPosition(ctx, topic, consumer, part, off); err != nil {
			return "", txn.StoreError(err, topic)
		}
		n++
	}
	return fmt.Sprintf("UPDATE %d", n), nil
}
