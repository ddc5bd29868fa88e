package pgtest

import (
	"fmt"
	"os"
	"strings"
)

// Block is one command of a script: a command line with its arguments,
// input lines up to "----", and the expected output lines up to the next
// blank line.
type Block struct {
	Pos    string   // file:line of the command line, for messages
	Cmd    string   // send, until, connect, cancel
	Args   []string // the words after the command
	Input  []string
	Output []string

	outStart, outEnd int // the output lines' range in Script.lines
}

// Arg reports whether the block has the argument key (either "key" alone
// or "key=value") and its value.
func (b *Block) Arg(key string) (string, bool) {
	for _, a := range b.Args {
		k, v, _ := strings.Cut(a, "=")
		if k == key {
			return v, true
		}
	}
	return "", false
}

// blockArgs lists the arguments each command takes.
var blockArgs = map[string]string{
	"send":    " pg_only topicgate_only ",
	"until":   " pg_only topicgate_only known_diff ignore ",
	"cancel":  " pg_only topicgate_only known_diff ignore bad_key ",
	"connect": " raw server user ",
}

// Script is a parsed .pgtest file. It keeps the file's lines so that
// Rewrite changes nothing but expected outputs.
type Script struct {
	Path   string
	Blocks []*Block
	lines  []string
}

// ParseFile reads and parses a script.
func ParseFile(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, string(data))
}

// Parse parses script text. Lines starting with '#' outside a block and
// blank lines between blocks are comments.
func Parse(path, text string) (*Script, error) {
	s := &Script{Path: path, lines: strings.Split(strings.TrimRight(text, "\n"), "\n")}
	ls := s.lines
	for i := 0; i < len(ls); {
		line := strings.TrimSpace(ls[i])
		if line == "" || strings.HasPrefix(line, "#") {
			i++
			continue
		}
		f := strings.Fields(line)
		b := &Block{Pos: fmt.Sprintf("%s:%d", path, i+1), Cmd: f[0], Args: f[1:]}
		allowed, ok := blockArgs[b.Cmd]
		if !ok {
			return nil, fmt.Errorf("%s: unknown command %q", b.Pos, b.Cmd)
		}
		for _, a := range b.Args {
			k, _, _ := strings.Cut(a, "=")
			if !strings.Contains(allowed, " "+k+" ") {
				return nil, fmt.Errorf("%s: %s takes none of %q (only:%s)", b.Pos, b.Cmd, a, allowed)
			}
		}
		_, pgOnly := b.Arg("pg_only")
		_, tgOnly := b.Arg("topicgate_only")
		_, known := b.Arg("known_diff")
		if pgOnly && tgOnly || known && (pgOnly || tgOnly) {
			return nil, fmt.Errorf("%s: pg_only, topicgate_only and known_diff do not go together", b.Pos)
		}
		i++
		for ; i < len(ls) && ls[i] != "----"; i++ {
			if l := strings.TrimSpace(ls[i]); l != "" && !strings.HasPrefix(l, "#") {
				b.Input = append(b.Input, l)
			}
		}
		if i == len(ls) {
			return nil, fmt.Errorf("%s: no ---- after the input", b.Pos)
		}
		i++
		b.outStart = i
		for ; i < len(ls) && strings.TrimSpace(ls[i]) != ""; i++ {
			b.Output = append(b.Output, ls[i])
		}
		b.outEnd = i
		s.Blocks = append(s.Blocks, b)
	}
	return s, nil
}

// Text returns the script with every block's Output in place of the
// output it was parsed with.
func (s *Script) Text() string {
	var sb strings.Builder
	at := 0
	for _, b := range s.Blocks {
		for _, l := range s.lines[at:b.outStart] {
			sb.WriteString(l)
			sb.WriteByte('\n')
		}
		for _, l := range b.Output {
			sb.WriteString(l)
			sb.WriteByte('\n')
		}
		at = b.outEnd
	}
	for _, l := range s.lines[at:] {
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// Write writes Text back to the script's file.
func (s *Script) Write() error {
	return os.WriteFile(s.Path, []byte(s.Text()), 0o644)
}
