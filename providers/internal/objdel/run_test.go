package objdel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// fakeStore records the batches it is sent and fails the names in fail.
type fakeStore struct {
	max     int
	mu      sync.Mutex
	batches [][]string
	fail    map[string]error
}

func (s *fakeStore) MaxBatch() int { return s.max }

func (s *fakeStore) Delete(_ context.Context, locs []string) []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches = append(s.batches, slices.Clone(locs))
	errs := make([]error, len(locs))
	for i, l := range locs {
		errs[i] = s.fail[l]
	}
	return errs
}

func locsN(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("s3://b/k%02d", i))
	}
	return out
}

// TestRunBatchesChecksAndReportsEachLocation: batches never exceed the
// store's limit nor the setting; Check runs for every location and what it
// drops is never sent, what it renames is sent renamed; each sent location
// gets its own outcome, a per-location failure does not stop the run.
func TestRunBatchesChecksAndReportsEachLocation(t *testing.T) {
	for _, tc := range []struct{ max, batch, want int }{{4, 0, 4}, {4, 3, 3}, {2, 10, 2}} {
		st := &fakeStore{max: tc.max, fail: map[string]error{"s3://b/k07": errors.New("AccessDenied")}}
		locs := locsN(10)
		var checked []int
		var mu sync.Mutex
		done := map[int]error{}
		err := Run(context.Background(), st, locs, Settings{BatchSize: tc.batch, Concurrency: 2}, Hooks{
			Check: func(i int) (string, bool) {
				mu.Lock()
				checked = append(checked, i)
				mu.Unlock()
				switch i {
				case 3:
					return "", false
				case 5:
					return "s3://b/renamed", true
				}
				return locs[i], true
			},
			Done: func(i int, err error) { done[i] = err },
			Left: func(i int, err error) { t.Errorf("location %d left: %v", i, err) },
		})
		if err != nil {
			t.Fatal(err)
		}
		var sent []string
		for _, b := range st.batches {
			if len(b) > tc.want {
				t.Errorf("max %d batch %d: a batch of %d", tc.max, tc.batch, len(b))
			}
			sent = append(sent, b...)
		}
		slices.Sort(sent)
		wantSent := slices.DeleteFunc(slices.Clone(locs), func(l string) bool { return l == locs[3] || l == locs[5] })
		wantSent = append(wantSent, "s3://b/renamed")
		slices.Sort(wantSent)
		if !slices.Equal(sent, wantSent) {
			t.Errorf("sent %v, want %v", sent, wantSent)
		}
		if slices.Sort(checked); len(checked) != 10 {
			t.Errorf("checked %v", checked)
		}
		if len(done) != 9 || done[7] == nil || done[3] != nil {
			t.Errorf("outcomes %v", done)
		}
		if _, ok := done[3]; ok {
			t.Error("a dropped location was reported sent")
		}
	}
}

// TestRunStopsAtABatchBoundary: once the context is done, no batch is
// sent and every location not sent is Left.
func TestRunStopsAtABatchBoundary(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	st := &fakeStore{max: 3}
	locs := locsN(10)
	var left, done []int
	err := Run(ctx, st, locs, Settings{Concurrency: 1}, Hooks{
		Check: func(i int) (string, bool) {
			if i == 4 {
				cancel() // mid-batch: this batch still goes, the next does not
			}
			return locs[i], true
		},
		Done: func(i int, err error) { done = append(done, i) },
		Left: func(i int, err error) { left = append(left, i) },
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want canceled", err)
	}
	slices.Sort(done)
	slices.Sort(left)
	if !slices.Equal(done, []int{0, 1, 2, 3, 4, 5}) || !slices.Equal(left, []int{6, 7, 8, 9}) {
		t.Errorf("done %v left %v", done, left)
	}
}

// TestOneByOneStopAtOnce: on a store without a batch API, a cancelled
// context stops the batch under way only with StopAtOnce; the locations
// not sent are Done with ErrNotSent, and Run says why it stopped.
func TestOneByOneStopAtOnce(t *testing.T) {
	for _, atOnce := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		var removed []string
		st := OneByOne(func(p string) error {
			removed = append(removed, p)
			if len(removed) == 2 {
				cancel()
			}
			return nil
		})
		locs := locsN(6)
		var notSent int
		err := Run(ctx, st, locs, Settings{Concurrency: 1, StopAtOnce: atOnce}, Hooks{
			Done: func(i int, err error) {
				if errors.Is(err, ErrNotSent) {
					notSent++
				}
			},
		})
		want := 6
		if atOnce {
			want = 2
		}
		if len(removed) != want || notSent != 6-want {
			t.Errorf("StopAtOnce %v: %d removed, %d not sent, want %d and %d", atOnce, len(removed), notSent, want, 6-want)
		}
		if atOnce != errors.Is(err, context.Canceled) {
			t.Errorf("StopAtOnce %v: Run = %v", atOnce, err)
		}
		cancel()
	}
}
