package providers

import (
	"math/rand/v2"
	"slices"
	"testing"
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
