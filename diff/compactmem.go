package diff

import "slices"

// The compaction executor's memory rule (providers/compaction): how much a
// group's rewrite holds at its peak, how many groups its gate lets run
// together within the budget, and the budget when compaction.memory is
// unset. The executor admits groups with it and sizes the process's memory
// limit with it; the plan estimates an action's peak memory with it.

const (
	// ZOrderInflation is how much larger than its Parquet files a group
	// is as Arrow batches, on the generous side (about 2-3 measured on zstd
	// files of ints and strings): past the run budget a zorder group takes
	// a sampling pass. Underestimating costs balance, not order: a group
	// that spills without that pass ranks by its first run.
	ZOrderInflation = 4
	// KeyBytesPerRow is what a sorted run holds per row beside its values
	// at the sort's peak: the radix sort's words and row indices, double
	// buffered (the keys themselves are let go before it when the words
	// hold them whole; z-order's ranking passes hold about as much).
	// Measured on the 10M-row benchmark: a live heap of 189 MiB per group
	// of 2.5M rows whose values are 129 MiB.
	KeyBytesPerRow = 24
	// groupStreamBytes is a group's read side and encoders beside its
	// buffered row group.
	groupStreamBytes = 24 << 20
	// defaultWriterRowGroup bounds row groups when the table does not set
	// write.parquet.row-group-size-bytes. pqarrow's buffered writer keeps
	// a whole row group's compressed pages in memory, in buffers that grow
	// by doubling, so it holds about 2.5x the row group: at iceberg-go's
	// 128 MiB default that alone is over 300 MiB per open file, and it
	// grows with the target. 4 MiB row groups keep the writer near 10 MiB
	// at any target (in the 2M-row benchmark: 2.4 s less CPU in the
	// collector than 8 MiB under the same memory limit) and are in the
	// range DuckDB writes by default.
	defaultWriterRowGroup = 4 << 20
)

// GroupMemoryNeed is what one group's rewrite holds at its peak: the
// writer's buffered row group (2.5x), the read side and the encoders, and,
// to sort (sort or zorder), the group's rows as Arrow arrays (arrowBytes)
// and their keys (KeyBytesPerRow a row).
func GroupMemoryNeed(groupBytes, rowGroup int64, sorts bool, arrowBytes, rows int64) int64 {
	need := min(ZOrderInflation*groupBytes, rowGroup)*5/2 + groupStreamBytes
	if sorts {
		need += arrowBytes + KeyBytesPerRow*rows
	}
	return need
}

// MemoryTogether is the most the executor's gate holds at once: the
// largest needs of as many groups as run at once, within the budget (a
// group whose need is above the budget runs alone).
func MemoryTogether(needs []int64, concurrency int, budget int64) int64 {
	if len(needs) == 0 {
		return 0
	}
	s := slices.Clone(needs)
	slices.Sort(s)
	slices.Reverse(s)
	var together int64
	for _, n := range s[:min(len(s), max(concurrency, 1))] {
		together += n
	}
	return min(together, max(budget, s[0]))
}

// DefaultCompactionMemory is compaction.memory's default: twice the target
// file size plus 16 MiB per group rewritten at once.
func DefaultCompactionMemory(target int64, concurrency int) int64 {
	return (2*target + 16<<20) * int64(max(concurrency, 1))
}

// WriterRowGroupBytes is the row-group size the writer closes groups at:
// the table's write.parquet.row-group-size-bytes (configured; 0 when it
// sets none), else defaultWriterRowGroup; never more than a quarter of the
// target (several groups per file keep the size estimate honest, as each
// flush recalibrates bytes per row; not below 16 KiB) nor than memCap (0:
// no cap).
func WriterRowGroupBytes(configured, target, memCap int64) int64 {
	rg := int64(defaultWriterRowGroup)
	if configured > 0 {
		rg = configured
	}
	rg = min(rg, max(target/4, 16<<10))
	if memCap > 0 {
		rg = min(rg, memCap)
	}
	return rg
}
