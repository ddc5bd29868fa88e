package wire

import (
	"github.com/jackc/pgx/v5/pgproto3"
)

// resolveDeferred completes the Execute whose CommandComplete waited for
// the client's next message (Pipeliner), before msg is handled: with Sync
// the statement commits on its own, with anything else it joins the
// implicit transaction that the following statements run in. It returns
// false when the connection must end without handling msg (Terminate: the
// deferred statement is dropped uncommitted, as PostgreSQL aborts an
// implicit transaction the client left before Sync). A failure is reported
// as the statement's error; msg is then discarded like everything else up
// to Sync, and a Sync is handled as usual.
func (c *conn) resolveDeferred(msg pgproto3.FrontendMessage) bool {
	c.deferred = false
	var atSync bool
	switch msg.(type) {
	case *pgproto3.Terminate:
		return false
	case *pgproto3.Sync:
		atSync = true
	}
	pl, ok := c.sess.(Pipeliner)
	if !ok {
		return true
	}
	var tag string
	c.out.reset(nil, nil)
	ctx, done := c.stmtCtx()
	err := c.call(func() error {
		var err error
		tag, err = pl.DeferredTag(ctx, &c.out, atSync)
		return err
	})
	done()
	if err != nil {
		c.sendError(err)
		if !atSync {
			c.ignoreTillSync = true
		}
		return true
	}
	c.sendComplete(tag)
	return true
}
