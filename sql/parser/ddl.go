package parser

import (
	"fmt"
	"strconv"
	"strings"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// ddlParser is the recursive-descent parser for CREATE/ALTER/DROP TOPIC and
// for WITH (...) option lists (also used by the pre-pass for hints). toks
// ends with a terminator token (';' or EOF); positions index src.
type ddlParser struct {
	src  string
	toks []token
	i    int
}

func (p *ddlParser) peek() token { return p.toks[p.i] }

func (p *ddlParser) next() token {
	t := p.toks[p.i]
	if t.Kind != tEOF && t.Kind != tSemicolon {
		p.i++
	}
	return t
}

func (p *ddlParser) atEnd() bool {
	k := p.peek().Kind
	return k == tEOF || k == tSemicolon
}

// syntaxErr reports a syntax error at t in PostgreSQL's words.
func (p *ddlParser) syntaxErr(t token) error {
	if t.Kind == tEOF || t.Kind == tSemicolon {
		return errAt(pgerror.CodeSyntaxError, t.Pos, "syntax error at end of input")
	}
	return errAt(pgerror.CodeSyntaxError, t.Pos, "syntax error at or near \"%s\"", p.src[t.Pos:t.End])
}

func (p *ddlParser) keyword(kw string) bool {
	if p.peek().is(kw) {
		p.i++
		return true
	}
	return false
}

func (p *ddlParser) expectKw(kw string) error {
	if !p.keyword(kw) {
		return p.syntaxErr(p.peek())
	}
	return nil
}

func (p *ddlParser) expectP(s string) error {
	if !p.peek().isP(s) {
		return p.syntaxErr(p.peek())
	}
	p.i++
	return nil
}

// name parses a topic or consumer name: an identifier (lower-cased), a
// "quoted" or `backquoted` name (as written).
func (p *ddlParser) name() (string, int, error) {
	t := p.peek()
	switch t.Kind {
	case tIdent:
		p.i++
		return strings.ToLower(t.Val), t.Pos, nil
	case tQIdent, tBQIdent:
		p.i++
		return t.Val, t.Pos, nil
	}
	return "", 0, p.syntaxErr(t)
}

func (p *ddlParser) parseTopicStmt() (sql.Stmt, error) {
	verb := p.next()
	p.next() // TOPIC
	var s sql.Stmt
	var err error
	switch {
	case verb.is("CREATE"):
		s, err = p.createTopic()
	case verb.is("ALTER"):
		s, err = p.alterTopic()
	default:
		s, err = p.dropTopic()
	}
	if err != nil {
		return nil, err
	}
	if !p.atEnd() {
		return nil, p.syntaxErr(p.peek())
	}
	return s, nil
}

func (p *ddlParser) createTopic() (sql.Stmt, error) {
	s := &sql.CreateTopic{}
	if p.peek().is("IF") {
		p.i++
		if err := p.expectKw("NOT"); err != nil {
			return nil, err
		}
		if err := p.expectKw("EXISTS"); err != nil {
			return nil, err
		}
		s.IfNotExists = true
	}
	var err error
	if s.Name, _, err = p.name(); err != nil {
		return nil, err
	}
	if p.peek().isP("(") {
		p.i++
		seen := map[string]bool{}
		for {
			if err := p.expectKw("CONSUMER"); err != nil {
				return nil, err
			}
			nameTok := p.peek()
			c, err := p.consumerDef()
			if err != nil {
				return nil, err
			}
			if seen[c.Name] {
				return nil, errAt(pgerror.CodeDuplicateObject, nameTok.Pos, "consumer %q specified more than once", c.Name)
			}
			seen[c.Name] = true
			s.Consumers = append(s.Consumers, c)
			if p.peek().isP(",") {
				p.i++
				continue
			}
			if err := p.expectP(")"); err != nil {
				return nil, err
			}
			break
		}
	}
	if p.keyword("WITH") {
		if s.Options, err = p.optionList(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// consumerDef parses `name [WITH (options)]` after CONSUMER.
func (p *ddlParser) consumerDef() (sql.ConsumerDef, error) {
	name, pos, err := p.name()
	if err != nil {
		return sql.ConsumerDef{}, err
	}
	c := sql.ConsumerDef{Name: name, Pos: charPos(p.src, pos)}
	if p.keyword("WITH") {
		if c.Options, err = p.optionList(); err != nil {
			return sql.ConsumerDef{}, err
		}
	}
	return c, nil
}

func (p *ddlParser) alterTopic() (sql.Stmt, error) {
	s := &sql.AlterTopic{}
	if p.peek().is("IF") {
		p.i++
		if err := p.expectKw("EXISTS"); err != nil {
			return nil, err
		}
		s.IfExists = true
	}
	var err error
	if s.Name, _, err = p.name(); err != nil {
		return nil, err
	}
	if p.keyword("OWNER") {
		// OWNER TO is a statement of its own, never mixed with actions
		if err := p.expectKw("TO"); err != nil {
			return nil, err
		}
		owner, err := p.roleSpec()
		if err != nil {
			return nil, err
		}
		return &sql.AlterOwner{Topic: s.Name, Owner: owner, IfExists: s.IfExists}, nil
	}
	for {
		a, err := p.alterAction()
		if err != nil {
			return nil, err
		}
		s.Actions = append(s.Actions, a)
		if !p.peek().isP(",") {
			return s, nil
		}
		p.i++
	}
}

func (p *ddlParser) alterAction() (sql.AlterAction, error) {
	t := p.next()
	switch {
	case t.is("ADD"):
		if err := p.expectKw("CONSUMER"); err != nil {
			return nil, err
		}
		c, err := p.consumerDef()
		if err != nil {
			return nil, err
		}
		return &sql.AddConsumer{Consumer: c}, nil
	case t.is("DROP"):
		if err := p.expectKw("CONSUMER"); err != nil {
			return nil, err
		}
		name, _, err := p.name()
		if err != nil {
			return nil, err
		}
		return &sql.DropConsumer{Name: name}, nil
	case t.is("ALTER"):
		if err := p.expectKw("CONSUMER"); err != nil {
			return nil, err
		}
		name, _, err := p.name()
		if err != nil {
			return nil, err
		}
		a := &sql.AlterConsumer{Name: name}
		switch {
		case p.keyword("SET"):
			a.Set, err = p.optionList()
		case p.keyword("RESET"):
			a.Reset, err = p.nameList()
		default:
			err = p.syntaxErr(p.peek())
		}
		if err != nil {
			return nil, err
		}
		return a, nil
	case t.is("SET"):
		opts, err := p.optionList()
		if err != nil {
			return nil, err
		}
		return &sql.SetOptions{Options: opts}, nil
	case t.is("RESET"):
		names, err := p.nameList()
		if err != nil {
			return nil, err
		}
		return &sql.ResetOptions{Names: names}, nil
	case t.is("SPLIT"):
		if err := p.expectKw("PARTITION"); err != nil {
			return nil, err
		}
		n := p.next()
		if n.Kind != tNumber {
			return nil, p.syntaxErr(n)
		}
		id, err := strconv.ParseInt(n.Val, 10, 32)
		if err != nil {
			return nil, errAt(pgerror.CodeInvalidParameterValue, n.Pos, "invalid partition %q", n.Val)
		}
		return &sql.SplitPartition{Partition: int32(id)}, nil
	}
	return nil, p.syntaxErr(t)
}

// roleSpec parses the role of OWNER TO: a name, CURRENT_USER,
// CURRENT_ROLE or SESSION_USER, as PostgreSQL's RoleSpec (PUBLIC names no
// role that can own, NONE is reserved).
func (p *ddlParser) roleSpec() (sql.RoleSpec, error) {
	t := p.peek()
	switch {
	case t.is("CURRENT_USER") || t.is("CURRENT_ROLE"):
		p.i++
		return sql.RoleSpec{Kind: sql.RoleCurrentUser}, nil
	case t.is("SESSION_USER"):
		p.i++
		return sql.RoleSpec{Kind: sql.RoleSessionUser}, nil
	case t.Kind != tIdent && t.Kind != tQIdent:
		return sql.RoleSpec{}, p.syntaxErr(t)
	case t.Kind == tIdent && sql.IsReservedKeyword(strings.ToLower(t.Val)):
		return sql.RoleSpec{}, p.syntaxErr(t)
	}
	p.i++
	name := t.Val
	if t.Kind == tIdent {
		name = strings.ToLower(name)
	}
	switch name {
	case "public":
		return sql.RoleSpec{}, errAt(pgerror.CodeUndefinedObject, -1, `role "public" does not exist`)
	case "none":
		return sql.RoleSpec{}, errAt(pgerror.CodeReservedName, t.Pos, `role name "none" is reserved`)
	}
	return sql.RoleSpec{Name: name}, nil
}

func (p *ddlParser) dropTopic() (sql.Stmt, error) {
	s := &sql.DropTopic{}
	if p.peek().is("IF") {
		p.i++
		if err := p.expectKw("EXISTS"); err != nil {
			return nil, err
		}
		s.IfExists = true
	}
	for {
		name, _, err := p.name()
		if err != nil {
			return nil, err
		}
		s.Names = append(s.Names, name)
		if !p.peek().isP(",") {
			return s, nil
		}
		p.i++
	}
}

// nameList parses `( name [, ...] )` of RESET; names are lower-cased.
func (p *ddlParser) nameList() ([]string, error) {
	if err := p.expectP("("); err != nil {
		return nil, err
	}
	var names []string
	for {
		t := p.peek()
		if t.Kind != tIdent && t.Kind != tQIdent {
			return nil, p.syntaxErr(t)
		}
		p.i++
		names = append(names, strings.ToLower(t.Val))
		if p.peek().isP(",") {
			p.i++
			continue
		}
		return names, p.expectP(")")
	}
}

// optionList parses `( name = value [, ...] )`. Names are lower-cased; a
// name given twice is 42710.
func (p *ddlParser) optionList() ([]sql.Option, error) {
	if err := p.expectP("("); err != nil {
		return nil, err
	}
	var opts []sql.Option
	for {
		t := p.peek()
		if t.Kind != tIdent && t.Kind != tQIdent {
			return nil, p.syntaxErr(t)
		}
		p.i++
		o := sql.Option{Name: strings.ToLower(t.Val), Pos: charPos(p.src, t.Pos)}
		for _, prev := range opts {
			if prev.Name == o.Name {
				// PostgreSQL's words for an option given twice (COPY,
				// sequences: errorConflictingDefElem), at the second.
				return nil, errAt(pgerror.CodeSyntaxError, t.Pos, "conflicting or redundant options").
					WithDetail(fmt.Sprintf("Option \"%s\" is given more than once.", o.Name))
			}
		}
		if err := p.expectP("="); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		o.Value = v
		opts = append(opts, o)
		if p.peek().isP(",") {
			p.i++
			continue
		}
		return opts, p.expectP(")")
	}
}

// value parses an option value.
func (p *ddlParser) value() (sql.Literal, error) {
	t := p.next()
	switch t.Kind {
	case tNumber:
		return numberLit(t.Val, false, t.Pos)
	case tOp:
		if (t.Val == "-" || t.Val == "+") && p.peek().Kind == tNumber {
			n := p.next()
			return numberLit(n.Val, t.Val == "-", n.Pos)
		}
	case tString, tDollar:
		return sql.Literal{Kind: sql.LitString, Str: t.Val}, nil
	case tParam:
		n, err := strconv.Atoi(t.Val)
		if err != nil || n < 1 || n > 65535 {
			return sql.Literal{}, errAt(pgerror.CodeUndefinedParameter, t.Pos, "there is no parameter $%s", t.Val)
		}
		return sql.Literal{Kind: sql.LitParam, Param: n}, nil
	case tQIdent, tBQIdent:
		return sql.Literal{Kind: sql.LitIdent, Str: t.Val}, nil
	case tIdent:
		switch {
		case t.is("TRUE"), t.is("ON"):
			return sql.Literal{Kind: sql.LitBool, Bool: true}, nil
		case t.is("FALSE"), t.is("OFF"):
			return sql.Literal{Kind: sql.LitBool, Bool: false}, nil
		case t.is("NULL"):
			return sql.Literal{Kind: sql.LitNull}, nil
		case (t.is("INTERVAL") || t.is("DATETIME") || t.is("TIMESTAMP")) && p.peek().isP("("):
			p.i++
			arg := p.next()
			if arg.Kind != tString {
				return sql.Literal{}, p.syntaxErr(arg)
			}
			if err := p.expectP(")"); err != nil {
				return sql.Literal{}, err
			}
			return yqlLiteral(p.src, t, arg)
		case (t.is("INTERVAL") || t.is("TIMESTAMP") || t.is("TIMESTAMPTZ")) && p.peek().Kind == tString:
			return yqlLiteral(p.src, t, p.next())
		}
		return sql.Literal{Kind: sql.LitIdent, Str: strings.ToLower(t.Val)}, nil
	}
	return sql.Literal{}, p.syntaxErr(t)
}

// numberLit converts a numeric token to LitInt or LitFloat.
func numberLit(text string, neg bool, pos int) (sql.Literal, error) {
	clean := strings.ReplaceAll(text, "_", "")
	if neg {
		clean = "-" + clean
	}
	if n, err := strconv.ParseInt(clean, 10, 64); err == nil {
		return sql.Literal{Kind: sql.LitInt, Int: n}, nil
	}
	f, err := strconv.ParseFloat(clean, 64)
	if err != nil {
		return sql.Literal{}, errAt(pgerror.CodeInvalidTextRepresentation, pos, "invalid number %q", text)
	}
	return sql.Literal{Kind: sql.LitFloat, Float: f, Str: clean}, nil
}
