package jstest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"topicgate/topicstore/jetstream/jstest"
)

// TestSecureNodes: the harness starts nodes that require a password, TLS,
// or operator-mode JWTs, and nats.go gets JetStream from them with the
// right credentials and is refused without them (what it says then is
// what a gateway has to explain).
func TestSecureNodes(t *testing.T) {
	accountInfo := func(t *testing.T, url string, opts ...nats.Option) error {
		t.Helper()
		nc, err := nats.Connect(url, append([]nats.Option{nats.Timeout(2 * time.Second)}, opts...)...)
		if err != nil {
			return err
		}
		defer nc.Close()
		_, err = jstest.JetStream(t, nc).AccountInfo(ctxFor(t, 5*time.Second))
		return err
	}
	t.Run("Password", func(t *testing.T) {
		c := jstest.Start(t, 1, jstest.WithUsers(map[string]string{"alice": "s3cret"}))
		url := c.URLs()[0]
		with := func(userinfo string) string { return "nats://" + userinfo + "@" + url[len("nats://"):] }
		if err := accountInfo(t, with("alice:s3cret")); err != nil {
			t.Fatalf("right password: %v", err)
		}
		for _, u := range []string{with("alice:wrong"), url} {
			err := accountInfo(t, u)
			t.Logf("%s: %v", u, err)
			if !errors.Is(err, nats.ErrAuthorization) {
				t.Errorf("%s: %v, want nats.ErrAuthorization", u, err)
			}
		}
	})
	t.Run("TLS", func(t *testing.T) {
		f := jstest.NewTLS(t)
		c := jstest.Start(t, 1, jstest.WithTLS(f))
		url := c.URLs()[0]
		if url[:6] != "tls://" {
			t.Fatalf("URL %s, want tls://", url)
		}
		if err := accountInfo(t, url, nats.RootCAs(f.CA)); err != nil {
			t.Fatalf("with the CA: %v", err)
		}
		other := jstest.NewTLS(t) // another CA
		for name, opts := range map[string][]nats.Option{"no CA": nil, "another CA": {nats.RootCAs(other.CA)}} {
			err := accountInfo(t, url, opts...)
			t.Logf("%s: %v", name, err)
			if err == nil {
				t.Errorf("%s: connected", name)
			}
		}
		err := accountInfo(t, "nats://"+url[len("tls://"):])
		t.Logf("nats:// without a CA: %v", err)
		if err == nil {
			t.Errorf("nats:// without a CA: connected")
		}
	})
	t.Run("Operator", func(t *testing.T) {
		op := jstest.NewOperator(t)
		c := jstest.Start(t, 1, jstest.WithOperator(op))
		if err := accountInfo(t, c.URL(), nats.UserCredentials(op.Creds(t, "gw"))); err != nil {
			t.Fatalf("with the creds: %v", err)
		}
		for name, opts := range map[string][]nats.Option{"no creds": nil, "foreign creds": {nats.UserCredentials(op.ForeignCreds(t, "x"))}} {
			err := accountInfo(t, c.URL(), opts...)
			t.Logf("%s: %v", name, err)
			if !errors.Is(err, nats.ErrAuthorization) {
				t.Errorf("%s: %v, want nats.ErrAuthorization", name, err)
			}
		}
	})
}
