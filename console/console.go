package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"topicgate/acl"
	"topicgate/sql/pgerror"
)

//go:embed assets
var assetFS embed.FS

// Config is what the console is built on.
type Config struct {
	// Sessions opens the SQL sessions every page runs its statements in
	// (the executor's Engine).
	Sessions Sessions
	// Verifier is a role's stored password verifier, false when the role
	// does not exist, has none or its VALID UNTIL passed
	// (authz.Authority.Verifier): what a PostgreSQL password login is
	// checked against.
	Verifier func(user string) (string, bool)
	// Trust is --auth trust: as on the PostgreSQL port, the login form
	// asks for a role name only, without a password.
	Trust bool
	// SessionTTL is how long a login lasts (0: DefaultSessionTTL).
	SessionTTL time.Duration
	// Key signs the cookies and CSRF tokens (nil: random per process).
	Key []byte
	// Clock is the time source (nil: time.Now).
	Clock func() time.Time
	// OnLogin, when set, is told of each login's outcome (the audit
	// log's AUTH lines, as for a login of the PostgreSQL port).
	OnLogin func(LoginEvent)
	// Figures, when set, is what the live charts' sampler reads (the
	// store); nil: no charts.
	Figures Figures
	// SampleInterval is how often the sampler samples (0:
	// DefaultSampleInterval).
	SampleInterval time.Duration
	// LiveRecheck is how often a live stream checks again that its login
	// is valid and what its role may see (0: DefaultLiveRecheck).
	LiveRecheck time.Duration
}

// LoginEvent is one login's outcome (Config.OnLogin).
type LoginEvent struct {
	User, Remote string
	// Code is "" when the login succeeded, else the SQLSTATE the
	// PostgreSQL port would have refused it with (28P01 a wrong password,
	// 28000 a role that may not log in, ...).
	Code string
}

// noteLogin tells Config.OnLogin of a login's outcome.
func (c *Console) noteLogin(r *http.Request, user, code string) {
	if c.cfg.OnLogin != nil {
		c.cfg.OnLogin(LoginEvent{User: user, Remote: r.RemoteAddr, Code: code})
	}
}

// Console is the web console's http.Handler.
type Console struct {
	cfg   Config
	sign  *signer
	mux   *http.ServeMux
	dummy string // a verifier a missing role's password is checked against
	// desks are the logins' queue sessions (queue.go), by login nonce.
	desksMu sync.Mutex
	desks   map[string]*desk
	// samples is the live charts' sampler (samples.go), started by the
	// first request; nil without Config.Figures.
	samples *sampler
}

// New returns the console.
func New(cfg Config) (*Console, error) {
	if cfg.Sessions == nil || (cfg.Verifier == nil && !cfg.Trust) {
		return nil, errors.New("console: Sessions and Verifier are required")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.LiveRecheck <= 0 {
		cfg.LiveRecheck = DefaultLiveRecheck
	}
	s, err := newSigner(cfg.Key)
	if err != nil {
		return nil, err
	}
	dummy, err := acl.SCRAMVerifier("a password no role has")
	if err != nil {
		return nil, err
	}
	c := &Console{cfg: cfg, sign: s, mux: http.NewServeMux(), dummy: dummy, desks: make(map[string]*desk)}
	if cfg.Figures != nil {
		c.samples = newSampler(cfg.Figures, cfg.Clock, cfg.SampleInterval)
	}
	assets, _ := fs.Sub(assetFS, "assets")
	c.mux.Handle("GET /assets/", http.StripPrefix("/assets/", assetHandler(http.FileServerFS(assets))))
	c.mux.HandleFunc("GET /login", c.loginForm)
	c.mux.HandleFunc("POST /login", c.login)
	c.mux.HandleFunc("POST /logout", c.authed(c.logout))
	c.mux.HandleFunc("GET /{$}", c.authed(c.topics))
	c.mux.HandleFunc("GET /topic", c.authed(c.topic))
	c.mux.HandleFunc("GET /messages", c.authed(c.messages))
	// The message browser's export (export.go).
	c.mux.HandleFunc("GET /messages/export", c.authed(c.messagesExport))
	c.mux.HandleFunc("GET /sessions", c.authed(c.sessions))
	c.mux.HandleFunc("POST /sessions/signal", c.authed(c.signal))
	c.mux.HandleFunc("POST /produce", c.authed(c.produce))
	c.mux.HandleFunc("GET /sql", c.authed(c.sqlForm))
	c.mux.HandleFunc("POST /sql", c.authed(c.sqlRun))
	c.mux.HandleFunc("POST /queue/take", c.authed(c.queueTake))
	c.mux.HandleFunc("POST /queue/act", c.authed(c.queueAct))
	c.mux.HandleFunc("GET /consumers", c.authed(c.consumers))
	c.mux.HandleFunc("GET /consumer", c.authed(c.consumer))
	c.mux.HandleFunc("GET /cluster", c.authed(c.cluster))
	c.mux.HandleFunc("GET /live", c.authed(c.live))
	return c, nil
}

// assetHandler serves the embedded assets, cacheable for a day.
func assetHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=86400")
		h.ServeHTTP(w, r)
	})
}

// ServeHTTP refuses plain HTTP beyond loopback (the password and the
// session cookie would cross the network in clear), then serves.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil && !loopback(r) {
		http.Error(w, "the console is served over plain HTTP on loopback only (--http 127.0.0.1:port); "+
			"beyond it, put it behind a TLS-terminating proxy on this host", http.StatusForbidden)
		return
	}
	h := w.Header()
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
	if c.samples != nil {
		c.samples.start()
	}
	c.mux.ServeHTTP(w, r)
}

// loopback reports whether r came in on a loopback address of this host.
func loopback(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ctxKey keys the request's session in its context.
type ctxKey struct{}

// authed wraps h: the request must carry a valid session cookie and, when
// it may change something (not GET or HEAD), the session's CSRF token in
// the form field "csrf" or the X-CSRF-Token header. A page request without
// a session is sent to the login form; anything else gets 401 or 403.
func (c *Console) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie(sessionCookie)
		var ss session
		if err == nil {
			ss, err = c.sign.decode(ck.Value, c.cfg.Clock())
		}
		if err != nil {
			// A page is sent to the login form; htmx's requests and an
			// event stream (which a browser does not follow to a form)
			// get 401.
			if r.Method == http.MethodGet && r.Header.Get("HX-Request") == "" && !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
				http.Redirect(w, r, "/login", http.StatusSeeOther)
				return
			}
			c.fail(w, r, http.StatusUnauthorized, errBadCookie.Error())
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			tok := r.Header.Get("X-CSRF-Token")
			if tok == "" {
				tok = r.PostFormValue("csrf")
			}
			if !c.sign.checkCSRF(ss.nonce, tok) {
				c.fail(w, r, http.StatusForbidden, "missing or wrong CSRF token: reload the page and try again")
				return
			}
		}
		h(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, ss)))
	}
}

func sessionOf(r *http.Request) session {
	ss, _ := r.Context().Value(ctxKey{}).(session)
	return ss
}

// loginForm shows the login form, with a fresh CSRF nonce in a cookie.
func (c *Console) loginForm(w http.ResponseWriter, r *http.Request) {
	c.showLogin(w, r, http.StatusOK, "", r.URL.Query().Get("user"))
}

func (c *Console) showLogin(w http.ResponseWriter, r *http.Request, status int, msg, user string) {
	nonce, err := randomNonce()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	setCookie(w, r, loginCookie, nonce, c.cfg.Clock().Add(loginFormTTL))
	c.render(w, status, "login", &loginPage{Error: msg, User: user, Trust: c.cfg.Trust, CSRF: c.sign.csrf("login:" + nonce)})
}

// loginPage is the login template's data.
type loginPage struct {
	Error, User, CSRF string
	Trust             bool
}

// login checks a role's password as a PostgreSQL password login does
// (its stored verifier, VALID UNTIL), then opens a session as it to run
// the login checks (LOGIN, CONNECTION LIMIT), then sets the cookie.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	user, password := r.PostFormValue("user"), r.PostFormValue("password")
	ck, err := r.Cookie(loginCookie)
	if err != nil || !c.sign.checkCSRF("login:"+ck.Value, r.PostFormValue("csrf")) {
		c.showLogin(w, r, http.StatusForbidden, "the login form expired or did not come from this console: try again", user)
		return
	}
	if user == "" {
		c.showLogin(w, r, http.StatusBadRequest, "give a role name", user)
		return
	}
	if !c.cfg.Trust {
		v, ok := c.cfg.Verifier(user)
		if !ok {
			v = c.dummy // as long as a wrong password takes
		}
		if !acl.CheckPassword(user, password, v) || !ok {
			c.noteLogin(r, user, pgerror.CodeInvalidPassword)
			c.showLogin(w, r, http.StatusUnauthorized, fmt.Sprintf("password authentication failed for user %q", user), user)
			return
		}
	}
	sc, err := c.open(r.Context(), user, r.RemoteAddr)
	if err != nil {
		code := pgerror.Code(err)
		if code == "" {
			code = pgerror.CodeInternal
		}
		c.noteLogin(r, user, code)
		c.showLogin(w, r, http.StatusForbidden, errText(err), user)
		return
	}
	sc.close()
	c.noteLogin(r, user, "")
	nonce, err := randomNonce()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	ss := session{user: user, expires: c.cfg.Clock().Add(c.cfg.SessionTTL), nonce: nonce}
	setCookie(w, r, sessionCookie, c.sign.encode(ss), ss.expires)
	setCookie(w, r, loginCookie, "", time.Time{})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout ends the session: its cookie is refused from now on.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	c.sign.logout(sessionOf(r), c.cfg.Clock())
	if d, _ := c.deskOf(r, false); d != nil {
		c.closeDesk(sessionOf(r).nonce, d)
	}
	setCookie(w, r, sessionCookie, "", time.Time{})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// errText is an error as the page shows it: a SQL error's message.
func errText(err error) string {
	msg := err.Error()
	if code := pgerror.Code(err); code != "" && !strings.Contains(msg, code) {
		msg += " (SQLSTATE " + code + ")"
	}
	return msg
}
