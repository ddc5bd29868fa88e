package main

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// startSASLServer starts a test server with --auth scram-sha-256 (so the
// Kafka door requires SASL), an audit log at the returned path, the
// topic "t" and the roles: app (LOGIN, SELECT and INSERT on t), reader
// (LOGIN, SELECT only), writer (LOGIN, INSERT only), nolog (a password
// but no LOGIN), old (its password expired), one (CONNECTION LIMIT 1).
// Each of mods changes the configuration first.
func startSASLServer(t *testing.T, mods ...func(*config)) (*app, string) {
	t.Helper()
	cfg := testConfig(t)
	for _, m := range mods {
		m(&cfg)
	}
	cfg.Auth, cfg.Users = "scram-sha-256", map[string]string{"boss": "bosspw"}
	cfg.KafkaListen = "127.0.0.1:0"
	cfg.AuditLog = filepath.Join(t.TempDir(), "audit.log")
	a := startServer(t, cfg)
	ctx := context.Background()
	boss, err := pgx.Connect(ctx, fmt.Sprintf("postgres://boss:bosspw@%s/postgres?sslmode=disable", a.Addr()))
	require.NoError(t, err)
	t.Cleanup(func() { boss.Close(context.Background()) })
	for _, q := range []string{
		"CREATE TOPIC t",
		"CREATE ROLE app LOGIN PASSWORD 'apppw'",
		"CREATE ROLE reader LOGIN PASSWORD 'readerpw'",
		"CREATE ROLE nolog PASSWORD 'nologpw'",
		"CREATE ROLE writer LOGIN PASSWORD 'writerpw'",
		"GRANT INSERT ON TOPIC t TO writer",
		"CREATE ROLE old LOGIN PASSWORD 'oldpw' VALID UNTIL '2000-01-01'",
		"CREATE ROLE one LOGIN PASSWORD 'onepw' CONNECTION LIMIT 1",
		"GRANT SELECT, INSERT ON TOPIC t TO app",
		"GRANT SELECT ON TOPIC t TO reader",
	} {
		exec(t, boss, q)
	}
	return a, cfg.AuditLog
}

// mechanism is a franz-go SASL mechanism by name.
func mechanism(name, user, pw string) sasl.Mechanism {
	if name == "PLAIN" {
		return plain.Auth{User: user, Pass: pw}.AsMechanism()
	}
	return scram.Auth{User: user, Pass: pw}.AsSha256Mechanism()
}

// TestKafkaSASL: with --auth scram-sha-256 a franz-go client that
// authenticates with PLAIN or SCRAM-SHA-256 acts as its role: app
// produces and fetches, writer (INSERT only) produces; reader's produce is TOPIC_AUTHORIZATION_FAILED; a
// wrong password, an unknown role, a role without LOGIN and an expired
// password all get
// SASL_AUTHENTICATION_FAILED with the same message, and the audit log
// tells them apart as it does PostgreSQL logins.
func TestKafkaSASL(t *testing.T) {
	a, auditPath := startSASLServer(t)
	for i, mech := range []string{"PLAIN", "SCRAM-SHA-256"} {
		t.Run(mech, func(t *testing.T) {
			ctx := testCtx(t)
			cl := kafkaClient(t, a, kgo.SASL(mechanism(mech, "app", "apppw")))
			val := "from app via " + mech
			require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte(val)}).FirstErr())
			recs := consumeN(t, a, "t", 0, int64(2*i), 1, kgo.SASL(mechanism(mech, "app", "apppw")))
			require.Equal(t, val, string(recs[0].Value))

			wr := kafkaClient(t, a, kgo.SASL(mechanism(mech, "writer", "writerpw")), kgo.DisableIdempotentWrite())
			require.NoError(t, wr.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("from writer")}).FirstErr(),
				"INSERT alone finds the topic (Kafka's WRITE implies DESCRIBE) and produces")

			rd := kafkaClient(t, a, kgo.SASL(mechanism(mech, "reader", "readerpw")), kgo.DisableIdempotentWrite())
			err := rd.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("no")}).FirstErr()
			require.ErrorIs(t, err, kerr.TopicAuthorizationFailed)

			var msgs []string
			for _, c := range []struct{ user, pw string }{{"app", "wrong"}, {"ghost", "apppw"}, {"nolog", "nologpw"}, {"old", "oldpw"}} {
				bad := kafkaClient(t, a, kgo.SASL(mechanism(mech, c.user, c.pw)))
				_, err := bad.Request(ctx, kmsg.NewPtrMetadataRequest())
				require.ErrorIs(t, err, kerr.SaslAuthenticationFailed, c.user)
				msgs = append(msgs, err.Error())
			}
			require.Equal(t, msgs[0], msgs[1], "an unknown role fails as a wrong password")
			require.Equal(t, msgs[0], msgs[2], "a role without LOGIN fails as a wrong password")
			require.Equal(t, msgs[0], msgs[3], "an expired password fails as a wrong one")
			require.NotContains(t, msgs[0], "app")
		})
	}
	var got []string
	for _, l := range readAudit(t, auditPath) {
		if l.Class == "AUTH" && l.Outcome != "ok" {
			got = append(got, l.Role+" "+l.Outcome)
		}
	}
	once := []string{"app 28P01", "ghost 28P01", "nolog 28000", "old 28P01"}
	require.Equal(t, append(once, once...), got)
}

// TestKafkaSASLRequired: with SASL required an unauthenticated
// connection gets ApiVersions (which lists the SASL APIs) and nothing
// else: a Metadata request closes it, as a Kafka SASL listener does.
func TestKafkaSASLRequired(t *testing.T) {
	a, _ := startSASLServer(t)
	r := dialKafka(t, a)
	r.send(request(kmsg.NewPtrApiVersionsRequest(), 3, 1))
	corr, body := r.response()
	require.Equal(t, int32(1), corr)
	av := kmsg.NewPtrApiVersionsResponse()
	av.Version = 3
	require.NoError(t, av.ReadFrom(append([]byte(nil), body...)))
	keys := map[int16]bool{}
	for _, k := range av.ApiKeys {
		keys[k.ApiKey] = true
	}
	require.True(t, keys[17] && keys[36], "SaslHandshake and SaslAuthenticate advertised")

	r.send(request(kmsg.NewPtrMetadataRequest(), 1, 2))
	r.closed()
}

// TestKafkaSASLRawV0: a SaslHandshake v0 exchange (raw tokens after the
// handshake, as old clients send) authenticates with PLAIN; a wrong
// password, and a second connection of a role with CONNECTION LIMIT 1,
// close the connection without an answer.
func TestKafkaSASLRawV0(t *testing.T) {
	a, _ := startSASLServer(t)
	raw := func(user, pw string) *rawKafka {
		r := dialKafka(t, a)
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Mechanism = "PLAIN"
		r.send(request(hs, 0, 1))
		_, body := r.response()
		hr := kmsg.NewPtrSASLHandshakeResponse()
		require.NoError(t, hr.ReadFrom(body))
		require.Equal(t, int16(0), hr.ErrorCode)
		require.Equal(t, []string{"PLAIN", "SCRAM-SHA-256"}, hr.SupportedMechanisms)
		tok := "\x00" + user + "\x00" + pw
		r.send(append([]byte{0, 0, 0, byte(len(tok))}, tok...))
		return r
	}
	good := raw("app", "apppw")
	var size [4]byte
	_, err := good.nc.Read(size[:])
	require.NoError(t, err)
	require.Equal(t, [4]byte{}, size, "an empty token: authenticated")
	good.send(request(kmsg.NewPtrMetadataRequest(), 1, 3))
	corr, _ := good.response()
	require.Equal(t, int32(3), corr)

	raw("app", "wrong").closed()

	first := raw("one", "onepw")
	_, err = first.nc.Read(size[:])
	require.NoError(t, err)
	require.Equal(t, [4]byte{}, size)
	raw("one", "onepw").closed()
}

// TestKafkaSASLTLS: with --tls-cert the door is SASL_SSL: franz-go
// authenticates with SCRAM-SHA-256 over TLS and produces and fetches.
func TestKafkaSASLTLS(t *testing.T) {
	certFile, keyFile, pool := writeTestCert(t)
	a, _ := startSASLServer(t, func(cfg *config) { cfg.TLSCert, cfg.TLSKey = certFile, keyFile })
	opts := []kgo.Opt{kgo.DialTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}),
		kgo.SASL(mechanism("SCRAM-SHA-256", "app", "apppw"))}
	cl := kafkaClient(t, a, opts...)
	require.NoError(t, cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "t", Value: []byte("over tls")}).FirstErr())
	require.Equal(t, "over tls", string(consumeN(t, a, "t", 0, 0, 1, opts...)[0].Value))
}

// TestKafkaSASLTrust: with --auth trust SASL is not required, but a
// client that offers it acts as its role: reader may not produce.
func TestKafkaSASLTrust(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC t")
	exec(t, c, "CREATE ROLE reader LOGIN PASSWORD 'readerpw'")
	exec(t, c, "GRANT SELECT ON TOPIC t TO reader")
	ctx := testCtx(t)
	rd := kafkaClient(t, a, kgo.SASL(mechanism("SCRAM-SHA-256", "reader", "readerpw")), kgo.DisableIdempotentWrite())
	err := rd.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("no")}).FirstErr()
	require.ErrorIs(t, err, kerr.TopicAuthorizationFailed)
	anon := kafkaClient(t, a)
	require.NoError(t, anon.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("yes")}).FirstErr())
}

// TestKafkaSASLListen: with SASL required the door may listen beyond
// loopback.
func TestKafkaSASLListen(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth, cfg.Users = "scram-sha-256", map[string]string{"boss": "bosspw"}
	cfg.KafkaListen = "0.0.0.0:0"
	a := startServer(t, cfg)
	require.NotEmpty(t, a.KafkaAddr())
}

// TestKafkaSASLKcat: kcat (librdkafka) authenticates with SCRAM-SHA-256
// and PLAIN over SASL_PLAINTEXT, produces as app and reads it back.
func TestKafkaSASLKcat(t *testing.T) {
	a, _ := startSASLServer(t)
	for i, mech := range []string{"SCRAM-SHA-256", "PLAIN"} {
		args := []string{"-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=" + mech,
			"-X", "sasl.username=app", "-X", "sasl.password=apppw"}
		kcat(t, a, "via "+mech+"\n", append(args, "-t", "t", "-P")...)
		out := kcat(t, a, "", append(args, "-C", "-e", "-t", "t", "-o", fmt.Sprint(i), "-c", "1", "-f", "%o %s\n")...)
		require.Equal(t, fmt.Sprintf("%d via %s\n", i, mech), out)
	}
	meta := kcat(t, a, "", "-L", "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN",
		"-X", "sasl.username=app", "-X", "sasl.password=apppw")
	require.True(t, strings.Contains(meta, `topic "t" with 1 partitions:`), meta)
}

// TestKafkaSASLRawV0SCRAM: SCRAM-SHA-256 after a SaslHandshake v0, its
// messages as raw tokens, run by franz-go's SCRAM client: the server's
// signature checks out and the connection is then served.
func TestKafkaSASLRawV0SCRAM(t *testing.T) {
	a, _ := startSASLServer(t)
	r := dialKafka(t, a)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Mechanism = "SCRAM-SHA-256"
	r.send(request(hs, 0, 1))
	_, body := r.response()
	hr := kmsg.NewPtrSASLHandshakeResponse()
	require.NoError(t, hr.ReadFrom(body))
	require.Equal(t, int16(0), hr.ErrorCode)

	sendToken := func(tok []byte) {
		r.send(append(binary.BigEndian.AppendUint32(nil, uint32(len(tok))), tok...))
	}
	readToken := func() []byte {
		var size [4]byte
		_, err := io.ReadFull(r.nc, size[:])
		require.NoError(t, err)
		tok := make([]byte, binary.BigEndian.Uint32(size[:]))
		_, err = io.ReadFull(r.nc, tok)
		require.NoError(t, err)
		return tok
	}
	sess, first, err := mechanism("SCRAM-SHA-256", "app", "apppw").Authenticate(testCtx(t), a.KafkaAddr())
	require.NoError(t, err)
	sendToken(first)
	done, final, err := sess.Challenge(readToken())
	require.NoError(t, err)
	require.False(t, done)
	sendToken(final)
	done, _, err = sess.Challenge(readToken())
	require.NoError(t, err, "the server's signature")
	require.True(t, done)

	r.send(request(kmsg.NewPtrMetadataRequest(), 1, 2))
	corr, _ := r.response()
	require.Equal(t, int32(2), corr)
}
