package config

import (
	"fmt"
	"sort"
	"strings"
)

// Address globs (DESIGN §2): an address is dot-separated levels
// catalog.ns[.ns...].table. In a pattern `*` matches any run of characters
// within one level (so `tmp_*` matches `tmp_x`), and a level that is exactly
// `**` matches any number of whole levels, including none.
//
// Patterns are compiled to small NFAs over characters. Matching simulates
// the NFA; overlap detection (could two selectors, after their excludes,
// match the same address?) explores the product of the determinised
// automata, which decides the question exactly from the patterns alone.

// SplitAddress splits "catalog.ns1.ns2.table" into its parts. An address has
// at least three non-empty levels and no glob characters.
func SplitAddress(addr string) (catalog string, ns []string, table string, err error) {
	parts := strings.Split(addr, ".")
	if len(parts) < 3 {
		return "", nil, "", fmt.Errorf("address %q must be <catalog>.<namespace>.<table>", addr)
	}
	for _, p := range parts {
		if p == "" {
			return "", nil, "", fmt.Errorf("address %q has an empty level", addr)
		}
		if strings.ContainsAny(p, "* \t\n\"") {
			return "", nil, "", fmt.Errorf("address %q contains %q, which is not allowed in a table address", addr, p)
		}
	}
	return parts[0], append([]string(nil), parts[1:len(parts)-1]...), parts[len(parts)-1], nil
}

// MatchPattern reports whether a glob pattern matches an address.
func MatchPattern(pattern, address string) bool {
	n := compilePattern(pattern)
	cur := n.closure([]int{0})
	for i := 0; i < len(address) && len(cur) > 0; i++ {
		cur = n.step(cur, address[i])
	}
	for _, s := range cur {
		if s == n.accept {
			return true
		}
	}
	return false
}

// checkPattern reports why a pattern is malformed, or "" when it is fine.
func checkPattern(p string) string {
	if p == "" {
		return "the pattern is empty"
	}
	for _, seg := range strings.Split(p, ".") {
		if seg == "" {
			return fmt.Sprintf("pattern %q has an empty level", p)
		}
		if strings.Contains(seg, "**") && seg != "**" {
			return fmt.Sprintf("in pattern %q, ** must be a whole level (use * within a level)", p)
		}
		if strings.ContainsAny(seg, " \t\n\"") {
			return fmt.Sprintf("pattern %q contains whitespace or quotes", p)
		}
	}
	return ""
}

type symClass uint8

const (
	symLit    symClass = iota // one literal byte
	symNonDot                 // any byte but '.'
	symAny                    // any byte
)

type edge struct {
	class symClass
	lit   byte
	to    int
}

type nfa struct {
	edges  [][]edge
	eps    [][]int
	accept int
}

func (n *nfa) newState() int {
	n.edges = append(n.edges, nil)
	n.eps = append(n.eps, nil)
	return len(n.edges) - 1
}

func (n *nfa) add(from int, c symClass, lit byte) int {
	to := n.newState()
	n.edges[from] = append(n.edges[from], edge{c, lit, to})
	return to
}

// compilePattern builds a Thompson NFA; state 0 is the start.
func compilePattern(p string) *nfa {
	n := &nfa{}
	cur := n.newState()
	// `**.**` means the same as `**`; collapsing them keeps the separator
	// bookkeeping below to three cases.
	var segs []string
	for _, seg := range strings.Split(p, ".") {
		if seg == "**" && len(segs) > 0 && segs[len(segs)-1] == "**" {
			continue
		}
		segs = append(segs, seg)
	}
	for i, seg := range segs {
		last := i == len(segs)-1
		if seg == "**" {
			switch {
			case len(segs) == 1:
				// Everything.
				q := n.newState()
				n.eps[cur] = append(n.eps[cur], q)
				n.edges[q] = append(n.edges[q], edge{symAny, 0, q})
				cur = q
			case last:
				// The separator before it is absorbed: (\.[^.]*)*
				q := n.newState()
				n.eps[cur] = append(n.eps[cur], q)
				r := n.add(q, symLit, '.')
				n.edges[r] = append(n.edges[r], edge{symNonDot, 0, r})
				n.eps[r] = append(n.eps[r], q)
				cur = q
				continue
			default:
				// Absorbs its own trailing separator: ([^.]*\.)*
				q := n.newState()
				n.eps[cur] = append(n.eps[cur], q)
				r := n.newState()
				n.edges[q] = append(n.edges[q], edge{symNonDot, 0, r}, edge{symLit, '.', q})
				n.edges[r] = append(n.edges[r], edge{symNonDot, 0, r}, edge{symLit, '.', q})
				cur = q
				continue // no separator after it
			}
		} else {
			for j := 0; j < len(seg); j++ {
				if seg[j] == '*' {
					q := n.newState()
					n.eps[cur] = append(n.eps[cur], q)
					n.edges[q] = append(n.edges[q], edge{symNonDot, 0, q})
					cur = q
					continue
				}
				cur = n.add(cur, symLit, seg[j])
			}
		}
		if !last && !(i+1 == len(segs)-1 && segs[i+1] == "**") {
			cur = n.add(cur, symLit, '.')
		}
	}
	n.accept = cur
	return n
}

// closure returns the sorted epsilon closure of a set of states.
func (n *nfa) closure(set []int) []int {
	seen := make(map[int]bool, len(set))
	stack := append([]int(nil), set...)
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[s] {
			continue
		}
		seen[s] = true
		stack = append(stack, n.eps[s]...)
	}
	out := make([]int, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Ints(out)
	return out
}

func (n *nfa) step(set []int, c byte) []int {
	var next []int
	for _, s := range set {
		for _, e := range n.edges[s] {
			switch {
			case e.class == symAny,
				e.class == symNonDot && c != '.',
				e.class == symLit && e.lit == c:
				next = append(next, e.to)
			}
		}
	}
	if len(next) == 0 {
		return nil
	}
	return n.closure(next)
}

func (n *nfa) accepts(set []int) bool {
	for _, s := range set {
		if s == n.accept {
			return true
		}
	}
	return false
}

// selectorLanguage is a pattern minus its excludes.
type selectorLanguage struct {
	Pattern string
	Exclude []string
}

// overlapBudget bounds the product exploration. Realistic patterns need a
// few hundred states; a pathological configuration is reported rather than
// allowed to hang validate.
const overlapBudget = 200000

// selectorsOverlap decides whether some valid address (at least three
// non-empty levels) is matched by a and b and by none of their excludes. It
// returns an example address when they overlap. decided is false only when
// the exploration budget ran out.
func selectorsOverlap(a, b selectorLanguage) (example string, overlap, decided bool) {
	na, nb := compilePattern(a.Pattern), compilePattern(b.Pattern)
	var ex []*nfa
	for _, p := range append(append([]string(nil), a.Exclude...), b.Exclude...) {
		ex = append(ex, compilePattern(p))
	}
	// The alphabet: every literal byte of every pattern, the separator, and
	// one representative of all other bytes (which no literal edge matches,
	// so all of them behave identically).
	lits := map[byte]bool{'.': true}
	collect := func(p string) {
		for i := 0; i < len(p); i++ {
			if p[i] != '*' {
				lits[p[i]] = true
			}
		}
	}
	collect(a.Pattern)
	collect(b.Pattern)
	for _, p := range a.Exclude {
		collect(p)
	}
	for _, p := range b.Exclude {
		collect(p)
	}
	var other byte
	for _, c := range []byte("xyzqabcdefghijklmnoprstuvw0123456789_") {
		if !lits[c] {
			other = c
			break
		}
	}
	alphabet := make([]byte, 0, len(lits)+1)
	for c := range lits {
		alphabet = append(alphabet, c)
	}
	sort.Slice(alphabet, func(i, j int) bool { return alphabet[i] < alphabet[j] })
	if other != 0 {
		alphabet = append(alphabet, other)
	}

	type state struct {
		a, b  []int
		ex    [][]int
		dots  int  // separators read, capped at 2 (three levels suffice)
		start bool // at the start of a level (nothing read in it yet)
	}
	key := func(s *state) string {
		var sb strings.Builder
		fmt.Fprint(&sb, s.a, s.b, s.dots, s.start)
		for _, e := range s.ex {
			fmt.Fprint(&sb, e)
		}
		return sb.String()
	}
	type node struct {
		st     *state
		parent int
		c      byte
	}
	init := &state{a: na.closure([]int{0}), b: nb.closure([]int{0}), start: true}
	for _, e := range ex {
		init.ex = append(init.ex, e.closure([]int{0}))
	}
	nodes := []node{{st: init, parent: -1}}
	seen := map[string]bool{key(init): true}
	for i := 0; i < len(nodes); i++ {
		if len(nodes) > overlapBudget {
			return "", true, false
		}
		s := nodes[i].st
		if !s.start && s.dots >= 2 && na.accepts(s.a) && nb.accepts(s.b) {
			excluded := false
			for j, e := range ex {
				if e.accepts(s.ex[j]) {
					excluded = true
					break
				}
			}
			if !excluded {
				var rev []byte
				for k := i; nodes[k].parent >= 0; k = nodes[k].parent {
					rev = append(rev, nodes[k].c)
				}
				for l, r := 0, len(rev)-1; l < r; l, r = l+1, r-1 {
					rev[l], rev[r] = rev[r], rev[l]
				}
				return string(rev), true, true
			}
		}
		for _, c := range alphabet {
			if c == '.' && s.start {
				continue // an empty level is not a valid address
			}
			next := &state{a: na.step(s.a, c), b: nb.step(s.b, c), start: c == '.', dots: s.dots}
			if len(next.a) == 0 || len(next.b) == 0 {
				continue
			}
			if c == '.' && next.dots < 2 {
				next.dots++
			}
			for j, e := range ex {
				next.ex = append(next.ex, e.step(s.ex[j], c))
			}
			k := key(next)
			if seen[k] {
				continue
			}
			seen[k] = true
			nodes = append(nodes, node{st: next, parent: i, c: c})
		}
	}
	return "", false, true
}
