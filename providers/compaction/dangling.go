package compaction

import (
	"bytes"
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// posDeleteFilePathID is the reserved field id of a position delete file's
// file_path column (Iceberg spec); its bounds say which data files the
// delete can name.
const posDeleteFilePathID = 2147483546

// truncatedBoundLength is the default length writers truncate string bounds
// to; a bound no longer than it may be a prefix, not a path.
const truncatedBoundLength = 16

// maxRangeDeletes bounds the position delete files whose file_path bounds
// span several paths that danglingDeletes checks against every live data
// file (a linear scan each); past it they are kept, as if live.
const maxRangeDeletes = 1024

// danglingDeletes is the position delete files and deletion vectors of snap
// that can match no live data file: every path their file_path bounds (or
// a DV's referenced data file) allow is gone from the snapshot, removed by
// an earlier rewrite that left them behind (Trino's optimize does). They
// delete nothing, so a rewrite drops them in its snapshot, as Java's
// RewriteDataFiles does with remove-dangling-deletes. Otherwise they stay
// in the table and the next plan counts them as deletes its files still
// carry, compacting the same files again on every run. Only the data file
// paths the deletes can name are held, not every live path; a delete file
// without file_path bounds is never dangling (it may name any file).
func danglingDeletes(ctx context.Context, fs icebergio.IO, snap *table.Snapshot) ([]iceberg.DataFile, error) {
	if snap == nil {
		return nil, nil
	}
	mans, err := snap.Manifests(fs)
	if err != nil {
		return nil, err
	}
	type rangeDelete struct {
		lower, upper []byte
		df           iceberg.DataFile
		live         bool
	}
	// each calls fn with every live entry's file of the manifests of one
	// content.
	each := func(content iceberg.ManifestContent, fn func(iceberg.DataFile)) error {
		for _, m := range mans {
			if m.ManifestContent() != content {
				continue
			}
			for e, err := range m.Entries(fs, true) {
				if err != nil {
					return fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
				}
				fn(e.DataFile())
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return nil
	}
	exact := map[string][]iceberg.DataFile{} // a single path they can name
	var ranges []*rangeDelete
	err = each(iceberg.ManifestContentDeletes, func(df iceberg.DataFile) {
		if df.ContentType() != iceberg.EntryContentPosDeletes {
			return
		}
		if ref := df.ReferencedDataFile(); ref != nil && *ref != "" {
			exact[*ref] = append(exact[*ref], df)
			return
		}
		lo, hi := df.LowerBoundValues()[posDeleteFilePathID], df.UpperBoundValues()[posDeleteFilePathID]
		switch {
		case len(lo) <= truncatedBoundLength || len(hi) <= truncatedBoundLength:
			// No bounds, or bounds that may be truncated (writers cut
			// string bounds to 16 characters by default): it may name
			// any file.
		case bytes.Equal(lo, hi):
			exact[string(lo)] = append(exact[string(lo)], df)
		case len(ranges) < maxRangeDeletes:
			ranges = append(ranges, &rangeDelete{lower: lo, upper: hi, df: df})
		}
	})
	if err != nil || (len(exact) == 0 && len(ranges) == 0) {
		return nil, err
	}
	err = each(iceberg.ManifestContentData, func(df iceberg.DataFile) {
		p := df.FilePath()
		delete(exact, p)
		if len(ranges) == 0 {
			return
		}
		pb := []byte(p)
		for _, r := range ranges {
			if !r.live && bytes.Compare(r.lower, pb) <= 0 && bytes.Compare(pb, r.upper) <= 0 {
				r.live = true
			}
		}
	})
	if err != nil {
		return nil, err
	}
	var out []iceberg.DataFile
	for _, dfs := range exact {
		out = append(out, dfs...)
	}
	for _, r := range ranges {
		if !r.live {
			out = append(out, r.df)
		}
	}
	return out, nil
}
