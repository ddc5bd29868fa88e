package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Cookie names: the session, and the login form's CSRF nonce (set when the
// form is shown, so that another site cannot post a login of its own).
const (
	sessionCookie = "tg_console"
	loginCookie   = "tg_console_login"
)

// DefaultSessionTTL is how long a console login lasts.
const DefaultSessionTTL = 8 * time.Hour

// loginFormTTL is how long a login form may be posted after it was shown.
const loginFormTTL = 30 * time.Minute

// session is a logged-in role, as its cookie carries it.
type session struct {
	user    string
	expires time.Time
	nonce   string // random, per login: the CSRF token and logout derive from it
}

// signer signs cookies and derives CSRF tokens with one key, random per
// process unless Config.Key gives one: a restart logs everyone out.
type signer struct {
	key []byte
	mu  sync.Mutex
	// out are the nonces of sessions logged out before their expiry.
	out map[string]time.Time
}

func newSigner(key []byte) (*signer, error) {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
	}
	return &signer{key: key, out: make(map[string]time.Time)}, nil
}

func (s *signer) mac(parts ...string) []byte {
	m := hmac.New(sha256.New, s.key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// b64 is strict: a signature with other trailing bits is another cookie.
var b64 = base64.RawURLEncoding.Strict()

func randomNonce() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// encode is the cookie value of ss: the fields, then their HMAC.
func (s *signer) encode(ss session) string {
	exp := strconv.FormatInt(ss.expires.Unix(), 10)
	payload := b64.EncodeToString([]byte(ss.user)) + "." + exp + "." + ss.nonce
	return payload + "." + b64.EncodeToString(s.mac("session", payload))
}

var errBadCookie = errors.New("the session cookie is not valid (forged, expired or logged out): log in again")

// decode checks a cookie value's signature, expiry and that it was not
// logged out.
func (s *signer) decode(v string, now time.Time) (session, error) {
	i := strings.LastIndexByte(v, '.')
	if i < 0 {
		return session{}, errBadCookie
	}
	payload, sig := v[:i], v[i+1:]
	got, err := b64.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac("session", payload)) {
		return session{}, errBadCookie
	}
	f := strings.Split(payload, ".")
	if len(f) != 3 {
		return session{}, errBadCookie
	}
	user, err := b64.DecodeString(f[0])
	exp, err2 := strconv.ParseInt(f[1], 10, 64)
	if err != nil || err2 != nil {
		return session{}, errBadCookie
	}
	ss := session{user: string(user), expires: time.Unix(exp, 0), nonce: f[2]}
	if !now.Before(ss.expires) {
		return session{}, errBadCookie
	}
	s.mu.Lock()
	_, gone := s.out[ss.nonce]
	s.mu.Unlock()
	if gone {
		return session{}, errBadCookie
	}
	return ss, nil
}

// csrf is the CSRF token of the session (or login form) with nonce.
func (s *signer) csrf(nonce string) string {
	return b64.EncodeToString(s.mac("csrf", nonce))
}

// checkCSRF reports whether token is the CSRF token for nonce.
func (s *signer) checkCSRF(nonce, token string) bool {
	want := s.csrf(nonce)
	return nonce != "" && subtle.ConstantTimeCompare([]byte(want), []byte(token)) == 1
}

// logout makes ss's cookie invalid before its expiry, and forgets the
// logouts whose cookies have expired anyway.
func (s *signer) logout(ss session, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, exp := range s.out {
		if !now.Before(exp) {
			delete(s.out, n)
		}
	}
	s.out[ss.nonce] = ss.expires
}

// setCookie sets a cookie of the console: HttpOnly, SameSite=Strict,
// Secure over TLS, for the whole site.
func setCookie(w http.ResponseWriter, r *http.Request, name, value string, expires time.Time) {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil}
	if value == "" {
		c.MaxAge = -1
	} else {
		c.Expires = expires
	}
	http.SetCookie(w, c)
}
