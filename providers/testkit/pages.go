package testkit

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// DataPageRows reads the page headers of the Parquet file r: for each row
// group, for each column, the rows (values, nulls included) of its data
// pages in order. Dictionary pages are left out.
func DataPageRows(r parquet.ReaderAtSeeker) ([][][]int, error) {
	rdr, err := file.NewParquetReader(r)
	if err != nil {
		return nil, err
	}
	defer rdr.Close()
	out := make([][][]int, rdr.NumRowGroups())
	for g := range out {
		rg := rdr.RowGroup(g)
		out[g] = make([][]int, rg.NumColumns())
		for c := range out[g] {
			pr, err := rg.GetColumnPageReader(c)
			if err != nil {
				return nil, err
			}
			for pr.Next() {
				switch p := pr.Page().(type) {
				case *file.DataPageV1:
					out[g][c] = append(out[g][c], int(p.NumValues()))
				case *file.DataPageV2:
					out[g][c] = append(out[g][c], int(p.NumValues()))
				}
			}
			if err := pr.Err(); err != nil {
				return nil, fmt.Errorf("row group %d, column %d: %w", g, c, err)
			}
		}
	}
	return out, nil
}

// RequireDataPagesWithin fails t for each data page of a live data file of
// tbl's current snapshot that holds more than limit rows, and returns how
// many data pages it read.
func RequireDataPagesWithin(t testing.TB, tbl *table.Table, limit int) int {
	t.Helper()
	fsys, mans := CurrentManifests(t, tbl)
	pages := 0
	for _, m := range mans {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		for e, err := range m.Entries(fsys, true) {
			if err != nil {
				t.Fatal(err)
			}
			path := e.DataFile().FilePath()
			f, err := fsys.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := DataPageRows(f)
			_ = f.Close()
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			for g, cols := range rows {
				for c, ps := range cols {
					for _, n := range ps {
						pages++
						if n > limit {
							t.Errorf("%s: row group %d, column %d: a data page of %d rows, limit %d", path, g, c, n, limit)
						}
					}
				}
			}
		}
	}
	return pages
}
