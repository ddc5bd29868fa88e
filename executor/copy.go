package executor

import (
	"context"

	"topicgate/copyio"
	"topicgate/planner/plantree"
	"topicgate/rowexec"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
	"topicgate/txn"
	"topicgate/wire"
)

// execCopy runs COPY topic FROM STDIN through the write route
// (insert.go). A COPY is all or nothing: in autocommit it runs as one
// transaction of its own, and inside a block it stages into the block.
// Rows are handed to the transaction in slices of copySlice bytes, so a
// huge COPY spills to the store instead of being held in memory; the
// transaction's size limit applies (54000 beyond it).
func (s *Session) execCopy(ctx context.Context, p *plantree.CopyPlan, out wire.Output) (int, error) {
	return s.inWriteTxn(ctx, out, func(tx *txn.Txn, _ bool) (int, error) { return s.copyIn(ctx, tx, p, out) })
}

// copyIn reads COPY's data (copyio.Decoder, in the session's DateStyle
// order) and stages its messages in tx, slice by slice.
func (s *Session) copyIn(ctx context.Context, tx *txn.Txn, p *plantree.CopyPlan, out wire.Output) (int, error) {
	cr, err := out.CopyIn(copyio.FormatCode(p.Opts.Format), len(p.Cols))
	if err != nil {
		return 0, err
	}
	d := copyio.NewDecoder(cr, p, s.settings.DateStyle().Order)
	b := &msgBuilder{topic: p.Topic, cols: p.Cols, now: s.eng.opts.Clock().UTC()}
	var msgs []topicstore.Message // the slice being collected; the transaction owns each staged one
	var size int64
	total := 0
	flush := func() error {
		n, err := s.stage(tx, p.Topic, msgs, false)
		total += n
		// The next slice is made when a row comes for it: a COPY's
		// last flush made one (1024 messages, 240 KiB zeroed) that
		// was never used, 3% of the server's CPU under ingest-copy.
		msgs, size = nil, 0
		return err
	}
	add := func(vals []any) error {
		if msgs == nil {
			msgs = make([]topicstore.Message, 0, 1024)
		}
		msgs = append(msgs, topicstore.Message{})
		if err := b.build(&msgs[len(msgs)-1], vals, nil); err != nil {
			return d.Wrap(err)
		}
		size += int64(msgs[len(msgs)-1].Size()) + 64
		if size >= copySlice {
			return flush()
		}
		return nil
	}
	if err := d.Decode(add); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
	}
	if err := flush(); err != nil {
		return 0, err
	}
	return total, nil
}

// copySlice is how many bytes of rows a COPY collects before staging them.
const copySlice = 4 << 20

// execCopyOut runs COPY ... TO STDOUT: the rows of the plan's query, one
// CopyData message per row, in PostgreSQL's text, csv or binary COPY
// format. Values have the representations a DataRow gives them
// (wire.AppendValue). A consumer read in the query moves the consumer's
// position as the same SELECT would: in autocommit once the last row was
// flushed to the client (the portal's consume.Delivery).
func (s *Session) execCopyOut(ctx context.Context, ec *rowexec.EvalCtx, p *plantree.CopyOutPlan, out wire.Output) (int64, error) {
	it, err := rowexec.Run(ctx, ec, p.Select, nil)
	if err != nil {
		return 0, err
	}
	cols := wireColumns(p.Select.Cols)
	f := copyio.NewEncoder(p, cols)
	w, err := out.CopyOut(f.Code(), len(cols))
	if err != nil {
		return 0, err
	}
	var buf []byte
	if buf = f.Header(buf[:0]); len(buf) > 0 {
		if err := w.Write(buf); err != nil {
			return 0, err
		}
	}
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
		}
		r, err := it.Next(ctx)
		if err != nil {
			return n, err
		}
		if r == nil {
			break
		}
		r = r[:len(cols)] // hidden sort columns
		presentRow(r, cols, s.settings)
		if buf, err = f.Row(buf[:0], r); err != nil {
			return n, err
		}
		if err := w.Write(buf); err != nil {
			return n, err
		}
		n++
	}
	if buf = f.Trailer(buf[:0]); len(buf) > 0 {
		if err := w.Write(buf); err != nil {
			return n, err
		}
	}
	return n, w.Done()
}
