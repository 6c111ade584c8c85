package dbop

import (
	"fmt"
	"slices"
	"strings"
)

// ParseGrants parses SHOW GRANTS lines into privileges per (database, table),
// merging lines on the same level. Lines that are not privilege grants (PROXY,
// roles), column-level grants and USAGE are skipped. Errors name the line number,
// not its text, since MariaDB prints password hashes in SHOW GRANTS.
func ParseGrants(lines []string) ([]Grant, error) {
	var out []Grant
	for n, line := range lines {
		g, ok, err := parseGrantLine(line)
		if err != nil {
			return nil, fmt.Errorf("grant line %d: %w", n+1, err)
		}
		if !ok {
			continue
		}
		k := slices.IndexFunc(out, func(o Grant) bool { return o.Database == g.Database && o.Table == g.Table })
		if k < 0 {
			out = append(out, g)
			continue
		}
		out[k].Privileges = mergeSorted(out[k].Privileges, g.Privileges)
		out[k].GrantOption = out[k].GrantOption || g.GrantOption
	}
	return out, nil
}

// parseGrantLine parses "GRANT <privs> ON <level> TO <account> [...]"; ok is false
// for lines that grant no database or table privilege.
func parseGrantLine(line string) (Grant, bool, error) {
	toks := tokenize(line)
	if len(toks) < 3 || !strings.EqualFold(toks[0], "GRANT") {
		return Grant{}, false, fmt.Errorf("not a GRANT statement")
	}
	on := slices.IndexFunc(toks, func(s string) bool { return strings.EqualFold(s, "ON") })
	if on < 0 || on+2 >= len(toks) || !strings.EqualFold(toks[on+2], "TO") {
		return Grant{}, false, nil // role grant: GRANT `role` TO `user`
	}
	privs, column := splitPrivileges(toks[1:on])
	if column || slices.Contains(privs, "PROXY") {
		return Grant{}, false, nil
	}
	privs = slices.DeleteFunc(privs, func(p string) bool { return p == "USAGE" })
	db, table, err := parseLevel(toks[on+1])
	if err != nil {
		return Grant{}, false, err
	}
	opt := strings.Contains(strings.ToUpper(strings.Join(toks[on+3:], " ")), "WITH GRANT OPTION")
	if len(privs) == 0 && !opt {
		return Grant{}, false, nil
	}
	slices.Sort(privs)
	return Grant{Database: db, Table: table, Privileges: privs, GrantOption: opt}, true, nil
}

// tokenize splits on spaces outside backticks, quotes and parentheses, and makes
// commas separate tokens.
func tokenize(s string) []string {
	var toks []string
	var cur strings.Builder
	var quote byte
	depth := 0
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote && !(i+1 < len(s) && s[i+1] == quote) {
				quote = 0
			} else if c == quote {
				cur.WriteByte(c)
				i++
			}
		case c == '`' || c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0 && (c == ' ' || c == ','):
			flush()
			if c == ',' {
				toks = append(toks, ",")
			}
			continue
		}
		cur.WriteByte(c)
	}
	flush()
	return toks
}

// splitPrivileges joins privilege words into names ("CREATE", "TEMPORARY",
// "TABLES" → "CREATE TEMPORARY TABLES"); column reports a column list.
func splitPrivileges(toks []string) (privs []string, column bool) {
	var words []string
	for _, t := range append(toks, ",") {
		if t != "," {
			if strings.ContainsRune(t, '(') {
				column = true
			}
			words = append(words, strings.ToUpper(t))
			continue
		}
		if len(words) > 0 {
			privs = append(privs, strings.Join(words, " "))
			words = nil
		}
	}
	return privs, column
}

// parseLevel parses "*.*", "`db`.*" (a database pattern, unescaped) or
// "`db`.`table`".
func parseLevel(level string) (db, table string, err error) {
	if level == "*.*" {
		return "*", "*", nil
	}
	dbq, rest, ok := cutIdentifier(level)
	if !ok || !strings.HasPrefix(rest, ".") {
		return "", "", fmt.Errorf("cannot parse the privilege level")
	}
	if rest == ".*" {
		return unescapeDBPattern(dbq), "*", nil
	}
	table, rest, ok = cutIdentifier(rest[1:])
	if !ok || rest != "" {
		return "", "", fmt.Errorf("cannot parse the privilege level")
	}
	return dbq, table, nil
}

// cutIdentifier reads one backtick-quoted identifier (doubled backticks inside)
// from the start of s.
func cutIdentifier(s string) (id, rest string, ok bool) {
	if !strings.HasPrefix(s, "`") {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '`' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '`' {
			b.WriteByte('`')
			i++
			continue
		}
		return b.String(), s[i+1:], true
	}
	return "", "", false
}

// mergeSorted returns the sorted union of two sorted lists.
func mergeSorted(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}
