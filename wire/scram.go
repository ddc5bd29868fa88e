package wire

import (
	"crypto/rand"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"

	"topicgate/internal/scram"
)

// SCRAM-SHA-256 server side (RFC 5802, RFC 7677), without channel
// binding: the messages travel in PostgreSQL's SASL messages, the
// exchange itself is package scram's.

const (
	scramMechanism  = scram.Mechanism
	scramIterations = scram.Iterations
)

// scramCache derives each user's secret once per server (PBKDF2 is slow by
// design), keyed by user and password.
type scramCache struct {
	mu sync.Mutex
	m  map[string]*scram.Secret
}

func (sc *scramCache) get(user, password string) (*scram.Secret, error) {
	key := user + "\x00" + password
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if s := sc.m[key]; s != nil {
		return s, nil
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	s := scram.Derive(password, salt, scramIterations)
	if sc.m == nil {
		sc.m = map[string]*scram.Secret{}
	}
	sc.m[key] = s
	return s, nil
}

// scramProtoErr maps an error of package scram to the FATAL error the
// client is sent.
func scramProtoErr(err error) error {
	var me *scram.MalformedError
	switch {
	case errors.Is(err, scram.ErrChannelBinding):
		return newError("08P01", err.Error())
	case errors.As(err, &me):
		return newError("08P01", me.Error())
	}
	return err
}

func (c *conn) authSCRAM(user string) (bool, error) {
	c.send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{scramMechanism}})
	msg, err := c.receivePassword(pgproto3.AuthTypeSASL)
	if err != nil {
		return false, err
	}
	init, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok {
		return false, newError("08P01", fmt.Sprintf("expected SASL response, got message type %T", msg))
	}
	if init.AuthMechanism != scramMechanism {
		return false, newError("08P01", "client selected an invalid SASL authentication mechanism")
	}
	first, err := scram.ParseClientFirst(init.Data)
	if err != nil {
		return false, scramProtoErr(err)
	}

	cred, known := c.credential(user)
	var secret *scram.Secret
	switch {
	case known && cred.Password != "":
		if secret, err = c.s.scram.get(user, cred.Password); err != nil {
			return false, err
		}
	case known && cred.SCRAM != nil:
		secret = &scram.Secret{Iterations: cred.SCRAM.Iterations, Salt: cred.SCRAM.Salt,
			StoredKey: cred.SCRAM.StoredKey, ServerKey: cred.SCRAM.ServerKey}
	default:
		// An md5 hash cannot answer SCRAM (PostgreSQL: "User does not
		// have a valid SCRAM secret"): the exchange fails as for a
		// wrong password, as it does for an unknown user.
		known = false
		secret = scram.Mock()
	}
	x, serverFirst, err := scram.Start(first, secret)
	if err != nil {
		return false, err
	}
	c.send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)})

	msg, err = c.receivePassword(pgproto3.AuthTypeSASLContinue)
	if err != nil {
		return false, err
	}
	resp, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return false, newError("08P01", fmt.Sprintf("expected SASL response, got message type %T", msg))
	}
	serverFinal, ok, err := x.Finish(resp.Data)
	if err != nil {
		return false, scramProtoErr(err)
	}
	if !known || !ok {
		return false, nil
	}
	c.send(&pgproto3.AuthenticationSASLFinal{Data: []byte(serverFinal)})
	return true, nil
}
