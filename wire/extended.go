package wire

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"topicgate/wire/pgvalue"
)

// prepared is a named or unnamed prepared statement. stmt is nil for an
// empty query.
type prepared struct {
	stmt   Statement
	params []uint32
	cols   []Column
}

// portal is a bound statement. p is nil for an empty query.
type portal struct {
	p       Portal
	cols    []Column
	formats []int16 // in fmtBuf when they fit
	fmtBuf  [4]int16
	done    bool
	tag     string
}

// boundPortal finds a portal the connection bound (PortalUser's lookup).
func (c *conn) boundPortal(name string) (Portal, bool) {
	pt := c.portals[name]
	if pt == nil || pt.p == nil || name == "" {
		return nil, false
	}
	return pt.p, true
}

// portal finds a portal the connection bound, else the session's cursor
// of that name (CursorPortals); nil if neither exists.
func (c *conn) portal(name string) *portal {
	if pt := c.portals[name]; pt != nil {
		return pt
	}
	cp, ok := c.sess.(CursorPortals)
	if !ok || name == "" {
		return nil
	}
	var p Portal
	var found bool
	_ = c.call(func() error { p, found = cp.CursorPortal(name); return nil })
	if !found {
		return nil
	}
	var cols []Column
	_ = c.call(func() error { cols = p.Columns(); return nil })
	return &portal{p: p, cols: cols}
}

func (c *conn) closePortal(p *portal) {
	if p.p != nil {
		_ = c.call(func() error { p.p.Close(); return nil })
	}
}

func (c *conn) parse(m *pgproto3.Parse) error {
	if m.Name != "" && c.stmts[m.Name] != nil {
		return newError("42P05", fmt.Sprintf("prepared statement %q already exists", m.Name))
	}
	if err := checkUTF8(m.Query); err != nil {
		return err
	}
	oids := append([]uint32(nil), m.ParameterOIDs...)
	ctx, done := c.runCtx()
	defer done()
	ps := &prepared{}
	err := c.call(func() error {
		stmts, err := c.sess.Parse(ctx, m.Query, oids)
		if err != nil {
			return err
		}
		if len(stmts) > 1 {
			return newError("42601", "cannot insert multiple commands into a prepared statement")
		}
		if len(stmts) == 1 {
			ps.stmt = stmts[0]
			ps.params = append([]uint32(nil), ps.stmt.ParamTypes()...)
			ps.cols = ps.stmt.Columns()
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.stmts[m.Name] = ps
	c.send(&pgproto3.ParseComplete{})
	return nil
}

// formatCodes expands Bind format codes to one per value (nil = all text)
// into dst (overwritten; grown if short), checking them as PostgreSQL
// does: first their number (one for all, or
// one each), then, for parameters, each code applied (22023 but 0 or 1;
// a code that applies to no parameter is not looked at). Result format
// codes are checked at Execute, where PostgreSQL checks them.
func formatCodes(dst, codes []int16, n int, what string) ([]int16, error) {
	if len(codes) > 1 && len(codes) != n {
		if what == "result" {
			return nil, newError("08P01", fmt.Sprintf("bind message has %d result formats but query has %d columns", len(codes), n))
		}
		return nil, newError("08P01", fmt.Sprintf("bind message has %d parameter formats but %d parameters", len(codes), n))
	}
	var out []int16
	switch {
	case len(codes) == 0:
		return nil, nil
	case len(codes) == 1:
		out = slices.Grow(dst[:0], n)[:n]
		for i := range out {
			out[i] = codes[0]
		}
	default:
		out = append(dst[:0], codes...)
	}
	if what == "parameter" {
		for _, f := range out {
			if f != 0 && f != 1 {
				return nil, newError("22023", fmt.Sprintf("unsupported format code: %d", f))
			}
		}
	}
	return out, nil
}

func (c *conn) bind(m *pgproto3.Bind) error {
	ps := c.stmts[m.PreparedStatement]
	if ps == nil {
		return noStatement(m.PreparedStatement)
	}
	if m.DestinationPortal != "" && c.portals[m.DestinationPortal] != nil {
		return newError("42P03", fmt.Sprintf("cursor %q already exists", m.DestinationPortal))
	}
	if len(m.Parameters) != len(ps.params) {
		return newError("08P01", fmt.Sprintf("bind message supplies %d parameters, but prepared statement %q requires %d", len(m.Parameters), m.PreparedStatement, len(ps.params)))
	}
	pf, err := formatCodes(c.paramFmts, m.ParameterFormatCodes, len(m.Parameters), "parameter")
	if cap(pf) > cap(c.paramFmts) {
		c.paramFmts = pf[:0] // used during this Bind only: kept for the next
	}
	if err != nil {
		return err
	}
	params := make([]any, len(m.Parameters))
	// Binary bytea values (message bodies) become slices of one copy of
	// their bytes rather than a copy each: a 100-row INSERT binds 100.
	total, nb := 0, 0
	for i, raw := range m.Parameters {
		if pf != nil && pf[i] == 1 && ps.params[i] == OIDBytea {
			total += len(raw)
			nb++
		}
	}
	bodies := make([]byte, 0, total)
	hdrs := make([][]byte, 0, nb) // never grown: anyBytes points into it
	for i, raw := range m.Parameters {
		var f int16
		if pf != nil {
			f = pf[i]
		}
		if f == 1 && ps.params[i] == OIDBytea && raw != nil {
			at := len(bodies)
			bodies = append(bodies, raw...)
			hdrs = append(hdrs, bodies[at:len(bodies):len(bodies)])
			params[i] = anyBytes(&hdrs[len(hdrs)-1])
			continue
		}
		if params[i], err = pgvalue.DecodeParam(i+1, ps.params[i], f, raw); err != nil {
			if e, ok := err.(*pgvalue.Error); ok && e.Where == "" {
				e.Where = paramWhere(m.DestinationPortal, i+1, f)
			}
			return err
		}
	}
	if old := c.portals[m.DestinationPortal]; old != nil {
		c.closePortal(old)
		delete(c.portals, m.DestinationPortal)
	}
	pt := &portal{}
	if ps.stmt != nil {
		ctx, done := c.runCtx()
		err = c.call(func() error {
			var err error
			if pt.p, err = ps.stmt.Bind(ctx, params); err != nil {
				return err
			}
			pt.cols = pt.p.Columns()
			return nil
		})
		done()
		if err != nil {
			if pt.p != nil {
				c.closePortal(pt)
			}
			return err
		}
	}
	if pt.formats, err = formatCodes(pt.fmtBuf[:0], m.ResultFormatCodes, len(pt.cols), "result"); err != nil {
		c.closePortal(pt)
		return err
	}
	for i, f := range pt.formats {
		if f == 1 && !pgvalue.CanBinary(pt.cols[i].TypeOID) {
			c.closePortal(pt)
			return newError("42883", fmt.Sprintf("no binary output function available for type OID %d", pt.cols[i].TypeOID))
		}
	}
	c.portals[m.DestinationPortal] = pt
	c.send(&pgproto3.BindComplete{})
	return nil
}

// noStatement is PostgreSQL's error for a statement name not in use.
func noStatement(name string) error {
	if name == "" {
		return newError("26000", "unnamed prepared statement does not exist")
	}
	return newError("26000", fmt.Sprintf("prepared statement %q does not exist", name))
}

func (c *conn) describe(m *pgproto3.Describe) error {
	switch m.ObjectType {
	case 'S':
		ps := c.stmts[m.Name]
		if ps == nil {
			return noStatement(m.Name)
		}
		c.send(&pgproto3.ParameterDescription{ParameterOIDs: ps.params})
		if ps.cols == nil {
			c.send(&pgproto3.NoData{})
		} else {
			c.send(rowDescription(ps.cols, nil))
		}
	case 'P':
		pt := c.portal(m.Name)
		if pt == nil {
			return newError("34000", fmt.Sprintf("portal %q does not exist", m.Name))
		}
		if pt.cols == nil {
			c.send(&pgproto3.NoData{})
		} else {
			c.send(rowDescription(pt.cols, pt.formats))
		}
	default:
		return newError("08P01", fmt.Sprintf("invalid DESCRIBE message subtype %d", m.ObjectType))
	}
	return nil
}

func (c *conn) execute(m *pgproto3.Execute) error {
	pt := c.portal(m.Portal)
	if pt == nil {
		return newError("34000", fmt.Sprintf("portal %q does not exist", m.Portal))
	}
	if pt.p == nil {
		c.send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	for _, f := range pt.formats {
		if f != 0 && f != 1 {
			return newError("22023", fmt.Sprintf("unsupported format code: %d", f))
		}
	}
	if pt.done {
		// PostgreSQL runs a finished portal with rows again and finds no
		// more; one without rows (SET, INSERT) cannot run twice.
		if pt.cols == nil {
			return newError("55000", fmt.Sprintf("portal %q cannot be run", m.Portal))
		}
		tag := pt.tag
		if strings.HasPrefix(tag, "SELECT ") {
			tag = "SELECT 0"
		}
		c.sendComplete(tag)
		return nil
	}
	if pl, ok := c.sess.(Pipeliner); ok {
		_ = c.call(func() error { pl.Pipelined(); return nil })
	}
	c.out.reset(pt.cols, pt.formats)
	ctx, done := c.stmtCtx()
	var tag string
	var finished bool
	err := c.call(func() error {
		var err error
		tag, finished, err = pt.p.Execute(ctx, &c.out, int(m.MaxRows))
		return err
	})
	done()
	c.drainCopy()
	if err != nil {
		if c.copyLost(err) {
			return nil
		}
		return err
	}
	if !finished && m.MaxRows > 0 {
		c.send(&pgproto3.PortalSuspended{})
		return nil
	}
	pt.done, pt.tag = true, tag
	if tag == TagDeferred {
		c.deferred = true
		return nil
	}
	c.sendComplete(tag)
	return nil
}

func (c *conn) closeMsg(m *pgproto3.Close) error {
	switch m.ObjectType {
	case 'S':
		delete(c.stmts, m.Name)
	case 'P':
		if pt := c.portals[m.Name]; pt != nil {
			c.closePortal(pt)
			delete(c.portals, m.Name)
		}
	default:
		return newError("08P01", fmt.Sprintf("invalid CLOSE message subtype %d", m.ObjectType))
	}
	c.send(&pgproto3.CloseComplete{})
	return nil
}

// rowDescription builds a RowDescription; formats nil means all text.
func rowDescription(cols []Column, formats []int16) *pgproto3.RowDescription {
	fields := make([]pgproto3.FieldDescription, len(cols))
	for i, col := range cols {
		size, mod := col.TypeSize, col.TypeMod
		if size == 0 {
			size = typeSize(col.TypeOID)
		}
		if mod == 0 {
			mod = -1
		}
		var f int16
		if formats != nil {
			f = formats[i]
		}
		fields[i] = pgproto3.FieldDescription{Name: []byte(col.Name), DataTypeOID: col.TypeOID, DataTypeSize: size, TypeModifier: mod, Format: f}
	}
	return &pgproto3.RowDescription{Fields: fields}
}

func typeSize(oid uint32) int16 {
	switch oid {
	case OIDBool, OIDChar:
		return 1
	case OIDInt2:
		return 2
	case OIDInt4, OIDFloat4, OIDOid, OIDDate:
		return 4
	case OIDInt8, OIDFloat8, OIDTimestamp, OIDTimestamptz:
		return 8
	case OIDInterval, OIDUUID:
		return 16
	case OIDName:
		return 64
	}
	return -1
}

// paramWhere is the context PostgreSQL gives an error in Bind parameter n
// of portal: its value only in text format, and shown as '...' (the
// default log_parameter_max_length_on_error, 0, shows none of it).
func paramWhere(portal string, n int, format int16) string {
	w := "unnamed portal parameter $" + strconv.Itoa(n)
	if portal != "" {
		w = fmt.Sprintf("portal %q parameter $%d", portal, n)
	}
	if format == 0 {
		w += " = '...'"
	}
	return w
}
