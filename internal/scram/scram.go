// Package scram is the server side of SCRAM-SHA-256 (RFC 5802, RFC 7677)
// without channel binding, independent of the protocol that carries its
// messages: the PostgreSQL door (package wire) and the Kafka door
// (package kafka) both run their exchanges through it.
package scram

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/pbkdf2"
)

// Mechanism is the SASL mechanism name; Iterations is the iteration
// count of a secret derived from a plaintext password.
const (
	Mechanism  = "SCRAM-SHA-256"
	Iterations = 4096
)

// ErrChannelBinding is returned for a client-first message that asks for
// channel binding, which the server does not support.
var ErrChannelBinding = errors.New("channel binding is not supported")

// MalformedError is a SCRAM message that does not parse or does not
// belong to the exchange.
type MalformedError struct{ Msg string }

// Error returns the reason the message was refused.
func (e *MalformedError) Error() string { return "malformed SCRAM message: " + e.Msg }

func malformed(msg string) error { return &MalformedError{Msg: msg} }

// Secret is what the server keeps per user: salt, iteration count,
// StoredKey and ServerKey.
type Secret struct {
	Iterations           int
	Salt                 []byte
	StoredKey, ServerKey []byte
}

// Derive returns the secret of password with salt and iter iterations.
func Derive(password string, salt []byte, iter int) *Secret {
	salted := pbkdf2.Key([]byte(password), salt, iter, sha256.Size, sha256.New)
	clientKey := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	return &Secret{Iterations: iter, Salt: salt, StoredKey: stored[:], ServerKey: hmacSHA256(salted, "Server Key")}
}

// Mock returns a secret no proof matches, with a random salt: the
// exchange of an unknown user runs on it so that it looks like a wrong
// password.
func Mock() *Secret {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	return &Secret{Iterations: Iterations, Salt: salt, StoredKey: make([]byte, sha256.Size), ServerKey: make([]byte, sha256.Size)}
}

// Matches reports whether password derives s.
func (s *Secret) Matches(password string) bool {
	d := Derive(password, s.Salt, s.Iterations)
	return subtle.ConstantTimeCompare(d.StoredKey, s.StoredKey) == 1 &&
		subtle.ConstantTimeCompare(d.ServerKey, s.ServerKey) == 1
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// ClientFirst is a parsed client-first-message.
type ClientFirst struct {
	// GS2 is the GS2 header ("n,," or "y,,"), Bare the rest.
	GS2, Bare string
	// User is the n= attribute (with "=2C" and "=3D" decoded), Nonce
	// the r= attribute.
	User, Nonce string
}

// ParseClientFirst parses a client-first-message.
func ParseClientFirst(data []byte) (*ClientFirst, error) {
	cf := string(data)
	var gs2 string
	switch {
	case strings.HasPrefix(cf, "n,"), strings.HasPrefix(cf, "y,"):
		// An authzid (n,a=name,) is accepted only when it is empty.
		i := strings.Index(cf[2:], ",")
		if i != 0 {
			return nil, malformed("authorization identities are not supported")
		}
		gs2 = cf[:3]
	case strings.HasPrefix(cf, "p="):
		return nil, ErrChannelBinding
	default:
		return nil, malformed("unexpected GS2 header")
	}
	c := &ClientFirst{GS2: gs2, Bare: cf[3:]}
	for _, attr := range strings.Split(c.Bare, ",") {
		switch {
		case strings.HasPrefix(attr, "r="):
			c.Nonce = attr[2:]
		case strings.HasPrefix(attr, "n="):
			c.User = strings.NewReplacer("=2C", ",", "=3D", "=").Replace(attr[2:])
		case strings.HasPrefix(attr, "m="):
			return nil, malformed("mandatory extensions are not supported")
		}
	}
	if c.Nonce == "" {
		return nil, malformed("missing nonce")
	}
	return c, nil
}

// Exchange is one server-side exchange after the client-first-message.
type Exchange struct {
	// RepeatedNonce accepts a client-final nonce that repeats the
	// client's nonce before the server-first one, as librdkafka sends
	// (it prefixes the client nonce to the server's, which already
	// starts with it) and Kafka's broker accepts (it checks that the
	// nonce ends with the server's). The proof still covers the message
	// as sent.
	RepeatedNonce bool

	first       *ClientFirst
	secret      *Secret
	nonce       string
	serverFirst string
}

// Start begins the exchange of first against secret (Mock for an unknown
// user) and returns the server-first-message to send.
func Start(first *ClientFirst, secret *Secret) (*Exchange, string, error) {
	nb := make([]byte, 18)
	if _, err := rand.Read(nb); err != nil {
		return nil, "", err
	}
	x := &Exchange{first: first, secret: secret, nonce: first.Nonce + base64.StdEncoding.EncodeToString(nb)}
	x.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", x.nonce, base64.StdEncoding.EncodeToString(secret.Salt), secret.Iterations)
	return x, x.serverFirst, nil
}

// Finish checks the client-final-message: ok reports whether its proof
// matches the secret, and then serverFinal is the server-final-message
// to send. An error is a message that does not parse or belong to the
// exchange.
func (x *Exchange) Finish(data []byte) (serverFinal string, ok bool, err error) {
	final := string(data)
	i := strings.LastIndex(final, ",p=")
	if i < 0 {
		return "", false, malformed("missing proof")
	}
	withoutProof, proofB64 := final[:i], final[i+3:]
	var gotBinding, gotNonce string
	for _, attr := range strings.Split(withoutProof, ",") {
		switch {
		case strings.HasPrefix(attr, "c="):
			gotBinding = attr[2:]
		case strings.HasPrefix(attr, "r="):
			gotNonce = attr[2:]
		}
	}
	if gotBinding != base64.StdEncoding.EncodeToString([]byte(x.first.GS2)) {
		return "", false, malformed("unexpected channel-binding data")
	}
	if gotNonce != x.nonce && (!x.RepeatedNonce || gotNonce != x.first.Nonce+x.nonce) {
		return "", false, malformed("nonce does not match")
	}
	proof, err := base64.StdEncoding.DecodeString(proofB64)
	if err != nil || len(proof) != sha256.Size {
		return "", false, malformed("invalid proof")
	}
	authMessage := x.first.Bare + "," + x.serverFirst + "," + withoutProof
	clientSig := hmacSHA256(x.secret.StoredKey, authMessage)
	clientKey := make([]byte, sha256.Size)
	for j := range clientKey {
		clientKey[j] = proof[j] ^ clientSig[j]
	}
	got := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(got[:], x.secret.StoredKey) != 1 {
		return "", false, nil
	}
	serverSig := hmacSHA256(x.secret.ServerKey, authMessage)
	return "v=" + base64.StdEncoding.EncodeToString(serverSig), true, nil
}
