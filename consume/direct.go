package consume

import (
	"context"

	"topicgate/planner/plantree"
	"topicgate/rowexec"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
	"topicgate/wire"
)

// Consumer reads are the hot read path: a streaming consumer reads
// thousands of messages per statement. When every projected column is a
// bare message column, the read encodes each message's DataRow straight
// from the store's memory during the Scan callback (wire.RowEncoder),
// instead of boxing every value into a []any row and copying the body to
// outlive the callback. A shared consumer's read encodes its acquired
// messages the same way (sharedRows) unless it projects delivery_count or
// locked_until. The rows are sent only after the read's positions
// were committed (or recorded in the transaction), so a read retried after
// a conflict simply drops what it encoded.

// directCols returns the message column of each projection when every one
// is a bare column that encodeMsg writes, or nil.
//
// Only the result's columns count: the planner may append hidden sort
// columns after them (ORDER BY partition, offset, the natural order of a
// consumer read, keeps them), which the generic path cuts off too.
func directCols(n *plantree.ConsumerReadNode) []plantree.MsgCol {
	if len(n.Cols) == 0 || len(n.Cols) > len(n.Project) {
		return nil
	}
	out := make([]plantree.MsgCol, len(n.Cols))
	for i, e := range n.Project[:len(n.Cols)] {
		c, ok := e.(*plantree.ColExpr)
		if !ok {
			return nil
		}
		switch mc := plantree.MsgCol(c.Idx); mc {
		case plantree.ColPartition, plantree.ColOffset, plantree.ColSeqNo, plantree.ColProducerID,
			plantree.ColMessageGroupID, plantree.ColCodec, plantree.ColData, plantree.ColKey, plantree.ColHeaders:
			out[i] = mc
		default:
			return nil
		}
	}
	return out
}

// encodeMsg appends m's DataRow; m and its slices need only be valid
// during the call. It computes the same values as rowexec.MsgRow.Col.
func encodeMsg(enc *wire.RowEncoder, cols []plantree.MsgCol, m *topicstore.Message) error {
	enc.StartRow()
	for _, c := range cols {
		switch c {
		case plantree.ColPartition:
			enc.Int(int64(m.Partition))
		case plantree.ColOffset:
			enc.Int(m.Offset)
		case plantree.ColSeqNo:
			if m.HasSeqNo {
				enc.Int(m.SeqNo)
			} else {
				enc.Null()
			}
		case plantree.ColProducerID:
			textOrNull(enc, m.ProducerID)
		case plantree.ColMessageGroupID:
			textOrNull(enc, m.MessageGroupID)
		case plantree.ColCodec:
			enc.Text(m.Codec.String())
		case plantree.ColData:
			if m.NullBody {
				enc.Null()
				continue
			}
			if m.Codec == topicstore.CodecRaw || m.Codec == 0 {
				enc.Bytes(m.Body)
				continue
			}
			d, err := m.Decode()
			if err != nil {
				enc.Null()
				_ = enc.EndRow()
				return err
			}
			enc.Bytes(d)
		case plantree.ColKey:
			if m.Key == nil {
				enc.Null()
			} else {
				enc.Bytes(m.Key)
			}
		case plantree.ColHeaders:
			enc.Text(rowexec.HeadersJSON(m.Headers))
		default:
			return pgerror.AssertionFailed("column %d cannot be encoded directly", c)
		}
	}
	return enc.EndRow()
}

// textOrNull writes s, or NULL for the empty string (an unset id).
func textOrNull(enc *wire.RowEncoder, s string) {
	if s == "" {
		enc.Null()
	} else {
		enc.Text(s)
	}
}

// encodedIter is a result whose rows are already encoded (Encoded).
type encodedIter struct{ enc *wire.RowEncoder }

func (*encodedIter) Next(context.Context) ([]any, error) {
	return nil, pgerror.AssertionFailed("encoded rows read one by one")
}

// Encoded returns the rows of a result a read encoded as it read them
// (only when it was offered an encoder, Reader.Open's direct): the
// caller sends them in one write instead of stepping it.
func Encoded(it rowexec.Iter) (*wire.RowEncoder, bool) {
	if e, ok := it.(*encodedIter); ok {
		return e.enc, true
	}
	return nil, false
}
