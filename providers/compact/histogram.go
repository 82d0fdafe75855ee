package compact

import (
	"math"
	"math/bits"

	"github.com/icewright/icewright/diff"
)

// sizeHistogram estimates the median file size without keeping every size:
// log-scale buckets, eight per power of two, so an estimate is within about
// 9% of the true median whatever the number of files (fixed 8*64 counters).
type sizeHistogram struct {
	counts [64 * histSub]int64
	n      int64
}

const histSub = 8

func histBucket(size int64) int {
	if size <= 1 {
		return 0
	}
	e := 63 - bits.LeadingZeros64(uint64(size)) // floor(log2)
	// position within the octave, in eighths
	frac := float64(size)/math.Exp2(float64(e)) - 1 // [0,1)
	return e*histSub + int(frac*histSub)
}

// bucketMid is the geometric middle of a bucket's range.
func bucketMid(b int) int64 {
	e := b / histSub
	lo := math.Exp2(float64(e)) * (1 + float64(b%histSub)/histSub)
	hi := math.Exp2(float64(e)) * (1 + float64(b%histSub+1)/histSub)
	return int64(math.Sqrt(lo * hi))
}

func (h *sizeHistogram) add(size int64) {
	h.counts[histBucket(size)]++
	h.n++
}

// median returns the estimated median, clamped to the observed range (so a
// single file or identical files give the exact size).
func (h *sizeHistogram) median(minSize, maxSize int64) int64 {
	if h.n == 0 {
		return 0
	}
	if minSize == maxSize {
		return minSize
	}
	target := (h.n + 1) / 2
	var acc int64
	for b, c := range h.counts {
		acc += c
		if acc >= target {
			return min(max(bucketMid(b), minSize), maxSize)
		}
	}
	return maxSize
}

// octaveCounts counts files per power of two of their size: the display
// buckets of inspect. They are the histogram's own buckets folded eight to
// one (octave), so what inspect draws is what the median is estimated from.
type octaveCounts [64]int64

func octave(size int64) int { return histBucket(size) / histSub }

func (o *octaveCounts) add(size int64) { o[octave(size)]++ }

func (h *sizeHistogram) octaves() *octaveCounts {
	var o octaveCounts
	for b, c := range h.counts {
		o[b/histSub] += c
	}
	return &o
}

// buckets are the counts from the smallest non-empty octave to the largest,
// the empty ones between included (a gap in sizes is worth seeing), and
// stretched to the octave of target (the target file size), so that how far
// the files are from it shows. Octave e holds sizes in [2^e, 2^(e+1));
// octave 0 also holds empty files.
func (o *octaveCounts) buckets(target int64) []diff.SizeBucket {
	lo, hi := -1, -1
	for e, c := range o {
		if c > 0 {
			if lo < 0 {
				lo = e
			}
			hi = e
		}
	}
	if lo < 0 {
		return []diff.SizeBucket{}
	}
	if target > 0 {
		lo, hi = min(lo, octave(target)), max(hi, octave(target))
	}
	out := []diff.SizeBucket{}
	for e := lo; e <= hi; e++ {
		b := diff.SizeBucket{MinBytes: int64(1) << e, MaxBytes: int64(1) << (e + 1), Files: o[e]}
		if e == 0 {
			b.MinBytes = 0
		}
		if e == 62 {
			b.MaxBytes = math.MaxInt64
		}
		out = append(out, b)
	}
	return out
}
