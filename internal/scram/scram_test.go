package scram

import (
	"crypto/sha256"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVector runs RFC 7677's example exchange (section 3) through Start
// and Finish, with the server nonce the RFC's.
func TestVector(t *testing.T) {
	rawSalt := []byte{0x5b, 0x6d, 0x99, 0x68, 0x9d, 0x12, 0x35, 0x8e, 0xec, 0xa0, 0x4b, 0x14, 0x12, 0x36, 0xfa, 0x81}
	s := Derive("pencil", rawSalt, 4096)
	first, err := ParseClientFirst([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"))
	require.NoError(t, err)
	require.Equal(t, "user", first.User)
	x := &Exchange{first: first, secret: s, nonce: "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"}
	x.serverFirst = "r=" + x.nonce + ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
	final := "c=biws,r=" + x.nonce + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	serverFinal, ok, err := x.Finish([]byte(final))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", serverFinal)
	require.True(t, s.Matches("pencil"))
	require.False(t, s.Matches("pen"))

	_, ok, err = x.Finish([]byte("c=biws,r=" + x.nonce + ",p=" + base64.StdEncoding.EncodeToString(make([]byte, sha256.Size))))
	require.NoError(t, err)
	require.False(t, ok)
}

// TestMalformed: messages that do not parse or belong to the exchange are
// errors, not failed proofs.
func TestMalformed(t *testing.T) {
	for _, m := range []string{"", "x,,n=u,r=a", "n,a=z,n=u,r=a", "n,,n=u", "n,,n=u,r=a,m=x"} {
		_, err := ParseClientFirst([]byte(m))
		require.Error(t, err, m)
	}
	_, err := ParseClientFirst([]byte("p=tls-unique,,n=u,r=a"))
	require.ErrorIs(t, err, ErrChannelBinding)
	first, err := ParseClientFirst([]byte("n,,n=a=2Cb=3Dc,r=abc"))
	require.NoError(t, err)
	require.Equal(t, "a,b=c", first.User)
	x, serverFirst, err := Start(first, Mock())
	require.NoError(t, err)
	require.Contains(t, serverFirst, "r=abc")
	for _, m := range []string{"c=biws,r=abc", "c=xx,r=" + x.nonce + ",p=AA==", "c=biws,r=abc,p=AA==", "c=biws,r=" + x.nonce + ",p=AA=="} {
		_, _, err := x.Finish([]byte(m))
		require.Error(t, err, m)
	}
}

// FuzzClientMessages: no client-first or client-final message panics,
// and a parsed client-first message has a nonce.
func FuzzClientMessages(f *testing.F) {
	f.Add([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"), []byte("c=biws,r=x,p=AA=="))
	f.Add([]byte("y,,n=,r=a"), []byte(",p="))
	f.Fuzz(func(t *testing.T, first, final []byte) {
		cf, err := ParseClientFirst(first)
		if err != nil {
			return
		}
		if cf.Nonce == "" {
			t.Fatalf("parsed %q without a nonce", first)
		}
		x, _, err := Start(cf, Mock())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := x.Finish(final); ok {
			t.Fatalf("a mock secret accepted %q", final)
		}
	})
}

// TestRepeatedNonce: librdkafka's client-final nonce (the client nonce,
// then the server's whole nonce) passes only when the exchange allows
// it.
func TestRepeatedNonce(t *testing.T) {
	s := Derive("pw", []byte("0123456789abcdef"), 4096)
	first, err := ParseClientFirst([]byte("n,,n=u,r=cn"))
	require.NoError(t, err)
	for _, allow := range []bool{false, true} {
		x, _, err := Start(first, s)
		require.NoError(t, err)
		x.RepeatedNonce = allow
		_, _, err = x.Finish([]byte("c=biws,r=cn" + x.nonce + ",p=" + base64.StdEncoding.EncodeToString(make([]byte, sha256.Size))))
		if allow {
			require.NoError(t, err)
		} else {
			require.Error(t, err)
		}
	}
}
