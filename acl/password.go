package acl

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// SCRAM parameters PostgreSQL uses (scram_sha_256_iterations' default,
// SCRAM_DEFAULT_SALT_LEN).
const (
	SCRAMIterations = 4096
	SCRAMSaltLen    = 16
)

// SCRAMSecret is a parsed SCRAM-SHA-256 verifier.
type SCRAMSecret struct {
	Iterations                 int
	Salt, StoredKey, ServerKey []byte
}

// SCRAMVerifier returns PostgreSQL's stored form of password for
// SCRAM-SHA-256 (RFC 5802, 7677), with a random 16-byte salt and 4096
// iterations: "SCRAM-SHA-256$4096:<salt>$<StoredKey>:<ServerKey>", base64.
func SCRAMVerifier(password string) (string, error) {
	salt := make([]byte, SCRAMSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	return scramVerifierWith(password, salt, SCRAMIterations)
}

// scramVerifierWith is SCRAMVerifier with a given salt and iteration count.
func scramVerifierWith(password string, salt []byte, iter int) (string, error) {
	salted, err := SaltedPassword(password, salt, iter)
	if err != nil {
		return "", err
	}
	stored := sha256.Sum256(hmacSHA256(salted, "Client Key"))
	server := hmacSHA256(salted, "Server Key")
	b64 := base64.StdEncoding.EncodeToString
	return "SCRAM-SHA-256$" + strconv.Itoa(iter) + ":" + b64(salt) + "$" + b64(stored[:]) + ":" + b64(server), nil
}

// SaltedPassword is SCRAM's Hi(Normalize(password), salt, i): PBKDF2 with
// HMAC-SHA-256 over the SASLprep'd password (the password as is when
// SASLprep refuses it, as PostgreSQL does).
func SaltedPassword(password string, salt []byte, iter int) ([]byte, error) {
	return pbkdf2.Key(sha256.New, saslPrep(password), salt, iter, sha256.Size)
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// ParseSCRAM parses a SCRAM-SHA-256 verifier as PostgreSQL's
// parse_scram_secret: it reports false for anything else.
func ParseSCRAM(verifier string) (SCRAMSecret, bool) {
	var s SCRAMSecret
	rest, ok := strings.CutPrefix(verifier, "SCRAM-SHA-256$")
	if !ok {
		return s, false
	}
	iterSalt, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return s, false
	}
	iterText, saltText, ok1 := strings.Cut(iterSalt, ":")
	storedText, serverText, ok2 := strings.Cut(keys, ":")
	if !ok1 || !ok2 {
		return s, false
	}
	iter, err := strconv.Atoi(iterText)
	if err != nil || iter <= 0 {
		return s, false
	}
	dec := base64.StdEncoding.DecodeString
	salt, err1 := dec(saltText)
	stored, err2 := dec(storedText)
	server, err3 := dec(serverText)
	if err1 != nil || err2 != nil || err3 != nil || len(stored) != sha256.Size || len(server) != sha256.Size {
		return s, false
	}
	return SCRAMSecret{Iterations: iter, Salt: salt, StoredKey: stored, ServerKey: server}, true
}

// MD5Verifier returns PostgreSQL's md5 form: "md5" and the hex MD5 of the
// password followed by the user name.
func MD5Verifier(user, password string) string {
	sum := md5.Sum([]byte(password + user))
	return "md5" + hex.EncodeToString(sum[:])
}

// isMD5 reports whether s is in the md5 stored form (get_password_type).
func isMD5(s string) bool {
	if len(s) != 35 || !strings.HasPrefix(s, "md5") {
		return false
	}
	for _, c := range s[3:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// StoredPassword returns what CREATE or ALTER ROLE ... PASSWORD password
// stores for user: a password already in the SCRAM or md5 form as is
// (PostgreSQL does that), else its md5 form with md5
// (password_encryption = md5), else its SCRAM form. An empty password,
// or an md5 form of the empty one, gives "": PostgreSQL clears the
// password with the NOTICE "empty string is not a valid password,
// clearing password", the caller's to send.
func StoredPassword(user, password string, md5 bool) (string, error) {
	switch {
	case password == "" || password == MD5Verifier(user, ""):
		return "", nil
	case isMD5(password):
		return password, nil
	case strings.HasPrefix(password, "SCRAM-SHA-256$"):
		if s, ok := ParseSCRAM(password); ok {
			if v, _ := scramVerifierWith("", s.Salt, s.Iterations); v == password {
				return "", nil
			}
			return password, nil
		}
	}
	if md5 {
		return MD5Verifier(user, password), nil
	}
	return SCRAMVerifier(password)
}

// saslPrep is RFC 4013's SASLprep as PostgreSQL's pg_saslprep applies it
// to a password: pure ASCII as is; else non-ASCII spaces mapped to a
// space, "commonly mapped to nothing" characters removed, NFKC; and when
// the input is not UTF-8 or the result holds a prohibited character, the
// password as is. (The check of code points unassigned in Unicode 3.2 and
// of bidirectional strings is left out.)
func saslPrep(password string) string {
	ascii := true
	for i := 0; i < len(password); i++ {
		ascii = ascii && password[i] < 0x80
	}
	if ascii || !utf8.ValidString(password) {
		return password
	}
	var b strings.Builder
	for _, r := range password {
		switch {
		case mappedToNothing(r):
		case r != ' ' && unicode.Is(unicode.Zs, r):
			b.WriteRune(' ')
		default:
			b.WriteRune(r)
		}
	}
	out := norm.NFKC.String(b.String())
	if out == "" {
		return password
	}
	for _, r := range out {
		if prohibited(r) {
			return password
		}
	}
	return out
}

// mappedToNothing is RFC 3454 table B.1.
func mappedToNothing(r rune) bool {
	switch r {
	case 0xAD, 0x34F, 0x1806, 0x180B, 0x180C, 0x180D, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF:
		return true
	}
	return r >= 0xFE00 && r <= 0xFE0F
}

// prohibited is RFC 4013's prohibited output (tables C.1.2 to C.9).
func prohibited(r rune) bool {
	switch {
	case r != ' ' && unicode.Is(unicode.Zs, r): // C.1.2
		return true
	case unicode.Is(unicode.Cc, r), r == 0x6DD, r == 0x70F, r == 0x180E, r >= 0x200C && r <= 0x200F,
		r >= 0x2028 && r <= 0x2029, r >= 0x2060 && r <= 0x2063, r >= 0x206A && r <= 0x206F,
		r == 0xFEFF, r >= 0xFFF9 && r <= 0xFFFC, r >= 0x1D173 && r <= 0x1D17A: // C.2
		return true
	case unicode.Is(unicode.Co, r), unicode.Is(unicode.Cs, r): // C.3, C.5
		return true
	case r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE: // C.4
		return true
	case r >= 0xFFF9 && r <= 0xFFFD, r >= 0x2FF0 && r <= 0x2FFB: // C.6, C.7
		return true
	case r == 0x340, r == 0x341, r == 0x200E, r == 0x200F, r >= 0x202A && r <= 0x202E: // C.8
		return true
	case r == 0xE0001, r >= 0xE0020 && r <= 0xE007F: // C.9
		return true
	}
	return false
}

// CheckPassword reports whether password, sent in clear (PostgreSQL's
// "password" method, Kafka's SASL PLAIN), matches user's stored verifier:
// a SCRAM-SHA-256 verifier or an md5 hash.
func CheckPassword(user, password, verifier string) bool {
	if s, ok := ParseSCRAM(verifier); ok {
		salted, err := SaltedPassword(password, s.Salt, s.Iterations)
		if err != nil {
			return false
		}
		stored := sha256.Sum256(hmacSHA256(salted, "Client Key"))
		return subtle.ConstantTimeCompare(stored[:], s.StoredKey) == 1 &&
			subtle.ConstantTimeCompare(hmacSHA256(salted, "Server Key"), s.ServerKey) == 1
	}
	if isMD5(verifier) {
		return subtle.ConstantTimeCompare([]byte(MD5Verifier(user, password)), []byte(verifier)) == 1
	}
	return false
}
