package providers

import (
	"cmp"
	"iter"
	"slices"
)

// referencedSet is the set of files the table's metadata references, keyed
// by normalised path. It sits behind an interface so that a spilling or
// Bloom-filter implementation (bounded memory at 10M files, issue 5) can
// replace the sorted slice without touching the scan: the scan only adds
// keys, seals, and then walks them in ascending order beside the sorted
// listing.
type referencedSet interface {
	// Add records one reference; duplicates are allowed until Seal.
	// required says the file must be in the listing (it was committed before
	// the listing began); files of commits made after that are referenced,
	// so kept, but their absence says nothing about the listing.
	Add(key, category string, required bool)
	// Seal sorts and de-duplicates. No Add after it.
	Seal()
	// Len is the number of distinct keys (after Seal).
	Len() int64
	// Categories counts distinct keys per category (after Seal). A key
	// referenced under two categories counts once, in the first one sorted.
	Categories() map[string]int64
	// Keys yields the distinct keys in ascending order with whether any
	// reference to the key was required (after Seal).
	Keys() iter.Seq2[string, bool]
}

// sortedRefSet is the in-memory implementation: one string and one byte per
// reference.
type sortedRefSet struct {
	entries []refEntry
	cats    []string
	catIdx  map[string]uint8
	counts  map[string]int64
}

type refEntry struct {
	key      string
	cat      uint8
	required bool
}

func newSortedRefSet() *sortedRefSet {
	return &sortedRefSet{catIdx: map[string]uint8{}}
}

func (s *sortedRefSet) Add(key, category string, required bool) {
	c, ok := s.catIdx[category]
	if !ok {
		c = uint8(len(s.cats))
		s.cats = append(s.cats, category)
		s.catIdx[category] = c
	}
	s.entries = append(s.entries, refEntry{key: key, cat: c, required: required})
}

func (s *sortedRefSet) Seal() {
	slices.SortFunc(s.entries, func(a, b refEntry) int {
		return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.cat, b.cat))
	})
	// Merge duplicates by hand: a key is required if any reference is.
	out := s.entries[:0]
	for _, e := range s.entries {
		if n := len(out); n > 0 && out[n-1].key == e.key {
			out[n-1].required = out[n-1].required || e.required
			continue
		}
		out = append(out, e)
	}
	s.entries = out
	s.counts = map[string]int64{}
	for _, e := range s.entries {
		s.counts[s.cats[e.cat]]++
	}
}

func (s *sortedRefSet) Len() int64 { return int64(len(s.entries)) }

func (s *sortedRefSet) Categories() map[string]int64 { return s.counts }

func (s *sortedRefSet) Keys() iter.Seq2[string, bool] {
	return func(yield func(string, bool) bool) {
		for _, e := range s.entries {
			if !yield(e.key, e.required) {
				return
			}
		}
	}
}
