package reach

import (
	"iter"
)

// RefSet is the set of files the table's metadata references, keyed
// by normalised path. It sits behind an interface so that the scan does not
// depend on how the set is held: the scan only adds keys, seals, and then
// walks them in ascending order beside the sorted listing. The
// implementation here sorts externally (bounded memory, spilling to disk);
// a Bloom filter, which can only err toward keeping a file, could replace
// it for an approximate membership test.
type RefSet interface {
	// Add records one reference; duplicates are allowed until Seal.
	// required says the file must be in the listing (it was committed before
	// the listing began); files of commits made after that are referenced,
	// so kept, but their absence says nothing about the listing.
	Add(key, category string, required bool) error
	// Seal finishes adding and counts, calling visit (when not nil) with
	// every distinct key in ascending order on the way: a caller that needs
	// one more look at every key gets it without another pass over a set
	// that may be on disk. No Add after it.
	Seal(visit func(key string) error) error
	// Len is the number of distinct keys (after Seal).
	Len() int64
	// Categories counts distinct keys per category (after Seal). A key
	// referenced under two categories counts once.
	Categories() map[string]int64
	// Keys yields the distinct keys in ascending order with whether any
	// reference to the key was required (after Seal). A read error ends the
	// sequence early; Err reports it, and must be checked after every walk,
	// because a truncated walk would make referenced files look orphaned.
	Keys() iter.Seq2[string, bool]
	Err() error
	// Close releases what the set holds (spill files).
	Close() error
}

// SortedRefSet keeps references in an external sorter: at most limit
// references in memory, the rest in sorted runs on disk.
type SortedRefSet struct {
	s      *Sorter
	n      int64
	counts map[string]int64
	err    error
}

func NewSortedRefSet(limit int) *SortedRefSet {
	return &SortedRefSet{s: NewSorter(limit)}
}

func (s *SortedRefSet) Add(key, category string, required bool) error {
	var req int64
	if required {
		req = 1
	}
	return s.s.Add(Rec{Key: key, Aux: category, N1: req})
}

func (s *SortedRefSet) Seal(visit func(key string) error) error {
	s.counts = map[string]int64{}
	s.n = 0
	for rec, err := range s.distinct() {
		if err != nil {
			return err
		}
		s.n++
		s.counts[rec.Aux]++
		if visit != nil {
			if err := visit(rec.Key); err != nil {
				return err
			}
		}
	}
	return nil
}

// distinct merges adjacent duplicates: required if any reference is; the
// category of the smallest one.
func (s *SortedRefSet) distinct() iter.Seq2[Rec, error] {
	return func(yield func(Rec, error) bool) {
		var (
			cur  Rec
			have bool
		)
		for rec, err := range s.s.Sorted() {
			if err != nil {
				yield(Rec{}, err)
				return
			}
			if have && rec.Key == cur.Key {
				cur.N1 = max(cur.N1, rec.N1)
				cur.Aux = min(cur.Aux, rec.Aux)
				continue
			}
			if have && !yield(cur, nil) {
				return
			}
			cur, have = rec, true
		}
		if have {
			yield(cur, nil)
		}
	}
}

func (s *SortedRefSet) Len() int64 { return s.n }

func (s *SortedRefSet) Categories() map[string]int64 { return s.counts }

func (s *SortedRefSet) Keys() iter.Seq2[string, bool] {
	return func(yield func(string, bool) bool) {
		for rec, err := range s.distinct() {
			if err != nil {
				s.err = err
				return
			}
			if !yield(rec.Key, rec.N1 == 1) {
				return
			}
		}
	}
}

func (s *SortedRefSet) Err() error { return s.err }

func (s *SortedRefSet) Close() error { return s.s.Close() }
