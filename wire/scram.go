package wire

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"
	"golang.org/x/crypto/pbkdf2"
)

// SCRAM-SHA-256 server side (RFC 5802, RFC 7677), without channel binding.

const (
	scramMechanism  = "SCRAM-SHA-256"
	scramIterations = 4096
)

// scramSecret is what the server keeps per user: salt, StoredKey, ServerKey.
type scramSecret struct {
	salt                 []byte
	storedKey, serverKey []byte
}

// scramCache derives each user's secret once per server (PBKDF2 is slow by
// design), keyed by user and password.
type scramCache struct {
	mu sync.Mutex
	m  map[string]*scramSecret
}

func (sc *scramCache) get(user, password string) (*scramSecret, error) {
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
	s := newSCRAMSecret(password, salt, scramIterations)
	if sc.m == nil {
		sc.m = map[string]*scramSecret{}
	}
	sc.m[key] = s
	return s, nil
}

func newSCRAMSecret(password string, salt []byte, iter int) *scramSecret {
	salted := pbkdf2.Key([]byte(password), salt, iter, sha256.Size, sha256.New)
	clientKey := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	return &scramSecret{salt: salt, storedKey: stored[:], serverKey: hmacSHA256(salted, "Server Key")}
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

func scramErr(msg string) error {
	return newError("08P01", "malformed SCRAM message: "+msg)
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
	// client-first-message = gs2-header client-first-message-bare
	cf := string(init.Data)
	var gs2 string
	switch {
	case strings.HasPrefix(cf, "n,,"), strings.HasPrefix(cf, "y,,"):
		gs2 = cf[:3]
	case strings.HasPrefix(cf, "p="):
		return false, newError("08P01", "channel binding is not supported")
	default:
		return false, scramErr("unexpected GS2 header")
	}
	bare := cf[3:]
	var clientNonce string
	for _, attr := range strings.Split(bare, ",") {
		if strings.HasPrefix(attr, "r=") {
			clientNonce = attr[2:]
		}
		if strings.HasPrefix(attr, "m=") {
			return false, scramErr("mandatory extensions are not supported")
		}
	}
	if clientNonce == "" || strings.ContainsAny(clientNonce, ",") {
		return false, scramErr("missing nonce")
	}

	cred, known := c.credential(user)
	var secret *scramSecret
	iterations := scramIterations
	switch {
	case known && cred.Password != "":
		if secret, err = c.s.scram.get(user, cred.Password); err != nil {
			return false, err
		}
	case known && cred.SCRAM != nil:
		secret = &scramSecret{salt: cred.SCRAM.Salt, storedKey: cred.SCRAM.StoredKey, serverKey: cred.SCRAM.ServerKey}
		iterations = cred.SCRAM.Iterations
	default:
		// An md5 hash cannot answer SCRAM (PostgreSQL: "User does not
		// have a valid SCRAM secret"): the exchange fails as for a
		// wrong password.
		known = false
		// Mock exchange so that unknown users look like wrong passwords.
		salt := make([]byte, 16)
		_, _ = rand.Read(salt)
		secret = &scramSecret{salt: salt, storedKey: make([]byte, 32), serverKey: make([]byte, 32)}
	}
	nb := make([]byte, 18)
	if _, err := rand.Read(nb); err != nil {
		return false, err
	}
	nonce := clientNonce + base64.StdEncoding.EncodeToString(nb)
	serverFirst := fmt.Sprintf("r=%s,s=%s,i=%d", nonce, base64.StdEncoding.EncodeToString(secret.salt), iterations)
	c.send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)})

	msg, err = c.receivePassword(pgproto3.AuthTypeSASLContinue)
	if err != nil {
		return false, err
	}
	resp, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return false, newError("08P01", fmt.Sprintf("expected SASL response, got message type %T", msg))
	}
	final := string(resp.Data)
	i := strings.LastIndex(final, ",p=")
	if i < 0 {
		return false, scramErr("missing proof")
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
	if gotBinding != base64.StdEncoding.EncodeToString([]byte(gs2)) {
		return false, scramErr("unexpected channel-binding data")
	}
	if gotNonce != nonce {
		return false, scramErr("nonce does not match")
	}
	proof, err := base64.StdEncoding.DecodeString(proofB64)
	if err != nil || len(proof) != sha256.Size {
		return false, scramErr("invalid proof")
	}
	authMessage := bare + "," + serverFirst + "," + withoutProof
	clientSig := hmacSHA256(secret.storedKey, authMessage)
	clientKey := make([]byte, sha256.Size)
	for j := range clientKey {
		clientKey[j] = proof[j] ^ clientSig[j]
	}
	got := sha256.Sum256(clientKey)
	if !known || subtle.ConstantTimeCompare(got[:], secret.storedKey) != 1 {
		return false, nil
	}
	serverSig := hmacSHA256(secret.serverKey, authMessage)
	c.send(&pgproto3.AuthenticationSASLFinal{Data: []byte("v=" + base64.StdEncoding.EncodeToString(serverSig))})
	return true, nil
}
