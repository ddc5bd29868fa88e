package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/acl"
	"topicgate/authz"
	"topicgate/internal/scram"
	"topicgate/sql/pgerror"
)

// SASL mechanisms the door offers.
const (
	mechPlain = "PLAIN"
	mechSCRAM = scram.Mechanism
)

// mechanisms is what SaslHandshake lists.
var mechanisms = []string{mechPlain, mechSCRAM}

// authFailedMessage is every failed authentication's message: it says
// nothing of whether the role exists, may log in or gave a wrong
// password (the audit log does).
const authFailedMessage = "Authentication failed: invalid credentials"

// dummyVerifier is a SCRAM verifier of no role, which PLAIN checks a
// password against when the role has none, so that the check takes
// as long as for a wrong password.
var dummyVerifier = sync.OnceValue(func() string {
	v, _ := acl.SCRAMVerifier("no role has this password")
	return v
})

// maxRawToken bounds a SASL token sent after a SaslHandshake v0.
const maxRawToken = 64 << 10

// AuthEvent is one SASL authentication's outcome (Config.OnAuth).
type AuthEvent struct {
	User, Remote, Mechanism string
	// Code is "" when the client authenticated, else the SQLSTATE a
	// PostgreSQL login would have failed with (28P01 a wrong password
	// or unknown role, 28000 a role without LOGIN, 53300 its
	// CONNECTION LIMIT reached, 08P01 a malformed message).
	Code string
}

// saslState is a connection's SASL exchange after its SaslHandshake.
type saslState struct {
	mech string
	// raw: the handshake was v0, the tokens come as bare size-prefixed
	// frames instead of SaslAuthenticate requests.
	raw bool
	// x is a SCRAM exchange past its client-first message; known
	// whether its user has a SCRAM verifier.
	x     *scram.Exchange
	user  string
	known bool
}

// authFailure is an exchange that failed: msg is what the client is
// told, code the SQLSTATE the audit log records.
type authFailure struct {
	user, code, msg string
}

func (e *authFailure) Error() string { return e.msg }

// needsAuth reports whether c may not yet send anything but ApiVersions
// and the SASL APIs.
func (c *conn) needsAuth() bool {
	return c.s.cfg.RequireSASL && !c.authed
}

// saslHandshake answers SaslHandshake: it starts an exchange of an
// offered mechanism (raw tokens next after v0).
func (c *conn) saslHandshake(req *kmsg.SASLHandshakeRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.SupportedMechanisms = append([]string(nil), mechanisms...)
	switch {
	case c.authed || c.sasl != nil:
		resp.ErrorCode = kerr.IllegalSaslState.Code
	case req.Mechanism != mechPlain && req.Mechanism != mechSCRAM:
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
	default:
		c.sasl = &saslState{mech: req.Mechanism, raw: req.Version == 0}
	}
	return resp
}

// saslAuthenticate answers SaslAuthenticate with the exchange's next
// step. A failure answers SASL_AUTHENTICATION_FAILED and then closes the
// connection, as Kafka's broker does.
func (c *conn) saslAuthenticate(req *kmsg.SASLAuthenticateRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	if c.sasl == nil || c.sasl.raw {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		msg := "SaslAuthenticate before a SaslHandshake v1"
		resp.ErrorMessage = &msg
		c.closeAfter = true
		return resp
	}
	out, err := c.saslStep(req.SASLAuthBytes)
	if err != nil {
		msg := err.Error()
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		resp.ErrorMessage = &msg
		c.closeAfter = true
		return resp
	}
	resp.SASLAuthBytes = out
	return resp
}

// rawSASL answers a raw token of a SaslHandshake v0 exchange (in c.in)
// with a raw token; an error closes the connection (Kafka's broker
// answers nothing then).
func (c *conn) rawSASL() ([]byte, error) {
	out, err := c.saslStep(c.in)
	if err != nil {
		return nil, err
	}
	return append(binary.BigEndian.AppendUint32(c.out[:0], uint32(len(out))), out...), nil
}

// serveRaw reads and answers one raw token of a SaslHandshake v0
// exchange; false closes the connection.
func (c *conn) serveRaw() bool {
	var err error
	if c.in, err = readRawToken(c.nc, c.in); err != nil {
		return false
	}
	if c.out, err = c.rawSASL(); err != nil {
		c.s.log.Debug("kafka: SASL authentication failed", "remote", c.nc.RemoteAddr(), "err", err)
		return false
	}
	_, err = c.nc.Write(c.out)
	return err == nil
}

// saslAPI reports whether key may be sent before authentication.
func saslAPI(key int16) bool {
	return key == apiVersionsKey || key == saslHandshakeKey || key == saslAuthenticateKey
}

// readRawToken reads one size-prefixed raw SASL token.
func readRawToken(r io.Reader, buf []byte) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return buf, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > maxRawToken {
		return buf, fmt.Errorf("%w: SASL token of %d bytes (limit %d)", errFrameSize, n, maxRawToken)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	_, err := io.ReadFull(r, buf)
	return buf, err
}

// saslStep takes the exchange one step with the client's token and
// returns the server's; once the exchange succeeded the connection acts
// as its role. Every failure is audited and ends the exchange.
func (c *conn) saslStep(token []byte) ([]byte, error) {
	st := c.sasl
	var out []byte
	var user string
	var done bool
	var err error
	switch st.mech {
	case mechPlain:
		user, err = c.plain(token)
		done = true
	default:
		user, out, done, err = c.scramStep(st, token)
	}
	if err == nil && done {
		err = c.admit(user)
	}
	if err != nil {
		c.sasl = nil
		var f *authFailure
		if !errors.As(err, &f) {
			f = &authFailure{user: user, code: pgerror.CodeInvalidPassword, msg: authFailedMessage}
		}
		c.audit(f.user, st.mech, f.code)
		return nil, f
	}
	if done {
		c.sasl = nil
		c.audit(user, st.mech, "")
	}
	return out, nil
}

// plain checks a PLAIN message ([authzid] NUL authcid NUL passwd, RFC
// 4616) against the role's stored verifier and returns the role.
func (c *conn) plain(token []byte) (string, error) {
	authzID, user, password, err := parsePlain(token)
	if err != nil {
		return "", &authFailure{code: pgerror.CodeProtocolViolation, msg: "malformed PLAIN message: " + err.Error()}
	}
	if authzID != "" && authzID != user {
		return user, &authFailure{user: user, code: pgerror.CodeInvalidAuthorization,
			msg: "PLAIN: an authorization identity other than the user is not supported"}
	}
	v, ok := c.verifier(user)
	if !ok {
		// As long as a wrong password takes: the time of the answer
		// does not tell that the role does not exist.
		v = dummyVerifier()
	}
	if !acl.CheckPassword(user, password, v) || !ok {
		return user, &authFailure{user: user, code: pgerror.CodeInvalidPassword, msg: authFailedMessage}
	}
	return user, nil
}

// parsePlain splits a PLAIN message into its three fields.
func parsePlain(token []byte) (authzID, user, password string, err error) {
	parts := bytes.Split(token, []byte{0})
	if len(parts) != 3 {
		return "", "", "", errors.New("expected three NUL-separated fields")
	}
	if len(parts[1]) == 0 {
		return "", "", "", errors.New("empty user name")
	}
	return string(parts[0]), string(parts[1]), string(parts[2]), nil
}

// scramStep runs a SCRAM-SHA-256 exchange: the client-first message,
// then the client-final one.
func (c *conn) scramStep(st *saslState, token []byte) (user string, out []byte, done bool, err error) {
	if st.x == nil {
		first, err := scram.ParseClientFirst(token)
		if err != nil {
			return "", nil, false, &authFailure{code: pgerror.CodeProtocolViolation, msg: err.Error()}
		}
		st.user = first.User
		secret := scram.Mock()
		if v, ok := c.verifier(first.User); ok {
			if s, ok := acl.ParseSCRAM(v); ok {
				secret = &scram.Secret{Iterations: s.Iterations, Salt: s.Salt, StoredKey: s.StoredKey, ServerKey: s.ServerKey}
				st.known = true
			}
		}
		x, serverFirst, err := scram.Start(first, secret)
		if err != nil {
			return st.user, nil, false, err
		}
		x.RepeatedNonce = true // librdkafka's client-final message
		st.x = x
		return st.user, []byte(serverFirst), false, nil
	}
	serverFinal, ok, err := st.x.Finish(token)
	if err != nil {
		return st.user, nil, false, &authFailure{user: st.user, code: pgerror.CodeProtocolViolation, msg: err.Error()}
	}
	if !ok || !st.known {
		return st.user, nil, false, &authFailure{user: st.user, code: pgerror.CodeInvalidPassword, msg: authFailedMessage}
	}
	return st.user, []byte(serverFinal), true, nil
}

// verifier is user's stored password verifier, false when the role does
// not exist, has none or its VALID UNTIL has passed.
func (c *conn) verifier(user string) (string, bool) {
	if c.s.cfg.Auth == nil {
		return "", false
	}
	return c.s.cfg.Auth.Verifier(user)
}

// admit makes the connection act as user, whose password checked out:
// authz's login checks (LOGIN, CONNECTION LIMIT) as for a PostgreSQL
// login. A refusal is told to the client as a wrong password.
func (c *conn) admit(user string) error {
	if c.s.cfg.Auth == nil {
		return &authFailure{user: user, code: pgerror.CodeInvalidPassword, msg: authFailedMessage}
	}
	id, release, err := c.s.cfg.Auth.Admit(user)
	if err != nil {
		code := pgerror.Code(err)
		if code == "" {
			return err
		}
		return &authFailure{user: user, code: code, msg: authFailedMessage}
	}
	c.setIdentity(id, release)
	c.authed = true
	return nil
}

// setIdentity makes the connection act as id, ending its previous
// identity's session.
func (c *conn) setIdentity(id *authz.Identity, release func()) {
	if c.release != nil {
		c.release()
	}
	c.id, c.release = id, release
	if c.info != nil && id != nil {
		user := id.Session
		c.info.user.Store(&user)
	}
}

// audit tells Config.OnAuth of an authentication's outcome.
func (c *conn) audit(user, mech, code string) {
	if c.s.cfg.OnAuth != nil {
		c.s.cfg.OnAuth(AuthEvent{User: user, Remote: c.nc.RemoteAddr().String(), Mechanism: mech, Code: code})
	}
}
