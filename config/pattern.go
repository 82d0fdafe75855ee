package config

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"

	"github.com/agext/levenshtein"
)

// Address globs (docs/design.md §2): an address is dot-separated levels
// catalog.ns[.ns...].table. In a pattern `*` matches any run of characters
// within one level (so `tmp_*` matches `tmp_x`), and a level that is exactly
// `**` matches any number of whole levels, including none.
//
// Patterns are compiled to small NFAs over characters. Matching simulates
// the NFA; overlap detection (could two selectors, after their excludes,
// match the same address?) explores the product of the determinised
// automata, which decides the question exactly from the patterns alone.

// SplitAddress splits "catalog.ns1.ns2.table" into its parts. An address has
// at least three non-empty levels (SplitLevels) and, as a user writes it, no
// glob characters, whitespace or quotes.
func SplitAddress(addr string) (catalog string, ns []string, table string, err error) {
	parts, err := SplitLevels(addr)
	if err != nil {
		return "", nil, "", err
	}
	for _, p := range parts {
		if strings.ContainsAny(p, "* \t\n\"") {
			return "", nil, "", fmt.Errorf("address %q: level %q has a glob character, whitespace or a quote, which a table address cannot have", addr, p)
		}
	}
	return parts[0], append([]string(nil), parts[1:len(parts)-1]...), parts[len(parts)-1], nil
}

// SplitLevels is the one rule of an address's structure: the catalog, the
// namespace levels and the table, split at dots, at least three, none
// empty. Providers split the addresses of listed tables with it (a catalog
// may hold names a user could not type); SplitAddress adds the rules of
// typed addresses.
func SplitLevels(addr string) ([]string, error) {
	parts := strings.Split(addr, ".")
	if len(parts) < 3 {
		return nil, fmt.Errorf("address %q must be <catalog>.<namespace>.<table>", addr)
	}
	if slices.Contains(parts, "") {
		return nil, fmt.Errorf("address %q has an empty level", addr)
	}
	return parts, nil
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

// SplitNamespace splits an address into its namespace ("catalog.ns") and
// table name, at the last dot.
func SplitNamespace(address string) (namespace, table string) {
	i := strings.LastIndexByte(address, '.')
	if i < 0 {
		return "", address
	}
	return address[:i], address[i+1:]
}

// Targeted reports whether -target values select an address: no target
// selects every address; a target is an address or a glob.
func Targeted(targets []string, address string) bool {
	if len(targets) == 0 {
		return true
	}
	for _, t := range targets {
		if t == address || MatchPattern(t, address) {
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

// selectorLanguage is a pattern minus its excludes.
type selectorLanguage struct {
	Pattern string
	Exclude []string
}

// overlapBudget bounds the product exploration. Realistic patterns need a
// few hundred states; a pathological configuration is reported rather than
// allowed to hang validate.
const overlapBudget = 20000

// bitset is a set of NFA states.
type bitset []uint64

func (b bitset) has(i int) bool { return b[i/64]&(1<<(uint(i)%64)) != 0 }
func (b bitset) set(i int)      { b[i/64] |= 1 << (uint(i) % 64) }
func (b bitset) empty() bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

// tables is an NFA with its epsilon closures and transitions precomputed
// per alphabet symbol, so a step of the product is a few word ORs.
type tables struct {
	words  int
	accept int
	start  bitset
	next   [][]bitset // [state][symbol] → closed successor set
}

func tabulate(n *nfa, alphabet []byte) *tables {
	size := len(n.edges)
	t := &tables{words: (size + 63) / 64, accept: n.accept}
	closure := func(states []int) bitset {
		b := make(bitset, t.words)
		for _, s := range n.closure(states) {
			b.set(s)
		}
		return b
	}
	t.start = closure([]int{0})
	t.next = make([][]bitset, size)
	for s := 0; s < size; s++ {
		t.next[s] = make([]bitset, len(alphabet))
		for k, c := range alphabet {
			var to []int
			for _, e := range n.edges[s] {
				if e.class == symAny || e.class == symNonDot && c != '.' || e.class == symLit && e.lit == c {
					to = append(to, e.to)
				}
			}
			t.next[s][k] = closure(to)
		}
	}
	return t
}

func (t *tables) step(cur bitset, sym int) bitset {
	out := make(bitset, t.words)
	for w, word := range cur {
		for word != 0 {
			bit := bits.TrailingZeros64(word)
			word &^= 1 << uint(bit)
			for i, x := range t.next[w*64+bit][sym] {
				out[i] |= x
			}
		}
	}
	return out
}

// selectorsOverlap decides whether some valid address (at least three
// non-empty levels) is matched by a and b and by none of their excludes. It
// returns the shortest such address when they overlap. decided is false only
// when the exploration budget ran out.
//
// It is a breadth-first search of the product of the subset-constructed
// automata of both patterns and of every exclude, plus two small counters
// for address validity (levels seen, and whether the current level is still
// empty).
func selectorsOverlap(a, b selectorLanguage) (example string, overlap, decided bool) {
	var patterns []string
	patterns = append(patterns, a.Pattern, b.Pattern)
	patterns = append(patterns, a.Exclude...)
	patterns = append(patterns, b.Exclude...)
	alphabet, dot := overlapAlphabet(patterns)

	auto := make([]*tables, len(patterns))
	for i, p := range patterns {
		auto[i] = tabulate(compilePattern(p), alphabet)
	}

	type node struct {
		sets   []bitset // one per automaton: a, b, then the excludes
		dots   int      // separators read, capped at 2 (three levels suffice)
		start  bool     // nothing read yet in the current level
		parent int
		sym    int
	}
	var kb []byte
	key := func(n *node) string {
		kb = kb[:0]
		for _, s := range n.sets {
			for _, w := range s {
				kb = binary.LittleEndian.AppendUint64(kb, w)
			}
		}
		kb = append(kb, byte(n.dots))
		if n.start {
			kb = append(kb, 1)
		}
		return string(kb)
	}
	init := &node{start: true, parent: -1}
	for _, t := range auto {
		init.sets = append(init.sets, t.start)
	}
	nodes := []*node{init}
	seen := map[string]bool{key(init): true}
	for i := 0; i < len(nodes); i++ {
		if len(nodes) > overlapBudget {
			return "", true, false
		}
		n := nodes[i]
		if !n.start && n.dots >= 2 && acceptsOnlyBoth(auto, n.sets) {
			var rev []byte
			for k := i; nodes[k].parent >= 0; k = nodes[k].parent {
				rev = append(rev, alphabet[nodes[k].sym])
			}
			slices.Reverse(rev)
			return string(rev), true, true
		}
		for sym := range alphabet {
			if sym == dot && n.start {
				continue // an empty level is not a valid address
			}
			next := &node{sets: make([]bitset, len(auto)), dots: n.dots, start: sym == dot, parent: i, sym: sym}
			next.sets[0] = auto[0].step(n.sets[0], sym)
			if next.sets[0].empty() {
				continue
			}
			next.sets[1] = auto[1].step(n.sets[1], sym)
			if next.sets[1].empty() {
				continue
			}
			for j := 2; j < len(auto); j++ {
				next.sets[j] = auto[j].step(n.sets[j], sym)
			}
			if sym == dot && next.dots < 2 {
				next.dots++
			}
			k := key(next)
			if seen[k] {
				continue
			}
			seen[k] = true
			nodes = append(nodes, next)
		}
	}
	return "", false, true
}

// overlapAlphabet is the alphabet of selectorsOverlap's search and the
// index of the separator in it.
func overlapAlphabet(patterns []string) ([]byte, int) {
	// The alphabet: every literal byte of every pattern, the separator, and
	// one representative of all other bytes (which no literal edge matches,
	// so all of them behave identically).
	lits := map[byte]bool{'.': true}
	for _, p := range patterns {
		for i := 0; i < len(p); i++ {
			if p[i] != '*' {
				lits[p[i]] = true
			}
		}
	}
	alphabet := make([]byte, 0, len(lits)+1)
	for c := range lits {
		alphabet = append(alphabet, c)
	}
	sort.Slice(alphabet, func(i, j int) bool { return alphabet[i] < alphabet[j] })
	for _, c := range []byte("xyzqabcdefghijklmnoprstuvw0123456789_") {
		if !lits[c] {
			alphabet = append(alphabet, c)
			break
		}
	}
	return alphabet, sort.Search(len(alphabet), func(i int) bool { return alphabet[i] >= '.' })
}

// acceptsOnlyBoth: the automata of a and b (the first two) accept, and
// none of the excludes' (the rest).
func acceptsOnlyBoth(auto []*tables, sets []bitset) bool {
	if !sets[0].has(auto[0].accept) || !sets[1].has(auto[1].accept) {
		return false
	}
	for j := 2; j < len(auto); j++ {
		if sets[j].has(auto[j].accept) {
			return false
		}
	}
	return true
}

// SuggestPattern is the did-you-mean for a pattern (or address) that
// matches none of addresses: the pattern with its literal levels replaced
// by those of the address they are closest to, keeping its globs, when
// that differs from it by a typo's worth of edits; else "". Levels after a
// `**` are kept as they are: they may match any depth.
func SuggestPattern(pattern string, addresses []string) string {
	levels := strings.Split(pattern, ".")
	best, bestDist := "", max(3, len(pattern)/5+1)
	literal := !strings.Contains(pattern, "*")
	for _, a := range addresses {
		if literal {
			// The candidate is a itself when it has as many levels (the
			// general case below without compiling a pattern per address);
			// the distance is at least the difference in length.
			if a == pattern || strings.Count(a, ".") != len(levels)-1 || max(len(a)-len(pattern), len(pattern)-len(a)) >= bestDist {
				continue
			}
			if d := levenshtein.Distance(pattern, a, nil); d < bestDist {
				best, bestDist = a, d
			}
			continue
		}
		parts := strings.Split(a, ".")
		cand := make([]string, 0, len(levels))
		for i, l := range levels {
			if l == "**" {
				cand = append(cand, levels[i:]...)
				break
			}
			if i >= len(parts) {
				cand = nil
				break
			}
			if strings.Contains(l, "*") {
				cand = append(cand, l)
			} else {
				cand = append(cand, parts[i])
			}
		}
		c := strings.Join(cand, ".")
		if c == "" || c == pattern || !MatchPattern(c, a) {
			continue
		}
		if d := levenshtein.Distance(pattern, c, nil); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// Suggest is the candidate closest to given, by the rule of the
// configuration's own did-you-means (an edit distance below 3), or "".
func Suggest(given string, candidates []string) string { return nameSuggestion(given, candidates) }
