package jstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"topicgate/topicstore/jetstream/natsnode"
)

// WithUsers makes the nodes require a user name and password of every
// client (nats://user:password@host:port).
func WithUsers(users map[string]string) Option {
	return func(c *natsnode.Config) { c.Users = users }
}

// TLSFiles are PEM files of a throwaway CA and of a certificate it signed
// for 127.0.0.1 and localhost, with its key.
type TLSFiles struct {
	CA, Cert, Key string
	// ClientCert and ClientKey are a client certificate the CA signed
	// (for nodes that verify clients: WithClientVerify).
	ClientCert, ClientKey string
}

// WithTLS makes the nodes' client port require TLS with f's certificate
// (URLs are then tls://).
func WithTLS(f TLSFiles) Option {
	return func(c *natsnode.Config) { c.TLSCert, c.TLSKey = f.Cert, f.Key }
}

// WithClientVerify is WithTLS whose nodes also require a client
// certificate signed by f's CA.
func WithClientVerify(f TLSFiles) Option {
	return func(c *natsnode.Config) { c.TLSCert, c.TLSKey, c.TLSVerifyCA = f.Cert, f.Key, f.CA }
}

// NewTLS writes a new CA, a server certificate and a client certificate
// it signed (ECDSA P-256, valid for an hour) into a directory of t's.
func NewTLS(t testing.TB) TLSFiles {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "topicgate test CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvDER, keyDER := issue(t, caCert, caKey, &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	cliDER, cliKeyDER := issue(t, caCert, caKey, &x509.Certificate{
		SerialNumber: big.NewInt(3),
		Subject:      pkix.Name{CommonName: "topicgate gateway"},
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	f := TLSFiles{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "server.pem"), Key: filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem")}
	writePEM(t, f.CA, "CERTIFICATE", caDER)
	writePEM(t, f.Cert, "CERTIFICATE", srvDER)
	writePEM(t, f.Key, "EC PRIVATE KEY", keyDER)
	writePEM(t, f.ClientCert, "CERTIFICATE", cliDER)
	writePEM(t, f.ClientKey, "EC PRIVATE KEY", cliKeyDER)
	return f
}

// issue signs tmpl (valid for an hour, for digital signatures) with the
// CA for a new ECDSA P-256 key, and returns the certificate and the key,
// DER.
func issue(t testing.TB, ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl.NotBefore, tmpl.NotAfter, tmpl.KeyUsage = now.Add(-time.Minute), now.Add(time.Hour), x509.KeyUsageDigitalSignature
	if cert, err = x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey); err != nil {
		t.Fatal(err)
	}
	if key, err = x509.MarshalECPrivateKey(k); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Operator is a throwaway NATS operator with a system account and one
// account with JetStream (unlimited), ready for WithOperator; Creds mints
// users of that account.
type Operator struct {
	Config  *natsnode.Operator
	account nkeys.KeyPair
	dir     string
}

// WithOperator runs the nodes in operator mode trusting op.
func WithOperator(op *Operator) Option {
	return func(c *natsnode.Config) { c.Operator = op.Config }
}

// NewOperator creates the operator's, the system account's and the
// account's keys and JWTs.
func NewOperator(t testing.TB) *Operator {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	okp, err := nkeys.CreateOperator()
	must(err)
	opub, err := okp.PublicKey()
	must(err)

	sys, sysJWT := newAccount(t, okp, "SYS", false)
	acc, accJWT := newAccount(t, okp, "TOPICGATE", true)
	sysPub, err := sys.PublicKey()
	must(err)
	accPub, err := acc.PublicKey()
	must(err)

	oc := jwt.NewOperatorClaims(opub)
	oc.Name = "topicgate-test"
	oc.SystemAccount = sysPub
	opJWT, err := oc.Encode(okp)
	must(err)
	return &Operator{
		Config: &natsnode.Operator{JWT: opJWT, SystemAccount: sysPub,
			Accounts: map[string]string{sysPub: sysJWT, accPub: accJWT}},
		account: acc,
		dir:     t.TempDir(),
	}
}

func newAccount(t testing.TB, operator nkeys.KeyPair, name string, jetStream bool) (nkeys.KeyPair, string) {
	t.Helper()
	kp, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	ac := jwt.NewAccountClaims(pub)
	ac.Name = name
	if jetStream {
		ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1, MaxAckPending: -1}
	}
	s, err := ac.Encode(operator)
	if err != nil {
		t.Fatal(err)
	}
	return kp, s
}

// Creds writes a .creds file (user JWT and NKey seed) of a new user of
// op's account, named name, and returns its path.
func (op *Operator) Creds(t testing.TB, name string) string {
	t.Helper()
	return writeCreds(t, op.dir, name, op.account)
}

// ForeignCreds writes a .creds file of a user whose account the operator
// never signed: the nodes refuse it.
func (op *Operator) ForeignCreds(t testing.TB, name string) string {
	t.Helper()
	kp, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	return writeCreds(t, op.dir, name, kp)
}

func writeCreds(t testing.TB, dir, name string, account nkeys.KeyPair) string {
	t.Helper()
	ukp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	upub, err := ukp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	uc := jwt.NewUserClaims(upub)
	uc.Name = name
	userJWT, err := uc.Encode(account)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := ukp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	creds, err := jwt.FormatUserConfig(userJWT, seed)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".creds")
	if err := os.WriteFile(path, creds, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
