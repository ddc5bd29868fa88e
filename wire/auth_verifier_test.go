package wire

import (
	"crypto/md5"
	"encoding/hex"
	"testing"

	"github.com/jackc/pgx/v5"

	"topicgate/internal/scram"
)

// TestAuthStoredVerifiers: users whose passwords the server knows only as
// verifiers (Config.Credentials) log in by every method a verifier can
// answer, as PostgreSQL: SCRAM verifiers by scram-sha-256, password and
// md5 (which falls back to SCRAM), md5 hashes by md5 and password but not
// by scram-sha-256.
func TestAuthStoredVerifiers(t *testing.T) {
	s := scram.Derive("scram-pw", []byte("0123456789abcdef"), 4096)
	inner := md5.Sum([]byte("md5-pw" + "hashed"))
	creds := map[string]Credential{
		"scrammed": {SCRAM: &SCRAMSecret{Iterations: 4096, Salt: s.Salt, StoredKey: s.StoredKey, ServerKey: s.ServerKey}},
		"hashed":   {MD5: "md5" + hex.EncodeToString(inner[:])},
	}
	lookup := func(user string) (Credential, bool) { c, ok := creds[user]; return c, ok }
	cases := []struct {
		method, user, pw string
		ok               bool
	}{
		{"scram-sha-256", "scrammed", "scram-pw", true},
		{"scram-sha-256", "scrammed", "nope", false},
		{"scram-sha-256", "hashed", "md5-pw", false},
		{"password", "scrammed", "scram-pw", true},
		{"password", "scrammed", "nope", false},
		{"password", "hashed", "md5-pw", true},
		{"password", "hashed", "nope", false},
		{"md5", "scrammed", "scram-pw", true},
		{"md5", "hashed", "md5-pw", true},
		{"md5", "hashed", "nope", false},
		{"md5", "nobody", "md5-pw", false},
	}
	addrs := map[string]string{}
	for _, m := range []string{"scram-sha-256", "password", "md5"} {
		_, addrs[m] = startServer(t, Config{Auth: m, Users: map[string]string{"boot": "x"}, Credentials: lookup}, &fakeHandler{})
	}
	ctx := testCtx(t)
	for _, tc := range cases {
		c, err := pgx.Connect(ctx, connString(addrs[tc.method], tc.user, tc.pw, ""))
		if tc.ok {
			require.NoError(t, err, tc)
			require.NoError(t, c.Close(ctx))
			continue
		}
		require.Equal(t, "28P01", pgCode(err), tc)
		require.ErrorContains(t, err, `password authentication failed for user "`+tc.user+`"`)
	}
}
