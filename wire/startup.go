package wire

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
)

const (
	sslRequestCode    = 80877103
	gssEncRequestCode = 80877104
	cancelRequestCode = 80877102
	maxStartupPacket  = 10000
)

// readStartupPacket reads one length-prefixed startup packet straight from
// the socket, without read-ahead, so that nothing sent before a TLS
// handshake can be mistaken for data inside it.
func readStartupPacket(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.BigEndian.Uint32(hdr[:]))) - 4
	if n < 4 || n > maxStartupPacket {
		// PostgreSQL only logs this and closes the connection.
		return nil, errBadStartupLength
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body, nil
}

// startup runs the startup phase: SSL/GSS negotiation, CancelRequest,
// StartupMessage, authentication and session creation. It returns false
// when the connection must be closed.
func (c *conn) startup() bool {
	// Each of SSL and GSS encryption is negotiated once, as in PostgreSQL:
	// a second request is read as a startup packet of protocol 1234.5679
	// (or .5680) and refused.
	sslDone, gssDone := false, false
	var body []byte
	for {
		var err error
		body, err = readStartupPacket(c.nc)
		if err != nil {
			if _, ok := err.(*protoError); ok {
				c.sendErrorSeverity("FATAL", err)
			}
			return false
		}
		code := binary.BigEndian.Uint32(body)
		switch {
		case code == sslRequestCode && len(body) == 4 && !sslDone:
			sslDone = true
			if c.s.tlsConf == nil {
				if _, err := c.nc.Write([]byte{'N'}); err != nil {
					return false
				}
				continue
			}
			if _, err := c.nc.Write([]byte{'S'}); err != nil {
				return false
			}
			tc := tls.Server(c.nc, c.s.tlsConf)
			if err := tc.Handshake(); err != nil {
				c.s.log.Debug("wire: TLS handshake failed", "remote", c.nc.RemoteAddr().String(), "err", err)
				return false
			}
			c.nc = tc
			c.bw.Reset(barrierWriter{c})
			continue
		case code == gssEncRequestCode && len(body) == 4 && !gssDone:
			gssDone = true
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return false
			}
			continue
		case code == cancelRequestCode:
			var cr pgproto3.CancelRequest
			if cr.Decode(body) == nil {
				c.s.cancelRequest(cr.ProcessID, cr.SecretKey)
			}
			return false
		}
		break
	}
	version := binary.BigEndian.Uint32(body)
	if version>>16 != 3 {
		msg := fmt.Sprintf("unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", version>>16, version&0xffff)
		if version>>16 < 3 {
			// PostgreSQL answers an older client in its own protocol: 'E'
			// and the text, NUL-terminated, with no length word.
			_, _ = c.bw.WriteString("EFATAL:  " + msg + "\n\x00")
			return false
		}
		c.sendErrorSeverity("FATAL", newError("0A000", msg))
		return false
	}
	params, keys, err := parseStartupParams(body[4:])
	if err != nil {
		c.sendErrorSeverity("FATAL", err)
		return false
	}
	var unknownOpts []string // in the client's order, as PostgreSQL lists them
	for _, k := range keys {
		if strings.HasPrefix(k, "_pq_.") {
			unknownOpts = append(unknownOpts, k)
			delete(params, k)
		}
	}
	if version&0xffff != 0 || len(unknownOpts) > 0 {
		// PostgreSQL 15 puts its whole newest version (3.0 = 196608) in
		// the field the protocol calls the newest minor version.
		c.send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 3 << 16, UnrecognizedOptions: unknownOpts})
	}
	user := params["user"]
	db := params["database"]
	if db == "" {
		db = user
	}
	if user == "" {
		c.refuseLogin(user, db, newError("28000", "no PostgreSQL user name specified in startup packet"))
		return false
	}
	c.be = pgproto3.NewBackend(connReader{c}, c.bw)
	c.be.SetMaxBodyLen(c.s.cfg.MaxMessageSize)
	if err := c.authenticate(user); err != nil {
		if e, refused := err.(*protoError); refused {
			c.refuseLogin(user, db, e)
		}
		return false
	}
	if err := c.s.register(c); err != nil {
		c.refuseLogin(user, db, newError("57P01", "terminating connection due to administrator command"))
		return false
	}
	c.info = SessionInfo{User: user, Database: db, Params: params, RemoteAddr: c.nc.RemoteAddr().String(), ProcessID: c.pid}
	ctx, done := c.runCtx()
	err = c.call(func() error {
		var err error
		c.sess, err = c.s.h.NewSession(ctx, c.info)
		return err
	})
	done()
	if err == nil && c.sess == nil {
		err = newError("XX000", "internal error: handler returned no session")
	}
	if err != nil {
		c.sess = nil
		c.refuseLogin(user, db, err)
		return false
	}
	if pu, ok := c.sess.(PortalUser); ok {
		_ = c.call(func() error { pu.UsePortals(c.boundPortal); return nil })
	}
	c.tellAuth(AuthEvent{User: user, Database: db, ProcessID: c.pid})
	c.send(&pgproto3.AuthenticationOk{})
	for _, kv := range c.parameterStatus() {
		c.send(&pgproto3.ParameterStatus{Name: kv[0], Value: kv[1]})
	}
	c.send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: c.secret[:]})
	c.readyForQuery()
	return !c.fatal
}

// refuseLogin tells Config.OnAuth, then sends err as the FATAL error that
// ends the login.
func (c *conn) refuseLogin(user, db string, err error) {
	c.tellAuth(AuthEvent{User: user, Database: db, Code: toErrorResponse(err).Code})
	c.sendErrorSeverity("FATAL", err)
}

// tellAuth tells Config.OnAuth of a login's outcome.
func (c *conn) tellAuth(ev AuthEvent) {
	if c.s.cfg.OnAuth != nil {
		ev.Remote = c.nc.RemoteAddr().String()
		c.s.cfg.OnAuth(ev)
	}
}

// errBadStartupLength is a startup packet length out of range.
var errBadStartupLength = errors.New("invalid length of startup packet")

// parseStartupParams returns the parameters and their names in the order
// sent.
func parseStartupParams(b []byte) (map[string]string, []string, error) {
	params := map[string]string{}
	var keys []string
	for len(b) > 0 && b[0] != 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			break
		}
		k := string(b[:i])
		b = b[i+1:]
		j := bytes.IndexByte(b, 0)
		if j < 0 {
			return nil, nil, newError("08P01", "invalid startup packet layout: expected terminator as last byte")
		}
		if _, dup := params[k]; !dup {
			keys = append(keys, k)
		}
		params[k] = string(b[:j])
		b = b[j+1:]
	}
	if len(b) != 1 || b[0] != 0 {
		return nil, nil, newError("08P01", "invalid startup packet layout: expected terminator as last byte")
	}
	return params, keys, nil
}

// parameterStatus merges defaults that clients rely on with the session's
// values, sorted by name.
func (c *conn) parameterStatus() [][2]string {
	m := map[string]string{
		"server_version":                "15.4",
		"server_encoding":               "UTF8",
		"client_encoding":               "UTF8",
		"DateStyle":                     "ISO, MDY",
		"IntervalStyle":                 "postgres",
		"TimeZone":                      "UTC",
		"integer_datetimes":             "on",
		"standard_conforming_strings":   "on",
		"is_superuser":                  "on",
		"session_authorization":         c.info.User,
		"application_name":              c.info.Params["application_name"],
		"default_transaction_read_only": "off",
		"in_hot_standby":                "off",
	}
	for k, v := range c.info.Params {
		if strings.EqualFold(k, "TimeZone") && v != "" {
			m["TimeZone"] = v
		}
	}
	_ = c.call(func() error {
		for k, v := range c.sess.ParameterStatus() {
			m[k] = v
		}
		return nil
	})
	out := make([][2]string, 0, len(m))
	for k, v := range m {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}
