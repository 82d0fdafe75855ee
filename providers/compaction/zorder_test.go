package compaction

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
)

// refMorton is the reference z-value, written as plainly as possible:
// exact ranks over all n rows (nulls below every value), scaled to 32 bits,
// then bits interleaved x,y from the most significant down.
func refMorton(xRank, yRank uint64, n uint64) uint64 {
	sx := uint32(xRank * 0xFFFFFFFF / n)
	sy := uint32(yRank * 0xFFFFFFFF / n)
	var z uint64
	for b := 31; b >= 0; b-- {
		z = z<<1 | uint64(sx>>uint(b)&1)
		z = z<<1 | uint64(sy>>uint(b)&1)
	}
	return z
}

type nullableInt struct {
	null bool
	v    int32
}

// exactRanks returns, for a value, the number of values strictly below it
// (nulls count as below every value).
func exactRanks(all []nullableInt) func(nullableInt) uint64 {
	var vals []int32
	nulls := 0
	for _, v := range all {
		if v.null {
			nulls++
			continue
		}
		vals = append(vals, v.v)
	}
	slices.Sort(vals)
	return func(v nullableInt) uint64 {
		if v.null {
			return 0
		}
		return uint64(nulls + sort.Search(len(vals), func(i int) bool { return vals[i] >= v.v }))
	}
}

func readXY(t testing.TB, tbl *table.Table, path string) []([2]nullableInt) {
	t.Helper()
	tb, release := readParquet(t, tbl, path)
	defer release()
	tbc := concatTable(t, tb)
	defer tbc.Release()
	xs := tbc.Column(tbc.Schema().FieldIndices("x")[0]).Data().Chunk(0).(*array.Int32)
	ys := tbc.Column(tbc.Schema().FieldIndices("y")[0]).Data().Chunk(0).(*array.Int32)
	out := make([][2]nullableInt, xs.Len())
	for i := range xs.Len() {
		out[i] = [2]nullableInt{{xs.IsNull(i), xs.Value(i)}, {ys.IsNull(i), ys.Value(i)}}
	}
	return out
}

// filesTouched counts files whose y bounds overlap [lo, hi]: what a reader
// pruning on column stats must open for `y BETWEEN lo AND hi`.
func filesTouched(t testing.TB, tbl *table.Table, lo, hi int32) (touched, total int) {
	t.Helper()
	for _, task := range liveTasks(t, tbl) {
		total++
		lb, ok1 := task.File.LowerBoundValues()[5]
		ub, ok2 := task.File.UpperBoundValues()[5]
		if !ok1 || !ok2 {
			touched++
			continue
		}
		l := int32(binary.LittleEndian.Uint32(lb))
		u := int32(binary.LittleEndian.Uint32(ub))
		if u >= lo && l <= hi {
			touched++
		}
	}
	return touched, total
}

func TestZOrderMatchesReferenceAndPrunes(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "zo", order: testOrder()})
	tbl = appendMany(t, tbl, 16, 4000, regions)
	before := rowStrings(t, tbl)
	const lo, hi = 40000, 45000
	touchedBefore, totalBefore := filesTouched(t, tbl, lo, hi)

	res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{
		Strategy:       ZOrder,
		ZOrderColumns:  []string{"x", "y"},
		TargetFileSize: 64 << 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	after := res.Table
	requireSameRows(t, before, rowStrings(t, after))

	// Exact ranks over the whole group (64,000 rows fit the sample).
	var all [][2]nullableInt
	tasks := liveTasks(t, after)
	perFile := make([][][2]nullableInt, len(tasks))
	for i, task := range tasks {
		perFile[i] = readXY(t, after, task.File.FilePath())
		all = append(all, perFile[i]...)
		if id := task.File.SortOrderID(); id != nil && *id != 0 {
			t.Fatalf("zorder output claims the table's sort order %d", *id)
		}
	}
	n := uint64(len(all))
	if n > zorderSampleRows {
		t.Fatalf("test needs exact ranks: %d rows exceed the sample", n)
	}
	xs, ys := make([]nullableInt, len(all)), make([]nullableInt, len(all))
	for i, r := range all {
		xs[i], ys[i] = r[0], r[1]
	}
	rx, ry := exactRanks(xs), exactRanks(ys)
	type span struct{ min, max uint64 }
	var spans []span
	for fi, rows := range perFile {
		var prev uint64
		s := span{min: ^uint64(0)}
		for i, r := range rows {
			z := refMorton(rx(r[0]), ry(r[1]), n)
			if i > 0 && z < prev {
				t.Fatalf("file %d row %d: z-order break (%x after %x)", fi, i, z, prev)
			}
			prev = z
			s.min, s.max = min(s.min, z), max(s.max, z)
		}
		spans = append(spans, s)
	}
	// One group: its files are consecutive ranges of the curve.
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.min, b.min) })
	for i := 1; i < len(spans); i++ {
		if spans[i].min < spans[i-1].max {
			t.Fatalf("files overlap on the z curve: %x < %x", spans[i].min, spans[i-1].max)
		}
	}

	touchedAfter, totalAfter := filesTouched(t, after, lo, hi)
	t.Logf("y BETWEEN %d AND %d touches %d/%d files before, %d/%d after zorder", lo, hi, touchedBefore, totalBefore, touchedAfter, totalAfter)
	if touchedBefore != totalBefore {
		t.Fatalf("setup: appended files should all span y, %d/%d touched", touchedBefore, totalBefore)
	}
	if float64(touchedAfter)/float64(totalAfter) > 0.5 {
		t.Fatalf("zorder should prune at least half the files for a 5%% y range: %d/%d touched", touchedAfter, totalAfter)
	}
}

func TestInterleave(t *testing.T) {
	// x=0b10..., y=0b01...: first byte interleaves 1,0,0,1,0,0,0,0.
	got := interleave(nil, []uint32{0x80000000, 0x40000000})
	if got[0] != 0b10010000 || len(got) != 8 {
		t.Fatalf("interleave = %08b (len %d)", got[0], len(got))
	}
	// Three columns: 96 bits, 12 bytes; all ones stays all ones.
	got = interleave(nil, []uint32{^uint32(0), ^uint32(0), ^uint32(0)})
	if len(got) != 12 || slices.ContainsFunc(got, func(b byte) bool { return b != 0xFF }) {
		t.Fatalf("interleave of ones = %x", got)
	}
}

// zorder on a partitioned table: one curve per partition, rows unchanged,
// groups rewritten concurrently.
func TestZOrderPartitionedConcurrentGroups(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "zop", partitioned: true})
	tbl = appendMany(t, tbl, 6, 3000, regions)
	before := rowStrings(t, tbl)
	res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{
		Strategy: ZOrder, ZOrderColumns: []string{"x", "y"}, TargetFileSize: 32 << 10,
		MaxConcurrentGroups: 3, PartialProgress: true, Catalog: env.cat,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed() != len(regions) {
		t.Fatalf("want %d groups committed, got %d", len(regions), res.Committed())
	}
	after := env.load(t, "zop")
	requireSameRows(t, before, rowStrings(t, after))
	perPartition := map[string]int{}
	for _, task := range liveTasks(t, after) {
		perPartition[partitionName(after, task.File)]++
	}
	if len(perPartition) != len(regions) {
		t.Fatalf("outputs in %d partitions, want %d", len(perPartition), len(regions))
	}
	for p, n := range perPartition {
		if n < 2 {
			t.Fatalf("partition %s: %d files at a 32 KiB target", p, n)
		}
	}
}

// Z-order keys never invert the order of a column: a row at or above
// another in every column has a key at or above its key. Within one run
// keyed whole (exact ranks), and across runs that spill (ranks by the
// sample the first run fixed), where the merge needs it between runs.
func TestZOrderKeysMonotone(t *testing.T) {
	as, err := table.SchemaToArrowSchema(testSchema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, cols := range [][]string{{"x", "y"}, {"ts", "name", "y"}} {
		for _, whole := range []bool{true, false} {
			k, err := newZOrderKeyer(cols, testSchema(), as)
			if err != nil {
				t.Fatal(err)
			}
			type row struct {
				vals [][]byte
				key  []byte
			}
			var rows []row
			batches := 1
			if !whole {
				batches = 3
			}
			for b := range batches {
				rec := genRows(uint64(b+7), 0, 3000, regions)
				ks := &keySet{}
				k.keys(ks, rec.Columns(), int(rec.NumRows()), whole)
				for i := range int(rec.NumRows()) {
					r := row{key: slices.Clone(ks.key(i))}
					for _, c := range k.cols {
						v := []byte{nullFirstByte}
						if x := c.get(rec.Column(c.col), i); x != nil {
							v = appendValue([]byte{valueByte}, x)
						}
						r.vals = append(r.vals, v)
					}
					rows = append(rows, r)
				}
				rec.Release()
			}
			rng := rand.New(rand.NewPCG(5, 6))
			checked := 0
			for range 400000 {
				a, b := rows[rng.IntN(len(rows))], rows[rng.IntN(len(rows))]
				le := true
				for c := range a.vals {
					le = le && bytes.Compare(a.vals[c], b.vals[c]) <= 0
				}
				if !le {
					continue
				}
				checked++
				if bytes.Compare(a.key, b.key) > 0 {
					t.Fatalf("%v whole=%v: key %x of a row at or below another in every column is above its key %x", cols, whole, a.key, b.key)
				}
			}
			if checked < 1000 {
				t.Fatalf("only %d comparable pairs checked", checked)
			}
		}
	}
}

// A z-order group past its run budget spills, takes the sampling pass and
// merges its runs: rows unchanged, no spill file left, and the layout
// still prunes a range on the second column.
func TestZOrderSpills(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "zos"})
	tbl = appendMany(t, tbl, 16, 4000, regions)
	before := rowStrings(t, tbl)
	tmp := t.TempDir()
	res, err := Run(context.Background(), tbl, groupsAll(t, tbl), Options{
		Strategy: ZOrder, ZOrderColumns: []string{"x", "y"},
		TargetFileSize: 64 << 10, MemoryBudget: 3 << 20, TempDir: tmp,
	})
	if err != nil {
		t.Fatal(err)
	}
	requireSameRows(t, before, rowStrings(t, res.Table))
	if res.Groups[0].SpilledRuns < 2 {
		t.Fatalf("want the group spilled to several runs, got %d", res.Groups[0].SpilledRuns)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("spill files left behind: %d", len(left))
	}
	touched, total := filesTouched(t, res.Table, 40000, 45000)
	if float64(touched)/float64(total) > 0.5 {
		t.Fatalf("zorder after spilling should prune at least half the files for a 5%% y range: %d/%d touched", touched, total)
	}
}
