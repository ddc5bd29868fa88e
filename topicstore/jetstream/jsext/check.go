package jsext

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// The oldest nats-server topicgate runs on: atomic batch publish, which every
// multi-message commit uses, arrived in 2.12 (ADR-50).
const (
	MinServerMajor = 2
	MinServerMinor = 12
)

// Refusals of Connect and Check; each comes wrapped in a message that says
// what to fix.
var (
	ErrUnreachable  = errors.New("cannot reach the NATS cluster")
	ErrNoJetStream  = errors.New("JetStream is not enabled")
	ErrServerTooOld = errors.New("nats-server is too old")
	ErrRefused      = errors.New("the NATS cluster refused the credentials")
	ErrTLS          = errors.New("no TLS connection to the NATS cluster")
)

// Connect dials the cluster at urls (nats://host:port, user:password@ in a
// URL as nats.go takes it) and Checks it. The connection is closed on error.
func Connect(ctx context.Context, urls []string, opts ...nats.Option) (*nats.Conn, error) {
	nc, err := nats.Connect(strings.Join(urls, ","), opts...)
	if err != nil {
		return nil, connectError(urls, err)
	}
	if err := Check(ctx, nc); err != nil {
		nc.Close()
		return nil, err
	}
	return nc, nil
}

// connectError says what to fix when nats.Connect failed: the credentials,
// the TLS set-up, or (anything else) the URL list.
func connectError(urls []string, err error) error {
	where := RedactURLs(urls)
	switch {
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired), errors.Is(err, nats.ErrAuthRevoked):
		return fmt.Errorf("topicgate: %w at %s: %w (fix the user:password in the --store URLs, or give --nats-creds the .creds file of a user the cluster knows)", ErrRefused, where, err)
	case clientCertRefused(err):
		return fmt.Errorf("topicgate: %w at %s: %w (the nodes require a client certificate that their CA signed: give --nats-cert and --nats-key a certificate, PEM, that the CA in the nodes' tls { ca_file } signed, and its key)", ErrTLS, where, err)
	case errors.Is(err, nats.ErrTLS):
		var unknownCA x509.UnknownAuthorityError
		var hostname x509.HostnameError
		switch {
		case errors.As(err, &unknownCA):
			return fmt.Errorf("topicgate: %w at %s: %w (give --nats-ca the CA certificate, PEM, that signed the nodes' certificates)", ErrTLS, where, err)
		case errors.As(err, &hostname):
			return fmt.Errorf("topicgate: %w at %s: %w (name the nodes in --store as their certificates do)", ErrTLS, where, err)
		}
		return fmt.Errorf("topicgate: %w at %s: %w (check the nodes' tls { } block and --nats-ca)", ErrTLS, where, err)
	case errors.Is(err, nats.ErrSecureConnWanted):
		return fmt.Errorf("topicgate: %w at %s: %w (--nats-ca or a tls:// URL asks for TLS and the nodes do not offer it: give the nodes a tls { cert_file, key_file } block, or drop --nats-ca and use nats:// URLs)", ErrTLS, where, err)
	}
	return fmt.Errorf("topicgate: %w at %s: %w (start the nodes, or fix the --store URL list)", ErrUnreachable, where, err)
}

// clientCertRefused reports whether a node that verifies clients refused
// the connection: with TLS 1.3 it does so after the handshake, by an alert
// (certificate required, unknown certificate authority, bad certificate)
// or, when the alert does not reach the client first, by closing it.
func clientCertRefused(err error) bool {
	msg := err.Error()
	for _, s := range []string{"tls: certificate required", "tls: unknown certificate authority", "tls: bad certificate", "closed by remote after TLS handshake"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// Check refuses a server that cannot carry topicgate's store: one older than
// MinServerMajor.MinServerMinor, or one without JetStream. It looks at the
// server nc is connected to (nats.go does not see the versions of the
// others).
func Check(ctx context.Context, nc *nats.Conn) error {
	where := RedactURLs([]string{nc.ConnectedUrl()})
	version := nc.ConnectedServerVersion()
	ok, err := VersionAtLeast(version, MinServerMajor, MinServerMinor)
	if err != nil {
		return fmt.Errorf("topicgate: the NATS server at %s: %w", where, err)
	}
	if !ok {
		return fmt.Errorf("topicgate: the NATS server at %s runs nats-server %s: %w: topicgate needs %d.%d or newer for atomic batch publish; upgrade the nodes (Debian's nats-server package is too old: `go tool nats-server` in the topicgate checkout runs the version its go.mod pins)",
			where, version, ErrServerTooOld, MinServerMajor, MinServerMinor)
	}
	js, err := natsjs.New(nc)
	if err != nil {
		return fmt.Errorf("topicgate: the NATS server at %s: %w", where, err)
	}
	if _, err := js.AccountInfo(ctx); err != nil {
		if errors.Is(err, natsjs.ErrJetStreamNotEnabled) || errors.Is(err, natsjs.ErrJetStreamNotEnabledForAccount) {
			return fmt.Errorf("topicgate: the NATS server at %s (nats-server %s): %w (%w): start every node with -js, or give its config a jetstream { store_dir: ... } block (in operator mode: give the account JetStream limits in its JWT)",
				where, version, ErrNoJetStream, err)
		}
		return fmt.Errorf("topicgate: JetStream at %s (nats-server %s) did not answer: %w (are a majority of the cluster's nodes up?)", where, version, err)
	}
	return nil
}

// VersionAtLeast reports whether a nats-server version string ("2.15.2",
// "2.12.0-RC.1", "v2.11.4") is major.minor or newer. A pre-release of
// major.minor counts as major.minor.
func VersionAtLeast(version string, major, minor int) (bool, error) {
	v := strings.TrimPrefix(version, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return false, fmt.Errorf("unreadable server version %q", version)
	}
	maj, err1 := strconv.Atoi(parts[0])
	min, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false, fmt.Errorf("unreadable server version %q", version)
	}
	return maj > major || maj == major && min >= minor, nil
}

// RedactURLs joins urls for a message, with any password replaced by xxxxx.
func RedactURLs(urls []string) string {
	out := make([]string, len(urls))
	for i, s := range urls {
		if u, err := url.Parse(s); err == nil && u.User != nil {
			s = u.Redacted()
		}
		out[i] = s
	}
	return strings.Join(out, ",")
}
