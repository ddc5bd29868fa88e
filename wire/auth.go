package wire

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
)

// authenticate runs the configured authentication exchange. On failure it
// has already queued the FATAL ErrorResponse.
func (c *conn) authenticate(user string) bool {
	var ok bool
	var err error
	switch c.s.cfg.Auth {
	case "trust":
		return true
	case "password":
		ok, err = c.authCleartext(user)
	case "md5":
		ok, err = c.authMD5(user)
	case "scram-sha-256":
		ok, err = c.authSCRAM(user)
	}
	if err != nil {
		if e, isWire := err.(*protoError); isWire {
			c.sendErrorSeverity("FATAL", e)
		}
		return false
	}
	if !ok {
		c.sendErrorSeverity("FATAL", authFailed(user))
		return false
	}
	return true
}

func authFailed(user string) *protoError {
	return newError("28P01", fmt.Sprintf("password authentication failed for user %q", user))
}

// receivePassword flushes the challenge and reads the client's 'p' message.
func (c *conn) receivePassword(authType uint32) (pgproto3.FrontendMessage, error) {
	if err := c.bw.Flush(); err != nil {
		return nil, err
	}
	if err := c.be.SetAuthType(authType); err != nil {
		return nil, err
	}
	msg, err := c.be.Receive()
	if err != nil {
		if c.readErr != nil {
			return nil, err
		}
		return nil, newError("08P01", "invalid authentication message: "+err.Error())
	}
	return msg, nil
}

func (c *conn) authCleartext(user string) (bool, error) {
	c.send(&pgproto3.AuthenticationCleartextPassword{})
	msg, err := c.receivePassword(pgproto3.AuthTypeCleartextPassword)
	if err != nil {
		return false, err
	}
	pm, ok := msg.(*pgproto3.PasswordMessage)
	if !ok {
		return false, newError("08P01", fmt.Sprintf("expected password response, got message type %d", msgType(msg)))
	}
	want, known := c.s.cfg.Users[user]
	match := subtle.ConstantTimeCompare([]byte(pm.Password), []byte(want)) == 1
	return known && match, nil
}

func (c *conn) authMD5(user string) (bool, error) {
	var salt [4]byte
	if _, err := rand.Read(salt[:]); err != nil {
		return false, err
	}
	c.send(&pgproto3.AuthenticationMD5Password{Salt: salt})
	msg, err := c.receivePassword(pgproto3.AuthTypeMD5Password)
	if err != nil {
		return false, err
	}
	pm, ok := msg.(*pgproto3.PasswordMessage)
	if !ok {
		return false, newError("08P01", fmt.Sprintf("expected password response, got message type %d", msgType(msg)))
	}
	want, known := c.s.cfg.Users[user]
	expected := md5Password(user, want, salt)
	match := subtle.ConstantTimeCompare([]byte(pm.Password), []byte(expected)) == 1
	return known && match, nil
}

// md5Password computes "md5" + md5(md5(password + user) + salt) in hex.
func md5Password(user, password string, salt [4]byte) string {
	inner := md5.Sum([]byte(password + user))
	h := md5.New()
	h.Write([]byte(hex.EncodeToString(inner[:])))
	h.Write(salt[:])
	return "md5" + hex.EncodeToString(h.Sum(nil))
}

// msgType is the type byte of a frontend message, for PostgreSQL's
// "got message type %d".
func msgType(msg pgproto3.FrontendMessage) byte {
	if b, err := msg.Encode(nil); err == nil && len(b) > 0 {
		return b[0]
	}
	return 0
}
