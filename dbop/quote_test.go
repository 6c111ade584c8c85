package dbop

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// unquoteIdentifier undoes QuoteIdentifier the way the server reads a quoted
// identifier; ok is false when q is not exactly one well-formed quoted identifier.
func unquoteIdentifier(q string) (string, bool) {
	if len(q) < 2 || q[0] != '`' || q[len(q)-1] != '`' {
		return "", false
	}
	var b strings.Builder
	body := q[1 : len(q)-1]
	for i := 0; i < len(body); i++ {
		if body[i] == '`' {
			if i+1 >= len(body) || body[i+1] != '`' {
				return "", false // the identifier would end early
			}
			i++
		}
		b.WriteByte(body[i])
	}
	return b.String(), true
}

// unquoteString reads a string literal the way the server does without
// NO_BACKSLASH_ESCAPES; ok is false when q is not exactly one literal.
func unquoteString(q string) (string, bool) {
	if len(q) < 2 || q[0] != '\'' || q[len(q)-1] != '\'' {
		return "", false
	}
	esc := map[byte]string{'0': "\x00", '\'': "'", '"': "\"", 'b': "\b", 'n': "\n", 'r': "\r",
		't': "\t", 'Z': "\x1a", '\\': "\\", '%': "\\%", '_': "\\_"}
	var b strings.Builder
	body := q[1 : len(q)-1]
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '\\':
			if i+1 >= len(body) {
				return "", false // escapes the closing quote
			}
			i++
			if e, ok := esc[body[i]]; ok {
				b.WriteString(e)
			} else {
				b.WriteByte(body[i])
			}
		case c == '\'':
			if i+1 >= len(body) || body[i+1] != '\'' {
				return "", false // the literal would end early
			}
			i++
			b.WriteByte('\'')
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

var quoteSeeds = []string{
	"orders", "o'brien", "back`tick", "``", "`", "100%", "a_b", `back\slash`, `\`, `\'`, "'; DROP TABLE x; --",
	"ünïcødé-日本語", "line\nbreak", "cr\rlf", "tab\tx", "ctrl\x1az", "?", "-- comment", "/* c */", "#", "\"dq\"",
	"'", "''", " ", "trailing ", "😀", "a\x00b", "\xff\xfe",
}

func TestQuoteIdentifier(t *testing.T) {
	cases := map[string]string{"orders": "`orders`", "back`tick": "`back``tick`", "o'brien": "`o'brien`",
		`a\b`: "`a\\b`", "100%": "`100%`", "日本": "`日本`"}
	for in, want := range cases {
		if got, err := QuoteIdentifier(in); err != nil || got != want {
			t.Errorf("QuoteIdentifier(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "a\x00b", "\xff", "😀"} {
		if got, err := QuoteIdentifier(bad); err == nil {
			t.Errorf("QuoteIdentifier(%q) = %q, want an error", bad, got)
		}
	}
}

func TestQuoteString(t *testing.T) {
	cases := map[string]string{"pw": "'pw'", "o'brien": `'o\'brien'`, `a\b`: `'a\\b'`, "a\nb": `'a\nb'`,
		"a\rb": `'a\rb'`, "%_": "'%_'", "": "''"}
	for in, want := range cases {
		if got, err := QuoteString(in); err != nil || got != want {
			t.Errorf("QuoteString(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"a\x00b", "\xff"} {
		if _, err := QuoteString(bad); err == nil {
			t.Errorf("QuoteString(%q) succeeded", bad)
		} else if strings.Contains(err.Error(), bad) {
			t.Errorf("QuoteString error echoes its input: %v", err)
		}
	}
	if got, err := QuoteAccount("mysqlop-admin", "%"); err != nil || got != "'mysqlop-admin'@'%'" {
		t.Errorf("QuoteAccount = %q, %v", got, err)
	}
	if _, err := QuoteAccount("u", "a\x00"); err == nil {
		t.Error("QuoteAccount accepted NUL")
	}
}

// FuzzQuoteIdentifier checks that a quoted identifier reads back as the input and
// cannot end early.
func FuzzQuoteIdentifier(f *testing.F) {
	for _, s := range quoteSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := QuoteIdentifier(s)
		valid := s != "" && utf8.ValidString(s) && !strings.ContainsRune(s, 0) &&
			!strings.ContainsFunc(s, func(r rune) bool { return r > 0xFFFF })
		if (err == nil) != valid {
			t.Fatalf("QuoteIdentifier(%q): err %v, valid %v", s, err, valid)
		}
		if err != nil {
			return
		}
		if got, ok := unquoteIdentifier(q); !ok || got != s {
			t.Fatalf("QuoteIdentifier(%q) = %q reads back as %q (ok %v)", s, q, got, ok)
		}
	})
}

// FuzzQuoteString checks that a quoted literal reads back as the input, cannot
// end early, and stays on one line.
func FuzzQuoteString(f *testing.F) {
	for _, s := range quoteSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := QuoteString(s)
		valid := utf8.ValidString(s) && !strings.ContainsRune(s, 0)
		if (err == nil) != valid {
			t.Fatalf("QuoteString(%q): err %v, valid %v", s, err, valid)
		}
		if err != nil {
			return
		}
		if strings.ContainsAny(q, "\n\r") {
			t.Fatalf("QuoteString(%q) = %q spans lines", s, q)
		}
		if got, ok := unquoteString(q); !ok || got != s {
			t.Fatalf("QuoteString(%q) = %q reads back as %q (ok %v)", s, q, got, ok)
		}
	})
}
