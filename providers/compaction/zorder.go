package compaction

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
)

// zorderSampleRows bounds the per-column sample that ranks the values of a
// group too large for one run. It keeps that mapping constant in memory
// whatever the group's size.
const zorderSampleRows = 1 << 16

// zColumn is one z-order column.
type zColumn struct {
	name string
	col  int
	typ  iceberg.Type
	get  func(arrow.Array, int) any // the generic reader, for array types zReaderFor has no fast path for

	// The rank mapping of a group that does not fit one run, fixed before
	// its first run is keyed so that every run's keys compare: sorted
	// non-null encodings of a sample of the group, and the nulls in it.
	sample      []uint64
	sampleNulls int
	// Pass one's reservoir (sampled rows, aligned across columns).
	obs     []uint64
	obsNull []bool
}

// zorderKeyer maps a row to the Morton interleave of its columns' ranks.
//
// Ranking first (rather than interleaving raw value bytes, as Spark's
// ZOrderByteUtils does) gives every column the same 32 bits of resolution
// whatever its domain: a narrow range of large integers still spreads over
// the whole key space. Each value is first encoded as an order-preserving
// uint64, read from the column array without boxing (integers, dates,
// times and timestamps exactly; floats by their bits; decimals through
// float64; strings and binaries by 8 bytes after the prefix all of the
// run's values share). When the group fits one run (the usual case) ranks
// are exact: one radix sort of each column's encodings. A group that
// spills ranks by a sample fixed before its first run: pass one's
// reservoir of the whole group when run() asked for it (sampleGroup), else
// the first run's values.
//
// rank(v)  = number of values strictly below v (nulls rank 0)
// scaled   = rank * (2^32-1) / rows
// key bits = for b = 31..0, for each column c in order: bit b of scaled[c]
type zorderKeyer struct {
	cols  []*zColumn
	rng   *rand.Rand
	seen  int64
	fixed bool // the sample mapping is in force
}

func newZOrderKeyer(names []string, sc *iceberg.Schema, as *arrow.Schema) (*zorderKeyer, error) {
	if len(names) < 2 {
		return nil, fmt.Errorf("zorder needs at least 2 columns, got %d", len(names))
	}
	k := &zorderKeyer{rng: rand.New(rand.NewPCG(0x1ce0, 0x25))}
	for _, n := range names {
		f, ok := topLevel(sc, n)
		if !ok {
			return nil, fmt.Errorf("zorder column %q is not a top-level column of the table schema", n)
		}
		idx := as.FieldIndices(n)
		if len(idx) != 1 {
			return nil, fmt.Errorf("zorder column %q is not a top-level column", n)
		}
		get, _, err := sortKey(iceberg.IdentityTransform{}, f.Type)
		if err != nil {
			return nil, fmt.Errorf("zorder column %q: %w", n, err)
		}
		k.cols = append(k.cols, &zColumn{name: n, col: idx[0], typ: f.Type, get: get})
	}
	return k, nil
}

// observe feeds pass one: reservoir sampling (Algorithm R) of whole rows so
// the columns' samples stay aligned.
func (k *zorderKeyer) observe(rec arrow.RecordBatch) {
	rs := make([]zReader, len(k.cols))
	for c, col := range k.cols {
		rs[c] = zReaderFor(rec.Column(col.col), col)
	}
	for i := range int(rec.NumRows()) {
		k.seen++
		slot := -1
		if len(k.cols[0].obs) < zorderSampleRows {
			slot = len(k.cols[0].obs)
		} else if j := k.rng.Int64N(k.seen); j < zorderSampleRows {
			slot = int(j)
		}
		if slot < 0 {
			continue
		}
		for c, col := range k.cols {
			v, ok := rs[c].enc(i, 0)
			if slot == len(col.obs) {
				col.obs = append(col.obs, v)
				col.obsNull = append(col.obsNull, !ok)
			} else {
				col.obs[slot], col.obsNull[slot] = v, !ok
			}
		}
	}
}

// seal fixes the sample mapping from pass one's reservoir.
func (k *zorderKeyer) seal() {
	for _, c := range k.cols {
		c.sample, c.sampleNulls = c.sample[:0], 0
		for j, v := range c.obs {
			if c.obsNull[j] {
				c.sampleNulls++
				continue
			}
			c.sample = append(c.sample, v)
		}
		slices.Sort(c.sample)
		c.obs, c.obsNull = nil, nil
	}
	k.fixed = true
}

func (k *zorderKeyer) columns() []int {
	cs := make([]int, len(k.cols))
	for i, c := range k.cols {
		cs[i] = c.col
	}
	return cs
}

// keys implements rowKeyer.
func (k *zorderKeyer) keys(ks *keySet, cols []arrow.Array, n int, whole bool) {
	ranks := make([][]uint32, len(k.cols))
	if !whole && !k.fixed {
		// A first spilled run without pass one: its values are the sample.
		for _, c := range k.cols {
			r := zReaderFor(cols[c.col], c)
			stride := max(n/zorderSampleRows, 1)
			for i := 0; i < n; i += stride {
				v, ok := r.enc(i, 0)
				c.obs = append(c.obs, v)
				c.obsNull = append(c.obsNull, !ok)
			}
		}
		k.seal()
	}
	for ci, c := range k.cols {
		r := zReaderFor(cols[c.col], c)
		if k.fixed {
			ranks[ci] = c.sampledRanks(r, n)
		} else {
			ranks[ci] = columnRanks(r, n)
		}
	}
	ks.reset(n)
	if len(k.cols) == 2 {
		x, y := ranks[0], ranks[1]
		for i := range n {
			ks.buf = binary.BigEndian.AppendUint64(ks.buf, spread(x[i])<<1|spread(y[i]))
			ks.end()
		}
		return
	}
	vals := make([]uint32, len(k.cols))
	for i := range n {
		for c := range vals {
			vals[c] = ranks[c][i]
		}
		ks.buf = interleave(ks.buf, vals)
		ks.end()
	}
}

// columnRanks ranks rows [0, n) of one column among themselves.
func columnRanks(r zReader, n int) []uint32 {
	skip := r.commonPrefix(n)
	enc := make([]uint64, 0, n)
	idx := make([]int32, 0, n)
	for i := range n {
		if v, ok := r.enc(i, skip); ok {
			enc = append(enc, v)
			idx = append(idx, int32(i))
		}
	}
	nulls := n - len(enc)
	out := make([]uint32, n) // nulls rank 0
	if len(enc) == 0 {
		return out
	}
	// As keySet.packedPerm: when the bits that vary and the row index fit
	// one word, one array of words is sorted.
	var diff uint64
	for _, v := range enc {
		diff |= v ^ enc[0]
	}
	keyBits, idxBits := bits.Len64(diff), bits.Len(uint(n-1))
	if keyBits+idxBits <= 64 {
		mask := uint64(1)<<keyBits - 1
		for j, v := range enc {
			enc[j] = (v&mask)<<idxBits | uint64(idx[j])
		}
		idx = nil
		radixSortFrom(enc, nil, idxBits/8)
		var rank uint64
		for j, w := range enc {
			if j == 0 || w>>idxBits != enc[j-1]>>idxBits {
				rank = uint64(nulls + j)
			}
			out[w&(uint64(1)<<idxBits-1)] = uint32(rank * 0xFFFFFFFF / uint64(n))
		}
		return out
	}
	radixSort(enc, idx)
	var rank uint64
	for j, v := range enc {
		if j == 0 || v != enc[j-1] {
			rank = uint64(nulls + j)
		}
		out[idx[j]] = uint32(rank * 0xFFFFFFFF / uint64(n))
	}
	return out
}

// sampledRanks ranks rows [0, n) of one column by the fixed sample.
func (c *zColumn) sampledRanks(r zReader, n int) []uint32 {
	out := make([]uint32, n)
	total := uint64(len(c.sample) + c.sampleNulls)
	if total == 0 {
		return out
	}
	for i := range n {
		v, ok := r.enc(i, 0)
		if !ok {
			continue
		}
		pos, _ := slices.BinarySearch(c.sample, v) // first sample >= v: the count below
		out[i] = uint32(uint64(c.sampleNulls+pos) * 0xFFFFFFFF / total)
	}
	return out
}

// spread moves bit b of x to bit 2b.
func spread(x uint32) uint64 {
	v := uint64(x)
	v = (v | v<<16) & 0x0000FFFF0000FFFF
	v = (v | v<<8) & 0x00FF00FF00FF00FF
	v = (v | v<<4) & 0x0F0F0F0F0F0F0F0F
	v = (v | v<<2) & 0x3333333333333333
	v = (v | v<<1) & 0x5555555555555555
	return v
}

// interleave appends the Morton code of vals: the most significant bit of
// every value first, in column order, then the next bit, and so on.
func interleave(dst []byte, vals []uint32) []byte {
	var cur byte
	nbits := 0
	for b := 31; b >= 0; b-- {
		for _, v := range vals {
			cur = cur<<1 | byte(v>>uint(b)&1)
			nbits++
			if nbits == 8 {
				dst = append(dst, cur)
				cur, nbits = 0, 0
			}
		}
	}
	if nbits > 0 {
		dst = append(dst, cur<<uint(8-nbits))
	}
	return dst
}

// zReader reads one column array's values as order-preserving uint64
// encodings: a < b implies enc(a) <= enc(b).
type zReader interface {
	// enc is row i's encoding; false for a null. skip is how many leading
	// bytes of a string or binary value to pass over (commonPrefix).
	enc(i, skip int) (uint64, bool)
	// commonPrefix is the length of the prefix every non-null value of
	// rows [0, n) shares (string and binary columns; 0 for the others).
	commonPrefix(n int) int
}

type zFixed func(i int) (uint64, bool)

func (f zFixed) enc(i, _ int) (uint64, bool) { return f(i) }
func (zFixed) commonPrefix(int) int          { return 0 }

type zBytes[T string | []byte] struct {
	isNull func(int) bool
	value  func(int) T
}

func (b zBytes[T]) enc(i, skip int) (uint64, bool) {
	if b.isNull(i) {
		return 0, false
	}
	return window(b.value(i), skip), true
}

func (b zBytes[T]) commonPrefix(n int) int {
	var lo, hi T
	seen := false
	for i := range n {
		if b.isNull(i) {
			continue
		}
		v := b.value(i)
		if !seen {
			lo, hi, seen = v, v, true
			continue
		}
		if string(v) < string(lo) {
			lo = v
		}
		if string(v) > string(hi) {
			hi = v
		}
	}
	// Every value between lo and hi shares their common prefix.
	p := 0
	for p < len(lo) && p < len(hi) && lo[p] == hi[p] {
		p++
	}
	return p
}

// window is the 8 bytes of b after skip, zero-padded, big-endian.
func window[T string | []byte](b T, skip int) uint64 {
	var x uint64
	for j := skip; j < skip+8; j++ {
		x <<= 8
		if j < len(b) {
			x |= uint64(b[j])
		}
	}
	return x
}

func fixedReader[V any, A interface {
	arrow.Array
	Value(int) V
}](a A, conv func(V) uint64) zFixed {
	return func(i int) (uint64, bool) {
		if a.IsNull(i) {
			return 0, false
		}
		return conv(a.Value(i)), true
	}
}

// encInt32, encInt64 and encFloat64 are the order-preserving unsigned
// forms of their types (the sign bit flipped; a negative float's bits all
// inverted), shared by the sort keys (appendValue) and z-order.
func encInt32(v int32) uint64 { return uint64(uint32(v) ^ 1<<31) }
func encInt64(v int64) uint64 { return uint64(v) ^ 1<<63 }

func encFloat64(f float64) uint64 {
	b := math.Float64bits(f)
	if b&(1<<63) != 0 {
		return ^b
	}
	return b | 1<<63
}

// zReaderFor reads a with fast paths for the arrow types the scanner
// produces; any other representation goes through the generic getter and
// the sort key's byte encoding (also order-preserving).
func zReaderFor(a arrow.Array, c *zColumn) zReader {
	switch x := a.(type) {
	case *array.Int32:
		return fixedReader(x, encInt32)
	case *array.Date32:
		return fixedReader(x, func(v arrow.Date32) uint64 { return encInt32(int32(v)) })
	case *array.Int64:
		return fixedReader(x, encInt64)
	case *array.Time64:
		return fixedReader(x, func(v arrow.Time64) uint64 { return encInt64(int64(v)) })
	case *array.Timestamp:
		return fixedReader(x, func(v arrow.Timestamp) uint64 { return encInt64(int64(v)) })
	case *array.Float32:
		return fixedReader(x, func(v float32) uint64 { return encFloat64(float64(v)) })
	case *array.Float64:
		return fixedReader(x, encFloat64)
	case *array.Boolean:
		return fixedReader(x, func(v bool) uint64 {
			if v {
				return 1
			}
			return 0
		})
	case *array.Decimal128:
		if dt, ok := c.typ.(iceberg.DecimalType); ok {
			scale := int32(dt.Scale())
			// float64 is monotone in the unscaled value: ties, never inversions.
			return fixedReader(x, func(v decimal128.Num) uint64 { return encFloat64(v.ToFloat64(scale)) })
		}
	case *array.String:
		return zBytes[string]{isNull: x.IsNull, value: x.Value}
	case *array.LargeString:
		return zBytes[string]{isNull: x.IsNull, value: x.Value}
	case *array.StringView:
		return zBytes[string]{isNull: x.IsNull, value: x.Value}
	case *array.Binary:
		return zBytes[[]byte]{isNull: x.IsNull, value: x.Value}
	case *array.LargeBinary:
		return zBytes[[]byte]{isNull: x.IsNull, value: x.Value}
	case *array.BinaryView:
		return zBytes[[]byte]{isNull: x.IsNull, value: x.Value}
	case *array.FixedSizeBinary:
		return zBytes[[]byte]{isNull: x.IsNull, value: x.Value}
	}
	get := c.get
	return zBytes[[]byte]{
		isNull: func(i int) bool { return get(a, i) == nil },
		value:  func(i int) []byte { return appendValue(nil, get(a, i)) },
	}
}
