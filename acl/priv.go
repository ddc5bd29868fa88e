package acl

import (
	"fmt"
	"strings"
)

// Priv is a set of privileges. The bits are topicgate's own (they are
// stored in topicstore.ACLItem); the letters are PostgreSQL's aclitem
// letters.
type Priv uint32

// The privileges, with PostgreSQL's aclitem letter of each.
const (
	Insert     Priv = 1 << iota // a
	Select                      // r
	Update                      // w
	Delete                      // d
	Truncate                    // D
	References                  // x
	Trigger                     // t
	Execute                     // X
	Usage                       // U
	Create                      // C
	Connect                     // c
	Temporary                   // T
)

// TopicPrivs is what ALL means ON TOPIC (a table's privileges).
const TopicPrivs = Insert | Select | Update | Delete | Truncate | References | Trigger

// ConsumerPrivs is what ALL means ON CONSUMER: modelled on a sequence's
// USAGE, and only USAGE (reading as the consumer moves its positions).
const ConsumerPrivs = Usage

// SchemaPrivs is what ALL means ON SCHEMA.
const SchemaPrivs = Usage | Create

// privOrder lists the privileges in PostgreSQL's order of aclitem letters,
// ACL_ALL_RIGHTS_STR "arwdDxtXUCTc": TEMPORARY (T) comes before CONNECT
// (c), as PostgreSQL's bits do.
var privOrder = []struct {
	p      Priv
	letter byte
	name   string
}{
	{Insert, 'a', "INSERT"},
	{Select, 'r', "SELECT"},
	{Update, 'w', "UPDATE"},
	{Delete, 'd', "DELETE"},
	{Truncate, 'D', "TRUNCATE"},
	{References, 'x', "REFERENCES"},
	{Trigger, 't', "TRIGGER"},
	{Execute, 'X', "EXECUTE"},
	{Usage, 'U', "USAGE"},
	{Create, 'C', "CREATE"},
	{Temporary, 'T', "TEMPORARY"},
	{Connect, 'c', "CONNECT"},
}

// allPrivs is every privilege this package knows.
const allPrivs = TopicPrivs | Execute | Usage | Create | Connect | Temporary

// Letters returns p's aclitem letters in PostgreSQL's order ("ar").
func (p Priv) Letters() string {
	var b strings.Builder
	for _, o := range privOrder {
		if p&o.p != 0 {
			b.WriteByte(o.letter)
		}
	}
	return b.String()
}

// Names returns the names of p's privileges in PostgreSQL's order
// ("INSERT", "SELECT", ...), as information_schema and messages show them.
func (p Priv) Names() []string {
	var names []string
	for _, o := range privOrder {
		if p&o.p != 0 {
			names = append(names, o.name)
		}
	}
	return names
}

// ParsePriv returns the privilege a GRANT or REVOKE names, ignoring case:
// SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER, EXECUTE,
// USAGE, CREATE, CONNECT, TEMPORARY or TEMP. ALL [PRIVILEGES] is the
// caller's, since what it means depends on the object's kind.
func ParsePriv(word string) (Priv, error) {
	w := strings.ToUpper(word)
	if w == "TEMP" {
		return Temporary, nil
	}
	for _, o := range privOrder {
		if o.name == w {
			return o.p, nil
		}
	}
	// PostgreSQL: privilege_to_string's caller, string_to_privilege.
	return 0, &Error{Code: "42601", Message: fmt.Sprintf("unrecognized privilege type \"%s\"", strings.ToLower(word))}
}

// privOfLetter returns the privilege of an aclitem letter.
func privOfLetter(c byte) (Priv, bool) {
	for _, o := range privOrder {
		if o.letter == c {
			return o.p, true
		}
	}
	return 0, false
}
