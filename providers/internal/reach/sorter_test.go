package reach

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// The external sort returns the same multiset in key order as an in-memory
// sort, whatever the spill limit, and removes its run files.
func TestExtSorter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var recs []Rec
	for i := range 5000 {
		k := fmt.Sprintf("s3://b/t/data/%05d.parquet", r.IntN(3000)) // duplicates too
		recs = append(recs, Rec{Key: k, Aux: fmt.Sprint(i), N1: int64(i), N2: -int64(i)})
	}
	want := slices.Clone(recs)
	sortRecs(want)
	for _, limit := range []int{7, 1000, 1 << 20} { // 7 forces run merges (maxOpenRuns)
		s := NewSorter(limit)
		for _, rec := range recs {
			if err := s.Add(rec); err != nil {
				t.Fatal(err)
			}
		}
		dir := s.dir
		var got []Rec
		for rec, err := range s.Sorted() {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, rec)
		}
		if len(got) != len(want) || s.Len() != int64(len(want)) {
			t.Fatalf("limit %d: %d records, want %d", limit, len(got), len(want))
		}
		for i := range got {
			if got[i].Key != want[i].Key {
				t.Fatalf("limit %d: record %d key %q, want %q", limit, i, got[i].Key, want[i].Key)
			}
		}
		// Payloads travel with their keys.
		slices.SortFunc(got, func(a, b Rec) int { return int(a.N1 - b.N1) })
		for i, rec := range got {
			if rec != recs[i] {
				t.Fatalf("limit %d: record %+v, want %+v", limit, rec, recs[i])
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if dir != "" {
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("limit %d: run directory left behind", limit)
			}
		} else if limit < len(recs) {
			t.Errorf("limit %d: nothing spilled", limit)
		}
	}
}

// The byte budget spills too, before the record limit: long paths cannot
// hold an unbounded buffer. Output stays the in-memory order.
func TestExtSorterByteBudget(t *testing.T) {
	s := NewSorter(1 << 20)
	s.byteLimit = 4096
	var want []string
	for i := range 500 {
		k := fmt.Sprintf("s3://bucket/warehouse/db/table/data/part=%03d/%05d.parquet", i%17, 500-i)
		want = append(want, k)
		if err := s.Add(Rec{Key: k, Aux: k}); err != nil {
			t.Fatal(err)
		}
	}
	defer s.Close()
	if len(s.runs) == 0 {
		t.Fatalf("500 records of ~120 bytes under a 4 KiB budget never spilled")
	}
	slices.Sort(want)
	var got []string
	for rec, err := range s.Sorted() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rec.Key)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("sorted output differs from the in-memory sort (%d vs %d records)", len(got), len(want))
	}
}
