package config

import (
	"math/rand"
	"strings"
	"testing"
	"time"
)

func TestMatchPattern(t *testing.T) {
	tests := []struct {
		pattern, address string
		want             bool
	}{
		{"lake.analytics.*", "lake.analytics.clicks", true},
		{"lake.analytics.*", "lake.analytics.eu.clicks", false},
		{"lake.analytics.*", "lake.sales.clicks", false},
		{"lake.analytics.tmp_*", "lake.analytics.tmp_x", true},
		{"lake.analytics.tmp_*", "lake.analytics.tmp_", true},
		{"lake.analytics.tmp_*", "lake.analytics.clicks", false},
		{"lake.*.*", "lake.a.b", true},
		{"lake.*.*", "lake.a.b.c", false},
		{"lake.**", "lake.a.b", true},
		{"lake.**", "lake.a.b.c.d", true},
		{"lake.**", "other.a.b", false},
		{"lake.**.orders", "lake.sales.orders", true},
		{"lake.**.orders", "lake.sales.eu.orders", true},
		{"lake.**.orders", "lake.sales.eu.orders2", false},
		{"lake.sales.**.orders", "lake.sales.orders", true}, // ** may match no level
		{"**.orders", "lake.sales.orders", true},
		{"**", "lake.sales.orders", true},
		{"**.**", "lake.sales.orders", true},
		{"*.*.*", "lake.sales.orders", true},
		{"*", "lake.sales.orders", false},
		{"l*e.s*s.*s", "lake.sales.orders", true},
		{"l*e.s*s.*s", "lake.sales.order", false},
		{"lake.*s.orders", "lake.sales.orders", true},
		{"lake.sales.orders", "lake.sales.orders", true},
		{"lake.sales.orders", "lake.sales.orderz", false},
		{"lake.sales", "lake.sales.orders", false},
	}
	for _, tt := range tests {
		if got := MatchPattern(tt.pattern, tt.address); got != tt.want {
			t.Errorf("MatchPattern(%q, %q) = %v, want %v", tt.pattern, tt.address, got, tt.want)
		}
		if got := refMatch(tt.pattern, tt.address); got != tt.want {
			t.Errorf("refMatch(%q, %q) = %v, want %v (the reference matcher is wrong)", tt.pattern, tt.address, got, tt.want)
		}
	}
}

func TestSplitAddress(t *testing.T) {
	cat, ns, table, err := SplitAddress("lake.sales.eu.orders")
	if err != nil || cat != "lake" || strings.Join(ns, "/") != "sales/eu" || table != "orders" {
		t.Fatalf("SplitAddress = %q %q %q %v", cat, ns, table, err)
	}
	for _, bad := range []string{"", "lake", "lake.orders", "lake..orders", "lake.a.*", "lake.a.b.", ".a.b"} {
		if _, _, _, err := SplitAddress(bad); err == nil {
			t.Errorf("SplitAddress(%q) succeeded, want an error", bad)
		}
	}
}

func TestSelectorsOverlap(t *testing.T) {
	tests := []struct {
		a, b       selectorLanguage
		want       bool
		whyComment string
	}{
		{selectorLanguage{"lake.analytics.*", nil}, selectorLanguage{"lake.analytics.clicks", nil}, true, "a literal inside a glob"},
		{selectorLanguage{"lake.analytics.*", nil}, selectorLanguage{"lake.sales.*", nil}, false, "different namespaces"},
		{selectorLanguage{"lake.analytics.*", []string{"lake.analytics.tmp_*"}}, selectorLanguage{"lake.analytics.tmp_*", nil}, false, "carved out by exclude (the idiom of docs/design.md §3.3)"},
		{selectorLanguage{"lake.analytics.*", []string{"lake.analytics.tmp_a*"}}, selectorLanguage{"lake.analytics.tmp_*", nil}, true, "exclude too narrow: tmp_b overlaps"},
		{selectorLanguage{"lake.**", nil}, selectorLanguage{"lake.*.*", nil}, true, "** covers one namespace level"},
		{selectorLanguage{"lake.**", []string{"lake.*.*"}}, selectorLanguage{"lake.*.*", nil}, false, "exclude exactly the other"},
		{selectorLanguage{"lake.**", []string{"lake.*.*"}}, selectorLanguage{"lake.*.*.*", nil}, true, "two-level namespaces still overlap"},
		{selectorLanguage{"lake.*.*", nil}, selectorLanguage{"lake.*.*.*", nil}, false, "different depths never meet"},
		{selectorLanguage{"*.a.*", nil}, selectorLanguage{"lake.*.b", nil}, true, "lake.a.b"},
		{selectorLanguage{"lake.tmp_*.*", nil}, selectorLanguage{"lake.*_old.*", nil}, true, "tmp_old matches both partial segments"},
		{selectorLanguage{"lake.tmp_*.*", nil}, selectorLanguage{"lake.x*.*", nil}, false, "prefixes disagree"},
		{selectorLanguage{"lake.**", nil}, selectorLanguage{"lake", nil}, false, "lake alone is no address"},
		{selectorLanguage{"**", nil}, selectorLanguage{"other.**", nil}, true, "everything overlaps anything"},
		{selectorLanguage{"**", []string{"other.**"}}, selectorLanguage{"other.**", nil}, false, "except what it excludes"},
		{selectorLanguage{"lake.**.orders", nil}, selectorLanguage{"lake.sales.*", nil}, true, "lake.sales.orders"},
		{selectorLanguage{"lake.**.orders", nil}, selectorLanguage{"lake.sales.*", []string{"*.*.orders"}}, false, "exclusion on the other side"},
	}
	for _, tt := range tests {
		for _, swap := range []bool{false, true} {
			a, b := tt.a, tt.b
			if swap {
				a, b = b, a
			}
			ex, got, decided := selectorsOverlap(a, b)
			if !decided {
				t.Errorf("%v vs %v: undecided", a, b)
				continue
			}
			if got != tt.want {
				t.Errorf("%v vs %v (%s): overlap = %v (example %q), want %v", a, b, tt.whyComment, got, ex, tt.want)
				continue
			}
			if got && !(langMatch(a, ex) && langMatch(b, ex)) {
				t.Errorf("%v vs %v: example %q is not matched by both", a, b, ex)
			}
		}
	}
}

// TestSelectorsOverlapRandom cross-checks the automaton against brute
// force: every address over a small alphabet up to a length is tried with
// an independent matcher. A found overlap must be confirmed by its example;
// a refuted one must have no brute-force witness.
func TestSelectorsOverlapRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	segs := []string{"a", "b", "*", "a*", "*b", "**", "ab"}
	randPattern := func() string {
		n := 1 + rng.Intn(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = segs[rng.Intn(len(segs))]
		}
		return strings.Join(parts, ".")
	}
	addrs := allAddresses([]string{"a", "b", "ab", "ba", "c"}, 5)
	iterations := 400
	if testing.Short() {
		iterations = 100
	}
	overlaps, disjoint := 0, 0
	for i := 0; i < iterations; i++ {
		a := selectorLanguage{Pattern: randPattern()}
		b := selectorLanguage{Pattern: randPattern()}
		if rng.Intn(2) == 0 {
			a.Exclude = []string{randPattern()}
		}
		if rng.Intn(3) == 0 {
			b.Exclude = []string{randPattern()}
		}
		if checkPattern(a.Pattern) != "" || checkPattern(b.Pattern) != "" {
			continue
		}
		ex, got, decided := selectorsOverlap(a, b)
		if !decided {
			t.Fatalf("%v vs %v undecided", a, b)
		}
		if got {
			overlaps++
			if !(refLang(a, ex) && refLang(b, ex)) {
				t.Errorf("%v vs %v: example %q is not matched by both (reference matcher)", a, b, ex)
			}
			continue
		}
		disjoint++
		for _, addr := range addrs {
			if refLang(a, addr) && refLang(b, addr) {
				t.Errorf("%v vs %v: automaton says disjoint, but both match %q", a, b, addr)
				break
			}
		}
	}
	// Both answers must be exercised, or the cross-check proves nothing.
	if overlaps < 10 || disjoint < 10 {
		t.Fatalf("weak sample: %d overlapping and %d disjoint pairs", overlaps, disjoint)
	}
	t.Logf("%d overlapping, %d disjoint pairs cross-checked against %d addresses", overlaps, disjoint, len(addrs))
}

func langMatch(l selectorLanguage, addr string) bool {
	if _, _, _, err := SplitAddress(addr); err != nil || !MatchPattern(l.Pattern, addr) {
		return false
	}
	for _, e := range l.Exclude {
		if MatchPattern(e, addr) {
			return false
		}
	}
	return true
}

func refLang(l selectorLanguage, addr string) bool {
	if _, _, _, err := SplitAddress(addr); err != nil || !refMatch(l.Pattern, addr) {
		return false
	}
	for _, e := range l.Exclude {
		if refMatch(e, addr) {
			return false
		}
	}
	return true
}

// allAddresses lists every address of 3..maxLevels levels built from segs.
func allAddresses(segs []string, maxLevels int) []string {
	var out []string
	var rec func(prefix []string)
	rec = func(prefix []string) {
		if len(prefix) >= 3 {
			out = append(out, strings.Join(prefix, "."))
		}
		if len(prefix) == maxLevels {
			return
		}
		for _, s := range segs {
			rec(append(append([]string(nil), prefix...), s))
		}
	}
	rec(nil)
	return out
}

// refMatch is an independent, level-by-level matcher: ** consumes whole
// levels, * is matched within a level by recursion on bytes.
func refMatch(pattern, address string) bool {
	return refLevels(strings.Split(pattern, "."), strings.Split(address, "."))
}

func refLevels(p, a []string) bool {
	if len(p) == 0 {
		return len(a) == 0
	}
	if p[0] == "**" {
		for k := 0; k <= len(a); k++ {
			if refLevels(p[1:], a[k:]) {
				return true
			}
		}
		return false
	}
	return len(a) > 0 && refSeg(p[0], a[0]) && refLevels(p[1:], a[1:])
}

func refSeg(p, s string) bool {
	if p == "" {
		return s == ""
	}
	if p[0] == '*' {
		for k := 0; k <= len(s); k++ {
			if refSeg(p[1:], s[k:]) {
				return true
			}
		}
		return false
	}
	return s != "" && s[0] == p[0] && refSeg(p[1:], s[1:])
}

// TestSelectorsOverlapBounded: a pathological pair either gets decided or
// reported as too complex quickly; validate must not hang on it.
func TestSelectorsOverlapBounded(t *testing.T) {
	a := selectorLanguage{"l*a*b*c*d*e*f*g*h*.**", []string{"*x*y*z*.**", "**.*q*r*s*t*"}}
	b := selectorLanguage{"*h*g*f*e*d*c*b*a*.**", []string{"**.*u*v*w*x*y*z*"}}
	start := time.Now()
	ex, overlap, decided := selectorsOverlap(a, b)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if decided && overlap && !(langMatch(a, ex) && langMatch(b, ex)) {
		t.Errorf("example %q is wrong", ex)
	}
	if !decided && !overlap {
		t.Error("an undecided pair must be reported as a possible overlap")
	}
}

// TestSuggestPattern: a typo in a literal level is corrected from the
// addresses there are, globs kept; a pattern too far from every address,
// or one that already fits, gets no suggestion.
func TestSuggestPattern(t *testing.T) {
	demo := []string{"demo.analytics.events", "demo.analytics.clicks", "demo.sales.orders"}
	// An address (no glob) is compared with the addresses of as many
	// levels, the first closest one winning (the plan's "did you mean" for
	// a table block naming a table that does not exist).
	lake := []string{"c.ns.t1x", "c.ns.t12", "c.ns.t1.v", "c.n.s.t13", "c.ns.t13"}
	for _, tc := range []struct {
		addrs         []string
		pattern, want string
	}{
		{demo, "demo.analytcs.*", "demo.analytics.*"},
		{demo, "demo.analytics.event", "demo.analytics.events"},
		{demo, "demo.salse.**", "demo.sales.**"},
		{demo, "dmeo.**", "demo.**"},
		{demo, "demo.finance.*", ""},
		{demo, "other.x.y", ""},
		{demo, "demo.analytics.*", ""},
		{lake, "c.ns.t14", "c.ns.t1x"},
		{lake, "c.ns.t13", "c.ns.t1x"},
		{lake, "c.ns.t1", "c.ns.t1x"},
		{lake, "c.ns.t1.w", "c.ns.t1.v"},
		{lake, "c.ns", ""},
		{lake, "c.ns.t1234567", ""},
	} {
		if got := SuggestPattern(tc.pattern, tc.addrs); got != tc.want {
			t.Errorf("SuggestPattern(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
}
