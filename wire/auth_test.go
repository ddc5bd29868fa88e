package wire

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestAuthMethods(t *testing.T) {
	users := map[string]string{"alice": "s3cret", "bob": "pässwörd"}
	for _, method := range []string{"scram-sha-256", "md5", "password"} {
		t.Run(method, func(t *testing.T) {
			_, addr := startServer(t, Config{Auth: method, Users: users}, &fakeHandler{})
			ctx := testCtx(t)
			for user, pw := range users {
				for range 2 { // the second SCRAM login uses the cached secret
					c, err := pgx.Connect(ctx, connString(addr, user, pw, ""))
					require.NoError(t, err, user)
					require.NoError(t, c.Ping(ctx))
					require.NoError(t, c.Close(ctx))
				}
			}
			for _, bad := range [][2]string{{"alice", "wrong"}, {"mallory", "s3cret"}, {"alice", ""}} {
				_, err := pgx.Connect(ctx, connString(addr, bad[0], bad[1], ""))
				require.Equal(t, "28P01", pgCode(err), bad)
				require.ErrorContains(t, err, `password authentication failed for user "`+bad[0]+`"`)
			}
		})
	}
}

func writeSelfSigned(t *testing.T) (certFile, keyFile string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	return certFile, keyFile
}

func TestTLS(t *testing.T) {
	cert, key := writeSelfSigned(t)
	_, addr := startServer(t, Config{TLSCert: cert, TLSKey: key, Auth: "scram-sha-256", Users: map[string]string{"u": "pw"}}, &fakeHandler{})
	ctx := testCtx(t)
	c, err := pgx.Connect(ctx, connString(addr, "u", "pw", "sslmode=require"))
	require.NoError(t, err)
	_, isTLS := c.PgConn().Conn().(*tls.Conn)
	require.True(t, isTLS, "connection is TLS")
	var n int64
	require.NoError(t, c.QueryRow(ctx, "SELECT 2").Scan(&n, new(string)))
	require.NoError(t, c.Close(ctx))
	// Plain connections still work.
	c = connect(t, addr, "u", "pw", "sslmode=disable")
	require.NoError(t, c.Ping(ctx))

	// Without a certificate the server answers 'N': sslmode=require fails,
	// sslmode=prefer falls back to plain.
	_, addr2 := startServer(t, Config{}, &fakeHandler{})
	_, err = pgx.Connect(ctx, connString(addr2, "u", "", "sslmode=require"))
	require.Error(t, err)
	c = connect(t, addr2, "u", "", "sslmode=prefer")
	require.NoError(t, c.Ping(ctx))

	_, err = NewServer(Config{TLSCert: cert}, &fakeHandler{})
	require.Error(t, err)
}
