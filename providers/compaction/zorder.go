package compaction

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
)

// zorderSampleRows bounds the per-column sample that ranks values. It is
// what keeps the first pass constant in memory whatever the group's size.
const zorderSampleRows = 1 << 16

// zColumn is one z-order column: a getter and its sorted value sample.
type zColumn struct {
	name   string
	col    int
	get    func(arrow.Array, int) any
	sample [][]byte // order-preserving encodings, sorted after the first pass
}

// zorderKeyer maps a row to the Morton interleave of its columns' ranks.
//
// Ranking first (rather than interleaving raw value bytes, as Spark's
// ZOrderByteUtils does) gives every column the same 32 bits of resolution
// whatever its domain: strings with a long common prefix or a narrow range
// of large integers still spread over the whole key space. Ranks come from
// a reservoir sample of the group (pass one), so memory stays constant; when
// the group has no more rows than the sample holds, ranks are exact.
//
// rank(v)  = number of sampled values strictly below v (nulls rank 0)
// scaled   = rank * (2^32-1) / len(sample)
// key bits = for b = 31..0, for each column c in order: bit b of scaled[c]
type zorderKeyer struct {
	cols []*zColumn
	rng  *rand.Rand
	seen int64
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
		k.cols = append(k.cols, &zColumn{name: n, col: idx[0], get: get})
	}
	return k, nil
}

// observe feeds pass one: reservoir sampling (Algorithm R) of whole rows so
// the columns' samples stay aligned.
func (k *zorderKeyer) observe(rec arrow.RecordBatch) {
	cols := rec.Columns()
	for i := range int(rec.NumRows()) {
		k.seen++
		slot := -1
		if len(k.cols[0].sample) < zorderSampleRows {
			slot = len(k.cols[0].sample)
		} else if j := k.rng.Int64N(k.seen); j < zorderSampleRows {
			slot = int(j)
		}
		if slot < 0 {
			continue
		}
		for _, c := range k.cols {
			var enc []byte
			if v := c.get(cols[c.col], i); v != nil {
				enc = appendValue([]byte{valueByte}, v)
			} else {
				enc = []byte{nullFirstByte}
			}
			if slot == len(c.sample) {
				c.sample = append(c.sample, enc)
			} else {
				c.sample[slot] = enc
			}
		}
	}
}

// seal sorts the samples; call once between the passes.
func (k *zorderKeyer) seal() {
	for _, c := range k.cols {
		slices.SortFunc(c.sample, bytes.Compare)
	}
}

func (k *zorderKeyer) rank(c *zColumn, cols []arrow.Array, i int) uint32 {
	n := len(c.sample)
	if n == 0 {
		return 0
	}
	v := c.get(cols[c.col], i)
	if v == nil {
		return 0
	}
	enc := appendValue(make([]byte, 1, 17), v)
	enc[0] = valueByte
	r := sort.Search(n, func(j int) bool { return bytes.Compare(c.sample[j], enc) >= 0 })
	return uint32(uint64(r) * 0xFFFFFFFF / uint64(n))
}

func (k *zorderKeyer) appendKey(dst []byte, cols []arrow.Array, i int) []byte {
	var ranks [16]uint32
	rs := ranks[:0]
	if len(k.cols) > len(ranks) {
		rs = make([]uint32, 0, len(k.cols))
	}
	for _, c := range k.cols {
		rs = append(rs, k.rank(c, cols, i))
	}
	return interleave(dst, rs)
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
