package wire

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
)

// simpleQuery runs a Query message: every statement in turn, stopping at
// the first error, then Session.Sync and one ReadyForQuery.
func (c *conn) simpleQuery(q string) {
	// A simple query destroys the unnamed statement and portal.
	delete(c.stmts, "")
	if p := c.portals[""]; p != nil {
		c.closePortal(p)
		delete(c.portals, "")
	}
	ctx, done := c.stmtCtx()
	defer done()
	var stmts []Statement
	err := checkUTF8(q)
	if err == nil {
		err = c.call(func() error {
			var err error
			stmts, err = c.sess.Parse(ctx, q, nil)
			return err
		})
	}
	switch {
	case err != nil:
		c.sendError(err)
	case len(stmts) == 0:
		c.send(&pgproto3.EmptyQueryResponse{})
	}
	for _, st := range stmts {
		if err != nil || c.fatal {
			break
		}
		err = c.runSimple(ctx, st)
		if err != nil {
			c.sendError(err)
		}
	}
	if c.fatal {
		return
	}
	c.out.reset(nil, nil)
	if err := c.call(func() error { return c.sess.Sync(ctx, &c.out) }); err != nil {
		c.sendError(err)
	}
	c.readyForQuery()
}

func (c *conn) runSimple(ctx context.Context, st Statement) error {
	var p Portal
	err := c.call(func() error {
		if n := len(st.ParamTypes()); n > 0 {
			return newError("42P02", fmt.Sprintf("there is no parameter $%d", n))
		}
		var err error
		p, err = st.Bind(ctx, nil)
		return err
	})
	if err != nil {
		return err
	}
	defer c.call(func() error { p.Close(); return nil })
	var cols []Column
	if err := c.call(func() error { cols = p.Columns(); return nil }); err != nil {
		return err
	}
	c.out.reset(cols, nil)
	if cols != nil {
		// Sent with the first row or the CommandComplete: an error before
		// any row (PostgreSQL finds those while planning, before its
		// RowDescription) comes without one.
		c.out.desc = rowDescription(cols, nil)
	}
	var tag string
	err = c.call(func() error {
		var err error
		tag, _, err = p.Execute(ctx, &c.out, 0)
		return err
	})
	c.drainCopy()
	if err != nil {
		c.out.desc = nil
		if c.copyLost(err) {
			return nil
		}
		return err
	}
	c.out.sendDesc()
	c.sendComplete(tag)
	return nil
}
