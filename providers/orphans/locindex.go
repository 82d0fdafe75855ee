package orphans

import (
	"fmt"
	"slices"
	"strings"
)

// locationIndex is the other tables' location keys (their location and
// write paths by one norm, and their resolved local spellings), sorted, so
// that the tables overlapping a sweep root are found with a binary search
// and a lookup per path segment of the root instead of a pass over every
// table: a fleet's plan asked it once per table, which made the sweep
// quadratic in the fleet (issue 44). overlappingTables is its definition
// (and its tests' oracle).
type locationIndex struct {
	keys  []locationKey       // sorted by key, then address
	byKey map[string][]string // key -> addresses
}

type locationKey struct{ key, addr string }

// overlapping is overlappingTables on the index of ts.Locs by norm, built
// once per Tables and norm (normID names norm: the policy's
// equal_schemes and equal_authorities).
func (ts *Tables) overlapping(self string, roots, resolved []string, norm func(string) string, normID string) []string {
	idx := ts.locationIndex(norm, normID)
	seen := map[string]bool{}
	for _, r := range slices.Concat(roots, resolved) {
		if r == "" {
			continue
		}
		// The same key, and keys inside r.
		for _, a := range idx.byKey[r] {
			seen[a] = true
		}
		lo := r + "/"
		i, _ := slices.BinarySearchFunc(idx.keys, lo, func(k locationKey, t string) int { return strings.Compare(k.key, t) })
		for ; i < len(idx.keys) && strings.HasPrefix(idx.keys[i].key, lo); i++ {
			seen[idx.keys[i].addr] = true
		}
		// Keys that contain r: r's prefixes that end before one of its
		// slashes (underRoot(r, k)).
		for j := range len(r) {
			if r[j] == '/' {
				for _, a := range idx.byKey[r[:j]] {
					seen[a] = true
				}
			}
		}
	}
	delete(seen, self)
	out := make([]string, 0, len(seen))
	for a := range seen {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// locationIndex builds (once per norm) the index of ts.Locs.
func (ts *Tables) locationIndex(norm func(string) string, normID string) *locationIndex {
	ts.locMu.Lock()
	defer ts.locMu.Unlock()
	if idx, ok := ts.locIdx[normID]; ok {
		return idx
	}
	idx := &locationIndex{byKey: map[string][]string{}}
	for addr, tl := range ts.Locs {
		keys := slices.Clone(tl.Resolved)
		for _, p := range tablePaths(tl.Location, tl.WritePaths) {
			keys = append(keys, rootKey(p, norm))
		}
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			idx.keys = append(idx.keys, locationKey{k, addr})
			idx.byKey[k] = append(idx.byKey[k], addr)
		}
	}
	slices.SortFunc(idx.keys, func(a, b locationKey) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.addr, b.addr)
	})
	if ts.locIdx == nil {
		ts.locIdx = map[string]*locationIndex{}
	}
	ts.locIdx[normID] = idx
	return idx
}

// normID names the norm of a policy's equal_schemes and equal_authorities
// (orphanNorm): fmt prints maps sorted by key.
func normID(equalSchemes, equalAuthorities map[string]string) string {
	return fmt.Sprint(equalSchemes, equalAuthorities)
}
