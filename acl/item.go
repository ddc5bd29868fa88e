package acl

import (
	"fmt"
	"strings"

	"topicgate/topicstore"
)

// Item is one entry of an access list: the privileges Grantor gave
// Grantee and which of them Grantee may grant on. Grantee "" is PUBLIC.
type Item = topicstore.ACLItem

// safeIdent reports whether aclitemout prints name without quotes: only
// ASCII letters, digits and underscores (putid's isalnum test; bytes
// above 0x7f are not alphanumeric in PostgreSQL's server locale).
func safeIdent(name string) bool {
	for i := 0; i < len(name); i++ {
		if !isIdentByte(name[i]) {
			return false
		}
	}
	return true
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// putid writes a role name as aclitemout does: as is when safe, else in
// double quotes with each double quote doubled.
func putid(b *strings.Builder, name string) {
	if safeIdent(name) {
		b.WriteString(name)
		return
	}
	b.WriteByte('"')
	b.WriteString(strings.ReplaceAll(name, `"`, `""`))
	b.WriteByte('"')
}

// FormatItem returns it as PostgreSQL's aclitemout prints it:
// "app=ar*/postgres", "=r/postgres" for PUBLIC, names quoted when they
// hold anything but ASCII letters, digits and underscores.
func FormatItem(it Item) string {
	var b strings.Builder
	if it.Grantee != "" {
		putid(&b, it.Grantee)
	}
	b.WriteByte('=')
	for _, o := range privOrder {
		if Priv(it.Privs)&o.p != 0 {
			b.WriteByte(o.letter)
		}
		if Priv(it.GrantOptions)&o.p != 0 {
			b.WriteByte('*')
		}
	}
	b.WriteByte('/')
	putid(&b, it.Grantor)
	return b.String()
}

// FormatACL returns items as PostgreSQL prints an aclitem[] such as
// relacl: "{app=ar/postgres,=r/postgres}", quoting an element as
// array_out does. A nil or empty list prints "{}" (a NULL relacl is the
// caller's to print).
func FormatACL(items []Item) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		writeArrayElem(&b, FormatItem(it))
	}
	b.WriteByte('}')
	return b.String()
}

// writeArrayElem writes s as array_out writes an element: in double
// quotes, with backslashes before quotes and backslashes, when s is
// empty, is NULL in any case, or holds a quote, a backslash, a brace, the
// delimiter or white space.
func writeArrayElem(b *strings.Builder, s string) {
	quote := s == "" || strings.EqualFold(s, "NULL")
	for i := 0; i < len(s) && !quote; i++ {
		switch s[i] {
		case '"', '\\', '{', '}', ',', ' ', '\t', '\n', '\r', '\v', '\f':
			quote = true
		}
	}
	if !quote {
		b.WriteString(s)
		return
	}
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
}

// nameDataLen is PostgreSQL's NAMEDATALEN: identifiers are shorter.
const nameDataLen = 64

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// getid reads a name from s as aclitemin's getid does: white space, then
// letters, digits, underscores and double-quoted parts (in which "" is a
// quote), then white space. It returns the name and the rest of s.
func getid(s string) (string, string, error) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	var n []byte
	inQuotes := false
	for ; i < len(s) && (isIdentByte(s[i]) || s[i] == '"' || inQuotes); i++ {
		if s[i] == '"' {
			if !inQuotes {
				inQuotes = true
				continue
			}
			if i+1 >= len(s) || s[i+1] != '"' {
				inQuotes = false
				continue
			}
			i++ // an escaped double quote
		}
		if len(n) >= nameDataLen-1 {
			return "", "", invalidACL("identifier too long", fmt.Sprintf("Identifier must be less than %d characters.", nameDataLen))
		}
		n = append(n, s[i])
	}
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return string(n), s[i:], nil
}

// invalidACL returns aclitemin's 22P02 error.
func invalidACL(msg, detail string) *Error {
	return &Error{Code: CodeInvalidTextRep, Message: msg, Detail: detail}
}

// ParseItem reads an aclitem's text as PostgreSQL's aclitemin does, the
// inverse of FormatItem; it accepts the old "group name" and "user name"
// forms too. Without "/grantor" PostgreSQL defaults the grantor to the
// bootstrap superuser (with a warning); ParseItem returns Grantor "" then,
// for the caller to fill. Whether the roles exist is the caller's to check.
func ParseItem(s string) (Item, error) {
	var it Item
	name, rest, err := getid(s)
	if err != nil {
		return it, err
	}
	if !strings.HasPrefix(rest, "=") {
		if name != "group" && name != "user" {
			return it, &Error{Code: CodeInvalidTextRep, Message: fmt.Sprintf("unrecognized key word: \"%s\"", name), Detail: "ACL key word must be \"group\" or \"user\"."}
		}
		if name, rest, err = getid(rest); err != nil {
			return it, err
		}
		if name == "" {
			return it, invalidACL("missing name", "A name must follow the \"group\" or \"user\" key word.")
		}
	}
	if !strings.HasPrefix(rest, "=") {
		return it, invalidACL("missing \"=\" sign", "")
	}
	rest = rest[1:]
	var privs, opts, read Priv
	for len(rest) > 0 && (isAlpha(rest[0]) || rest[0] == '*') {
		if rest[0] == '*' {
			opts |= read
		} else {
			p, ok := privOfLetter(rest[0])
			if !ok {
				return it, invalidACL("invalid mode character: must be one of \"arwdDxtXUCTcsA\"", "")
			}
			read = p
		}
		privs |= read
		rest = rest[1:]
	}
	it.Grantee, it.Privs, it.GrantOptions = name, uint32(privs), uint32(opts)
	if strings.HasPrefix(rest, "/") {
		if it.Grantor, rest, err = getid(rest[1:]); err != nil {
			return it, err
		}
		if it.Grantor == "" {
			return it, invalidACL("a name must follow the \"/\" sign", "")
		}
	}
	for len(rest) > 0 && isSpace(rest[0]) {
		rest = rest[1:]
	}
	if rest != "" {
		return it, invalidACL("extra garbage at the end of the ACL specification", "")
	}
	return it, nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
