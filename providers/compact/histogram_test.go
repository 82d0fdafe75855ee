package compact

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/icewright/icewright/diff"
)

// The histogram median stays within one bucket (~9%) of the true median
// for skewed distributions, and is exact for identical sizes.
func TestSizeHistogramMedian(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, gen := range []func() int64{
		func() int64 { return 1 + r.Int64N(1<<20) },                       // uniform
		func() int64 { return int64(1 << (10 + r.IntN(20))) },             // log-uniform
		func() int64 { return int64(r.ExpFloat64()*float64(64<<20)) + 1 }, // exponential
	} {
		var h sizeHistogram
		var sizes []int64
		for range 10001 {
			s := gen()
			sizes = append(sizes, s)
			h.add(s)
		}
		slices.Sort(sizes)
		exact := sizes[len(sizes)/2]
		got := h.median(sizes[0], sizes[len(sizes)-1])
		if ratio := float64(got) / float64(exact); ratio < 0.9 || ratio > 1.1 {
			t.Errorf("median %d, exact %d (ratio %.3f)", got, exact, ratio)
		}
	}
	var h sizeHistogram
	for range 7 {
		h.add(12345)
	}
	if got := h.median(12345, 12345); got != 12345 {
		t.Errorf("identical sizes: median %d", got)
	}
	var empty sizeHistogram
	if empty.median(0, 0) != 0 {
		t.Error("empty histogram")
	}
}

// The display buckets are the histogram's folded into powers of two: each
// size lands in [2^e, 2^(e+1)), gaps between are kept, the range reaches
// the target's octave, and the counts add up to the files.
func TestSizeBuckets(t *testing.T) {
	var h sizeHistogram
	sizes := []int64{3000, 3000, 4095, 4096, 5000, 40000}
	for _, s := range sizes {
		h.add(s)
	}
	got := h.octaves().buckets(1 << 20)
	want := []diff.SizeBucket{
		{MinBytes: 2048, MaxBytes: 4096, Files: 3},
		{MinBytes: 4096, MaxBytes: 8192, Files: 2},
		{MinBytes: 8192, MaxBytes: 16384},
		{MinBytes: 16384, MaxBytes: 32768},
		{MinBytes: 32768, MaxBytes: 65536, Files: 1},
		{MinBytes: 65536, MaxBytes: 131072},
		{MinBytes: 131072, MaxBytes: 262144},
		{MinBytes: 262144, MaxBytes: 524288},
		{MinBytes: 524288, MaxBytes: 1 << 20},
		{MinBytes: 1 << 20, MaxBytes: 2 << 20},
	}
	if !slices.Equal(got, want) {
		t.Errorf("buckets:\n got %v\nwant %v", got, want)
	}
	// A target below the files stretches the range down instead.
	if b := h.octaves().buckets(1024); b[0].MinBytes != 1024 || b[len(b)-1].MaxBytes != 65536 {
		t.Errorf("target below: %v", b)
	}
	var empty sizeHistogram
	if b := empty.octaves().buckets(1 << 20); len(b) != 0 {
		t.Errorf("no files: %v", b)
	}
}
