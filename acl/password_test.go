package acl

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
)

// TestSCRAMVerifierLogsIn plays an RFC 5802 exchange against a stored
// verifier: the client derives its proof from the password, and the
// server checks it with StoredKey alone and proves itself with ServerKey.
func TestSCRAMVerifierLogsIn(t *testing.T) {
	for _, pw := range []string{"secret", "pässwörd", "a b\tc"} {
		v, err := SCRAMVerifier(pw)
		must(t, err)
		s, ok := ParseSCRAM(v)
		if !ok || s.Iterations != 4096 || len(s.Salt) != 16 {
			t.Fatalf("ParseSCRAM(%s) = %+v, %v", v, s, ok)
		}
		authMessage := "n=,r=cnonce,r=cnonce" + "snonce,s=" + base64.StdEncoding.EncodeToString(s.Salt) + ",i=4096,c=biws,r=cnoncesnonce"
		// The client's side.
		salted, err := SaltedPassword(pw, s.Salt, s.Iterations)
		must(t, err)
		clientKey := hmacSHA256(salted, "Client Key")
		storedKey := sha256.Sum256(clientKey)
		clientSig := hmacSHA256(storedKey[:], authMessage)
		proof := make([]byte, len(clientKey))
		for i := range proof {
			proof[i] = clientKey[i] ^ clientSig[i]
		}
		// The server's side: recover ClientKey from the proof, hash it.
		serverSig := hmacSHA256(s.StoredKey, authMessage)
		recovered := make([]byte, len(proof))
		for i := range proof {
			recovered[i] = proof[i] ^ serverSig[i]
		}
		if got := sha256.Sum256(recovered); !hmac.Equal(got[:], s.StoredKey) {
			t.Errorf("%q: the client's proof does not verify", pw)
		}
		if !hmac.Equal(hmacSHA256(hmacSHA256(salted, "Server Key"), authMessage), hmacSHA256(s.ServerKey, authMessage)) {
			t.Errorf("%q: the server signature differs", pw)
		}
		// A wrong password fails.
		wrong, _ := SaltedPassword(pw+"x", s.Salt, s.Iterations)
		if w := sha256.Sum256(hmacSHA256(wrong, "Client Key")); hmac.Equal(w[:], s.StoredKey) {
			t.Errorf("%q: a wrong password verifies", pw)
		}
	}
}

// Verifiers PostgreSQL 15.18 stored for CREATE ROLE ... PASSWORD with
// password_encryption = 'scram-sha-256': recomputed from their salt, the
// same text (the third one goes through SASLprep: a soft hyphen mapped
// to nothing, U+2168 normalized to "IX").
func TestSCRAMAgainstPostgres(t *testing.T) {
	for pw, v := range map[string]string{
		"secret":         "SCRAM-SHA-256$4096:fGFYhPOCl4gUXllTqDe+iA==$5Gc72C4iQ5V/fHM5/FTZokaoCQXSpTzsPPmP5cQDaKw=:7IrmBcOa0P29780p62SgselFiRd5OGttJJpoDh0jhTA=",
		"pässwörd":       "SCRAM-SHA-256$4096:3Qowu3UlVHOfxYrVsj/rdA==$7CQFMg40C/s4rZ7EBNUOHwqGL06ZK4+8WZz/Kz3rLFQ=:qO5XTnHiQ87+k8SPIV24iK3oZVs5o+BMQ7Ehj4sqtig=",
		"I\u00ADX\u2168": "SCRAM-SHA-256$4096:JIv3kqeQeQBcDlTeqUXeJg==$JygHaG62/J3nRPjU0FqFkSW9zQOYjoqPyNOeL+fOgog=:u2PWnmKXpKxkNmuZFvAcyVgD8VMz6S2QrYs4zl/YqYo=",
	} {
		s, ok := ParseSCRAM(v)
		if !ok || s.Iterations != 4096 || len(s.Salt) != 16 || len(s.StoredKey) != 32 || len(s.ServerKey) != 32 {
			t.Fatalf("ParseSCRAM(%s) = %+v, %v", v, s, ok)
		}
		got, err := scramVerifierWith(pw, s.Salt, s.Iterations)
		if err != nil || got != v {
			t.Errorf("%q:\n got %s\nwant %s", pw, got, v)
		}
		if stored, _ := StoredPassword("kat", v, false); stored != v {
			t.Errorf("a SCRAM verifier is not stored as is")
		}
	}
	for _, bad := range []string{"", "md5abc", "SCRAM-SHA-256$x:c2FsdA==$a:b", "SCRAM-SHA-256$4096:c2FsdA==$",
		"SCRAM-SHA-256$4096:!!$a:b", "SCRAM-SHA-256$4096:c2FsdA==$c2FsdA==:c2FsdA=="} {
		if _, ok := ParseSCRAM(bad); ok {
			t.Errorf("ParseSCRAM(%q) succeeded", bad)
		}
	}
}

func TestMD5AndStoredPassword(t *testing.T) {
	// SELECT 'md5' || md5('secret' || 'app') on PostgreSQL 15.18.
	if got := MD5Verifier("app", "secret"); got != "md56a422f785c9e20873908ce25d1736ae2" {
		t.Errorf("MD5Verifier = %s", got)
	}
	md5v := MD5Verifier("app", "secret")
	if got, _ := StoredPassword("app", md5v, false); got != md5v {
		t.Error("an md5 verifier is stored as is")
	}
	scram, _ := SCRAMVerifier("secret")
	if got, _ := StoredPassword("app", scram, true); got != scram {
		t.Error("a SCRAM verifier is stored as is")
	}
	if got, _ := StoredPassword("app", "secret", true); got != md5v {
		t.Errorf("md5 encryption: %s", got)
	}
	got, _ := StoredPassword("app", "secret", false)
	if _, ok := ParseSCRAM(got); !ok || strings.Contains(got, "secret") {
		t.Errorf("scram encryption: %s", got)
	}
	empty, _ := SCRAMVerifier("")
	for _, pw := range []string{"", MD5Verifier("app", ""), empty} {
		if got, _ := StoredPassword("app", pw, false); got != "" {
			t.Errorf("empty password %q stored as %q", pw, got)
		}
	}
}

func TestSASLprep(t *testing.T) {
	for in, want := range map[string]string{
		"secret":         "secret",
		"I\u00ADX":       "IX",             // mapped to nothing
		"a\u00A0b":       "a b",            // non-ASCII space
		"\u2168":         "IX",             // NFKC
		"a\u0007b\u00e9": "a\u0007b\u00e9", // prohibited: as is
		"\xff\xfe":       "\xff\xfe",
	} {
		if got := saslPrep(in); got != want {
			t.Errorf("saslPrep(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckPassword: a password in clear matches its SCRAM and md5
// verifiers, and no other password or verifier matches.
func TestCheckPassword(t *testing.T) {
	v, err := SCRAMVerifier("sekrit")
	if err != nil {
		t.Fatal(err)
	}
	m := MD5Verifier("alice", "sekrit")
	for _, c := range []struct {
		pw, verifier string
		want         bool
	}{
		{"sekrit", v, true}, {"sekrit", m, true}, {"sekrit!", v, false}, {"sekrit!", m, false},
		{"sekrit", "", false}, {"sekrit", "sekrit", false},
	} {
		if got := CheckPassword("alice", c.pw, c.verifier); got != c.want {
			t.Errorf("CheckPassword(%q, %q) = %v, want %v", c.pw, c.verifier, got, c.want)
		}
	}
}
