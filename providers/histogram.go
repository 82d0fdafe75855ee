package providers

import (
	"math"
	"math/bits"
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
