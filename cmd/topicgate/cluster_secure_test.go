package main

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore/jetstream"
	"topicgate/topicstore/jetstream/jstest"
)

// secureGateway starts `topicgate serve --replicas 1 args...` as a child
// process, checks CREATE TOPIC topic, INSERT and SELECT through it with
// pgx, and returns what it printed.
func secureGateway(t *testing.T, topic string, args ...string) string {
	t.Helper()
	return secureGatewayEnv(t, topic, nil, args...)
}

// secureGatewayEnv is secureGateway with env added to the child's
// environment (NAME=value).
func secureGatewayEnv(t *testing.T, topic string, env []string, args ...string) string {
	t.Helper()
	s := newCrashServer(t)
	s.args = append([]string{"--replicas", "1"}, args...)
	s.env = env
	s.start()
	ctx := context.Background()
	c := s.connect(ctx)
	defer c.Close(ctx)
	exec(t, c, "CREATE TOPIC "+topic)
	require.Equal(t, "INSERT 0 2", exec(t, c, "INSERT INTO "+topic+" (data) VALUES ('a'), ('b')").String())
	require.Equal(t, []string{"0 a", "1 b"}, queryText(t, c, "SELECT offset, convert_from(data, 'UTF8') FROM "+topic+" ORDER BY offset"))
	out, err := os.ReadFile(s.logPath)
	require.NoError(t, err)
	return string(out)
}

// TestClusterSecureNodes: a gateway on nodes that require a password, TLS
// or operator-mode JWTs (one real nats-server each, R1) works through the
// front door with the right --store userinfo, --nats-ca or --nats-creds,
// and `topicgate serve` refuses to start without them, saying which flag
// to fix and never printing a password.
func TestClusterSecureNodes(t *testing.T) {
	t.Run("Password", func(t *testing.T) {
		c := jstest.Start(t, 1, jstest.WithUsers(map[string]string{"alice": "s3cret"}))
		hostPort := strings.TrimPrefix(c.URLs()[0], "nats://")
		out := secureGateway(t, "t", "--store", "nats://alice:s3cret@"+hostPort)
		require.Contains(t, out, "gateway on nats://alice:xxxxx@"+hostPort)
		require.NotContains(t, out, "s3cret")

		for _, store := range []string{"nats://alice:wr0ng@" + hostPort, "nats://" + hostPort} {
			out := serveRefused(t, "--store", store, "--replicas", "1")
			require.Contains(t, out, "the NATS cluster refused the credentials at nats://")
			require.Contains(t, out, "Authorization Violation")
			require.Contains(t, out, "fix the user:password in the --store URLs, or give --nats-creds")
			require.NotContains(t, out, "wr0ng")
		}
	})

	t.Run("TLS", func(t *testing.T) {
		f := jstest.NewTLS(t)
		c := jstest.Start(t, 1, jstest.WithTLS(f))
		url := c.URLs()[0] // tls://127.0.0.1:port
		secureGateway(t, "t", "--store", url, "--nats-ca", f.CA)
		// A nats:// URL is upgraded to TLS when the node requires it.
		secureGateway(t, "t2", "--store", "nats://"+strings.TrimPrefix(url, "tls://"), "--nats-ca", f.CA)

		out := serveRefused(t, "--store", url, "--replicas", "1")
		require.Contains(t, out, "no TLS connection to the NATS cluster at "+url)
		require.Contains(t, out, "certificate signed by unknown authority")
		require.Contains(t, out, "give --nats-ca the CA certificate, PEM, that signed the nodes' certificates")
		out = serveRefused(t, "--store", url, "--replicas", "1", "--nats-ca", jstest.NewTLS(t).CA)
		require.Contains(t, out, "give --nats-ca the CA certificate")
		out = serveRefused(t, "--store", url, "--replicas", "1", "--nats-ca", f.Key)
		require.Contains(t, out, "--nats-ca "+f.Key+" holds no PEM certificate")

		// --nats-ca towards nodes without TLS.
		plain := jstest.Start(t, 1)
		out = serveRefused(t, "--store", plain.URL(), "--replicas", "1", "--nats-ca", f.CA)
		require.Contains(t, out, "secure connection not available")
		require.Contains(t, out, "the nodes do not offer it")
	})

	t.Run("ClientCert", func(t *testing.T) {
		// Nodes that verify clients (tls { ca_file, verify: true }): the
		// gateway's certificate and key by flag, or by environment, with
		// the CA and the URLs by environment too.
		f := jstest.NewTLS(t)
		c := jstest.Start(t, 1, jstest.WithClientVerify(f))
		url := c.URLs()[0]
		secureGateway(t, "t", "--store", url, "--nats-ca", f.CA, "--nats-cert", f.ClientCert, "--nats-key", f.ClientKey)
		secureGatewayEnv(t, "t2", []string{"TOPICGATE_STORE=" + url, "TOPICGATE_NATS_CA=" + f.CA,
			"TOPICGATE_NATS_CERT=" + f.ClientCert, "TOPICGATE_NATS_KEY=" + f.ClientKey})

		out := serveRefused(t, "--store", url, "--replicas", "1", "--nats-ca", f.CA)
		require.Contains(t, out, "no TLS connection to the NATS cluster at "+url)
		// TLS 1.3 reports the refusal after the handshake, as an alert or
		// as a closed connection, whichever the client sees first.
		require.Contains(t, out, "give --nats-cert and --nats-key a certificate, PEM, that the CA in the nodes' tls { ca_file } signed")
		other := jstest.NewTLS(t) // a certificate the nodes' CA did not sign
		out = serveRefused(t, "--store", url, "--replicas", "1", "--nats-ca", f.CA, "--nats-cert", other.ClientCert, "--nats-key", other.ClientKey)
		require.Contains(t, out, "give --nats-cert and --nats-key a certificate, PEM, that the CA in the nodes' tls { ca_file } signed")
		out = serveRefused(t, "--store", url, "--replicas", "1", "--nats-ca", f.CA, "--nats-cert", f.ClientCert)
		require.Contains(t, out, "--nats-cert and --nats-key go together")
		out = serveRefused(t, "--store", url, "--replicas", "1", "--nats-ca", f.CA, "--nats-cert", f.ClientCert, "--nats-key", f.CA)
		require.Contains(t, out, "are not a PEM certificate and its key")
	})

	t.Run("CredsByEnvironment", func(t *testing.T) {
		op := jstest.NewOperator(t)
		c := jstest.Start(t, 1, jstest.WithOperator(op))
		secureGatewayEnv(t, "t", []string{"TOPICGATE_NATS_CREDS=" + op.Creds(t, "gateway")}, "--store", c.URL())
	})

	t.Run("Creds", func(t *testing.T) {
		op := jstest.NewOperator(t)
		c := jstest.Start(t, 1, jstest.WithOperator(op))
		secureGateway(t, "t", "--store", c.URL(), "--nats-creds", op.Creds(t, "gateway"))

		for _, args := range [][]string{nil, {"--nats-creds", op.ForeignCreds(t, "stranger")}} {
			out := serveRefused(t, append([]string{"--store", c.URL(), "--replicas", "1"}, args...)...)
			require.Contains(t, out, "the NATS cluster refused the credentials at "+c.URL())
			require.Contains(t, out, "give --nats-creds the .creds file of a user the cluster knows")
		}
		out := serveRefused(t, "--store", c.URL(), "--replicas", "1", "--nats-creds", c.Nodes().Node(0).Dir+"/nope.creds")
		require.Contains(t, out, "--nats-creds: open ")
		out = serveRefused(t, "--store", c.URL(), "--replicas", "1", "--nats-creds", jstest.NewTLS(t).CA)
		require.Contains(t, out, "is not a NATS .creds file")
	})
}

// TestClusterSecureFailover: a gateway told only one node's tls:// URL,
// with --nats-ca and --nats-creds, on three nodes in operator mode with
// TLS, goes on through the others (found from the cluster: nats.go gives
// them the same TLS configuration and credentials) when that node is
// killed.
func TestClusterSecureFailover(t *testing.T) {
	op := jstest.NewOperator(t)
	f := jstest.NewTLS(t)
	ts := time.Now()
	c := jstest.Start(t, 3, jstest.WithOperator(op), jstest.WithTLS(f))
	t.Logf("3 nodes up in %v", time.Since(ts).Round(time.Millisecond))
	a, err := start(config{Listen: "127.0.0.1:0", Store: c.URLs()[0], LogLevel: slog.LevelError,
		NATS: natsConfig{Replicas: 3, Creds: op.Creds(t, "gateway"), CA: f.CA, Timeout: 2 * time.Second,
			// The nodes may still enable the account's JetStream.
			StartTimeout: 30 * time.Second}})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	conn := connect(t, a)
	exec(t, conn, "CREATE TOPIC t")
	exec(t, conn, "INSERT INTO t (data) VALUES ('before')")
	t.Logf("gateway serving %v after the start", time.Since(ts).Round(time.Millisecond))
	leader := c.StreamLeader(jetstream.DefaultStream)
	c.Kill(0)
	var tries int
	d := within(t, 30*time.Second, func() error {
		tries++
		_, err := conn.Exec(context.Background(), "INSERT INTO t (data) VALUES ('after')")
		return err
	})
	t.Logf("node 0 (the only URL the gateway was given; stream leader: node %d) killed: an INSERT succeeded %v later (%d attempts)", leader, d.Round(time.Millisecond), tries)
	require.Equal(t, []string{"before", "after"}, queryText(t, conn, "SELECT convert_from(data, 'UTF8') FROM t ORDER BY offset"))
}
