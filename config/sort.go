package config

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSortField parses one sort-order term: "col", "col desc",
// "col asc nulls first", "bucket(16, col)", "truncate(4, col)",
// "year|month|day|hour(col)", "identity(col)". Keywords are case-insensitive.
// Omitted null ordering takes Iceberg's default: first for ascending, last
// for descending.
func ParseSortField(s string) (SortField, error) {
	toks, err := sortTokens(s)
	if err != nil {
		return SortField{}, err
	}
	if len(toks) == 0 {
		return SortField{}, fmt.Errorf("empty sort term")
	}
	var f SortField
	i := 0
	if len(toks) > 1 && toks[1] == "(" {
		name := strings.ToLower(toks[0])
		i = 2
		switch name {
		case "bucket", "truncate":
			if len(toks) < 6 || toks[3] != "," || toks[5] != ")" {
				return SortField{}, fmt.Errorf("%q: expected %s(N, column)", s, name)
			}
			n, err := strconv.Atoi(toks[2])
			if err != nil || n <= 0 {
				return SortField{}, fmt.Errorf("%q: %s width must be a positive whole number, got %q", s, name, toks[2])
			}
			if !isSortIdent(toks[4]) {
				return SortField{}, fmt.Errorf("%q: %q is not a column name", s, toks[4])
			}
			f.Transform = fmt.Sprintf("%s[%d]", name, n)
			f.Column = toks[4]
			i = 6
		case "identity", "year", "month", "day", "hour", "void":
			if len(toks) < 4 || toks[3] != ")" {
				return SortField{}, fmt.Errorf("%q: expected %s(column)", s, name)
			}
			if !isSortIdent(toks[2]) {
				return SortField{}, fmt.Errorf("%q: %q is not a column name", s, toks[2])
			}
			f.Transform = name
			f.Column = toks[2]
			i = 4
		default:
			return SortField{}, fmt.Errorf("%q: unknown transform %q (use bucket, truncate, year, month, day, hour or identity)", s, toks[0])
		}
	} else {
		if !isSortIdent(toks[0]) {
			return SortField{}, fmt.Errorf("%q: %q is not a column name", s, toks[0])
		}
		f.Transform = "identity"
		f.Column = toks[0]
		i = 1
	}
	rest := toks[i:]
	if len(rest) > 0 {
		switch strings.ToLower(rest[0]) {
		case "asc":
			rest = rest[1:]
		case "desc":
			f.Descending = true
			rest = rest[1:]
		}
	}
	f.NullsFirst = !f.Descending
	if len(rest) > 0 {
		if len(rest) != 2 || !strings.EqualFold(rest[0], "nulls") {
			return SortField{}, fmt.Errorf("%q: unexpected %q (expected asc, desc, nulls first or nulls last)", s, strings.Join(rest, " "))
		}
		switch strings.ToLower(rest[1]) {
		case "first":
			f.NullsFirst = true
		case "last":
			f.NullsFirst = false
		default:
			return SortField{}, fmt.Errorf("%q: expected nulls first or nulls last, got nulls %q", s, rest[1])
		}
	}
	return f, nil
}

// String is the canonical form, with direction and null order spelled out:
// "event_ts DESC NULLS LAST", "bucket(16, user_id) ASC NULLS FIRST".
func (f SortField) String() string {
	var b strings.Builder
	t := f.Transform
	switch {
	case t == "" || t == "identity":
		b.WriteString(f.Column)
	case strings.HasSuffix(t, "]") && strings.Contains(t, "["):
		open := strings.IndexByte(t, '[')
		fmt.Fprintf(&b, "%s(%s, %s)", t[:open], t[open+1:len(t)-1], f.Column)
	default:
		fmt.Fprintf(&b, "%s(%s)", t, f.Column)
	}
	if f.Descending {
		b.WriteString(" DESC")
	} else {
		b.WriteString(" ASC")
	}
	if f.NullsFirst {
		b.WriteString(" NULLS FIRST")
	} else {
		b.WriteString(" NULLS LAST")
	}
	return b.String()
}

func sortTokens(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == ',':
			toks = append(toks, string(c))
			i++
		case isIdentByte(c):
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		default:
			return nil, fmt.Errorf("%q: unexpected character %q", s, rune(c))
		}
	}
	return toks, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isSortIdent accepts a column name, dotted for nested fields ("a.b").
func isSortIdent(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	switch strings.ToLower(s) {
	case "asc", "desc", "nulls", "first", "last":
		return false
	}
	return true
}
