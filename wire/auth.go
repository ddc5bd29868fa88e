package wire

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"topicgate/internal/scram"
)

// authenticate runs the configured authentication exchange: nil when the
// user is in, else the error to send as FATAL (a *protoError: a wrong
// password, a protocol violation) or, for any other error (the
// connection failed), nothing to send.
func (c *conn) authenticate(user string) error {
	var ok bool
	var err error
	switch c.s.cfg.Auth {
	case "trust":
		return nil
	case "password":
		ok, err = c.authCleartext(user)
	case "md5":
		// As PostgreSQL: a user whose password is stored only as a SCRAM
		// verifier is asked for SCRAM, which an md5 hash cannot answer.
		if cred, known := c.credential(user); known && cred.Password == "" && cred.MD5 == "" && cred.SCRAM != nil {
			ok, err = c.authSCRAM(user)
		} else {
			ok, err = c.authMD5(user)
		}
	case "scram-sha-256":
		ok, err = c.authSCRAM(user)
	}
	if err != nil {
		return err
	}
	if !ok {
		return authFailed(user)
	}
	return nil
}

// Credential is what a user's password is checked against: the password
// itself (a bootstrap user), or a stored verifier in PostgreSQL's formats,
// never the password (a role of the catalog).
type Credential struct {
	Password string       // plaintext; "" when only verifiers are known
	SCRAM    *SCRAMSecret // from "SCRAM-SHA-256$iter:salt$StoredKey:ServerKey"
	MD5      string       // "md5" + hex(md5(password + user))
}

// SCRAMSecret is a SCRAM-SHA-256 verifier's parts (RFC 5802).
type SCRAMSecret struct {
	Iterations           int
	Salt                 []byte
	StoredKey, ServerKey []byte
}

// credential is user's credential: a bootstrap user's password, else what
// Config.Credentials says.
func (c *conn) credential(user string) (Credential, bool) {
	if pw, ok := c.s.cfg.Users[user]; ok {
		return Credential{Password: pw}, true
	}
	if c.s.cfg.Credentials != nil {
		return c.s.cfg.Credentials(user)
	}
	return Credential{}, false
}

// checkPassword reports whether password (sent in clear) matches cred.
func checkPassword(user, password string, cred Credential) bool {
	switch {
	case cred.Password != "":
		return subtle.ConstantTimeCompare([]byte(password), []byte(cred.Password)) == 1
	case cred.SCRAM != nil:
		s := scram.Secret{Iterations: cred.SCRAM.Iterations, Salt: cred.SCRAM.Salt,
			StoredKey: cred.SCRAM.StoredKey, ServerKey: cred.SCRAM.ServerKey}
		return s.Matches(password)
	case cred.MD5 != "":
		inner := md5.Sum([]byte(password + user))
		return subtle.ConstantTimeCompare([]byte("md5"+hex.EncodeToString(inner[:])), []byte(cred.MD5)) == 1
	}
	return false
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
	cred, known := c.credential(user)
	return known && checkPassword(user, pm.Password, cred), nil
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
	cred, known := c.credential(user)
	hash := cred.MD5
	if cred.Password != "" {
		inner := md5.Sum([]byte(cred.Password + user))
		hash = "md5" + hex.EncodeToString(inner[:])
	}
	expected := saltedMD5(hash, salt)
	match := hash != "" && subtle.ConstantTimeCompare([]byte(pm.Password), []byte(expected)) == 1
	return known && match, nil
}

// saltedMD5 computes "md5" + md5(hex part of hash + salt) in hex, hash
// being "md5" + md5(password + user) in hex (what the client sends).
func saltedMD5(hash string, salt [4]byte) string {
	h := md5.New()
	h.Write([]byte(strings.TrimPrefix(hash, "md5")))
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
