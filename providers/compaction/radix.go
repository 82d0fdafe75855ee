package compaction

import (
	"bytes"
	"math/bits"
	"slices"
)

// keySet holds one memcomparable key per row in one buffer. One allocation
// per run instead of one arrow Binary builder append per row, and the sort
// reads it without interface calls. While every key has the same width w
// (the usual case: z-order keys, and sort keys of fixed-width columns
// without nulls) key i is buf[i*w:(i+1)*w] and no offsets are kept (8
// bytes a row, a third of a run's keys); the first key of another width
// materializes them: key i is then buf[off[i]:off[i+1]].
type keySet struct {
	buf []byte
	off []int // nil while every key has width w
	w   int
	n   int

	hint int // the rows reset announced: buf is sized once the first key's width is known
}

func (k *keySet) reset(n int) {
	k.buf = k.buf[:0]
	k.off = nil
	k.w, k.n, k.hint = 0, 0, n
}

// end closes the key just appended to buf.
func (k *keySet) end() {
	if k.off == nil {
		if k.n == 0 {
			k.w = len(k.buf)
			// Appends would grow buf by doubling: up to twice the keys.
			k.buf = slices.Grow(k.buf, max(k.hint-1, 0)*k.w)
		}
		if len(k.buf) == (k.n+1)*k.w {
			k.n++
			return
		}
		k.off = make([]int, k.n+1, k.n+1+k.n/2)
		for i := range k.off {
			k.off[i] = i * k.w
		}
	}
	k.off = append(k.off, len(k.buf))
	k.n++
}

func (k *keySet) key(i int) []byte {
	if k.off == nil {
		return k.buf[i*k.w : i*k.w+k.w]
	}
	return k.buf[k.off[i]:k.off[i+1]]
}

func (k *keySet) len() int { return k.n }

// sortedPerm returns the row indices in key order, stable (rows with equal
// keys keep their input order), as the comparison sort it replaces did.
//
// Each key is first reduced to a uint64 that orders rows as the keys do,
// or ties where they might differ: when every key has the same width, the
// bytes at the positions where some key differs from the first (at most 8
// of them, in order; a constant byte never decides a comparison); else the
// first 8 bytes, zero-padded (a shorter key sorts first, and so does the
// padding). Those words sort by an LSD radix sort over their bytes, skipping
// the bytes all rows share. Only when the word cannot hold the whole key are
// runs of equal words then ordered by comparing the full keys. With drop,
// the keys are let go as soon as the words order the rows exactly (the
// caller needs only the order), before the radix sort's own buffers.
//
// When the varying bits and the row index fit one word together (the
// usual case: a few bytes of two int32 columns, millions of rows), the
// index rides in the word's low bits and one array of words is sorted,
// half the memory traffic and no index arrays: equal keys then order by
// index, which is the stable order.
func (k *keySet) sortedPerm(drop bool) []int32 {
	n := k.len()
	if n >= 2 && k.off == nil {
		pos, width := k.varyingBits(k.w)
		keyBits := 0
		for _, b := range width {
			keyBits += b
		}
		if idxBits := bits.Len(uint(n - 1)); keyBits+idxBits <= 64 {
			return k.packedPerm(pos, width, idxBits, drop)
		}
	}
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	if n < 2 {
		return perm
	}
	words := make([]uint64, n)
	exact := false
	if k.off == nil {
		w := k.w
		pos := k.varyingPositions(w)
		exact = len(pos) <= 8
		if len(pos) > 8 {
			pos = pos[:8]
		}
		for i := range n {
			key := k.buf[i*w : i*w+w]
			var x uint64
			for _, p := range pos {
				x = x<<8 | uint64(key[p])
			}
			words[i] = x
		}
	} else {
		for i := range n {
			key := k.key(i)
			var x uint64
			for j := range 8 {
				x <<= 8
				if j < len(key) {
					x |= uint64(key[j])
				}
			}
			words[i] = x
		}
	}
	if exact && drop {
		k.buf, k.off, k.n = nil, nil, 0
	}
	radixSort(words, perm)
	if exact {
		return perm
	}
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && words[hi] == words[lo] {
			hi++
		}
		if hi-lo > 1 {
			slices.SortStableFunc(perm[lo:hi], func(a, b int32) int {
				return bytes.Compare(k.key(int(a)), k.key(int(b)))
			})
		}
		lo = hi
	}
	return perm
}

// packedPerm is sortedPerm for fixed-width keys whose varying bits (the
// low width[j] bits of byte pos[j]) and a row index of idxBits fit one
// uint64.
func (k *keySet) packedPerm(pos, width []int, idxBits int, drop bool) []int32 {
	n, w := k.n, k.w
	words := make([]uint64, n)
	for i := range n {
		key := k.buf[i*w : i*w+w]
		var x uint64
		for j, p := range pos {
			x = x<<width[j] | uint64(key[p]&(1<<width[j]-1))
		}
		words[i] = x<<idxBits | uint64(i)
	}
	if drop {
		k.buf, k.off, k.n = nil, nil, 0
	}
	// The bytes below idxBits/8 hold index bits only, already in order.
	radixSortFrom(words, nil, idxBits/8)
	perm := make([]int32, n)
	mask := uint64(1)<<idxBits - 1
	for i, x := range words {
		perm[i] = int32(x & mask)
	}
	return perm
}

// varyingPositions are the byte positions at which some key of width w
// differs from the first key.
func (k *keySet) varyingPositions(w int) []int {
	pos, _ := k.varyingBits(w)
	return pos
}

// varyingBits are varyingPositions and, for each, how many of its low bits
// vary: the bits above the highest that differs from the first key's are
// the same in every key, so leaving them out keeps the order.
func (k *keySet) varyingBits(w int) (pos, width []int) {
	first := k.buf[:w]
	diff := make([]byte, w)
	for i := w; i < len(k.buf); i += w {
		key := k.buf[i : i+w]
		for p, b := range key {
			diff[p] |= b ^ first[p]
		}
	}
	for p, d := range diff {
		if d != 0 {
			pos = append(pos, p)
			width = append(width, bits.Len8(d))
		}
	}
	return pos, width
}

// radixSort sorts words ascending, carrying idx along, stably: an LSD radix
// sort by bytes that skips the bytes every word shares.
func radixSort(words []uint64, idx []int32) { radixSortFrom(words, idx, 0) }

// radixSortFrom is radixSort over the bytes from byte first (0: the
// lowest) up, words alone when idx is nil.
func radixSortFrom(words []uint64, idx []int32, first int) {
	n := len(words)
	var counts [8][256]int
	for _, w := range words {
		for b := first; b < 8; b++ {
			counts[b][byte(w>>(8*b))]++
		}
	}
	tw := make([]uint64, n)
	var ti []int32
	if idx != nil {
		ti = make([]int32, n)
	}
	srcW, srcI, dstW, dstI := words, idx, tw, ti
	for b := first; b < 8; b++ {
		c := &counts[b]
		shift := uint(8 * b)
		if c[byte(srcW[0]>>shift)] == n {
			continue
		}
		sum := 0
		for d := range c {
			c[d], sum = sum, sum+c[d]
		}
		if srcI == nil {
			for _, w := range srcW {
				d := byte(w >> shift)
				dstW[c[d]] = w
				c[d]++
			}
		} else {
			for i, w := range srcW {
				d := byte(w >> shift)
				p := c[d]
				c[d]++
				dstW[p] = w
				dstI[p] = srcI[i]
			}
		}
		srcW, srcI, dstW, dstI = dstW, dstI, srcW, srcI
	}
	if &srcW[0] != &words[0] {
		copy(words, srcW)
		copy(idx, srcI)
	}
}
