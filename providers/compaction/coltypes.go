package compaction

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
)

// Column types of format v3 that the rewrite must not touch. iceberg-go
// v0.7.0 parses them, and its scanner and writer take them, but:
//   - unknown: the spec keeps such a column out of data files (every
//     value is null); iceberg-go's writer writes it, as a column that its
//     own reader then fails on ("decode plain INT32"): one compaction
//     makes the table unreadable;
//   - variant: a writer may shred a variant into typed Parquet columns,
//     and nothing here checks that a rewrite keeps what readers make of
//     them (iceberg-go cannot even add such a column);
//   - geometry, geography: the spec bounds them by bounding boxes, not by
//     the min/max of their WKB bytes that a generic writer records, and a
//     reader pruning by wrong bounds skips rows.
//
// unrewritableTypes holds each with the sentence the plan shows.
var unrewritableTypes = map[string]string{
	"unknown":   "the spec keeps unknown columns out of data files, and iceberg-go's writer would write them, as a column that cannot be read back",
	"variant":   "icewright cannot check that a rewrite keeps variant values as other engines read them (shredded fields)",
	"geometry":  "icewright cannot write the bounding-box bounds the spec requires for geometry columns",
	"geography": "icewright cannot write the bounding-box bounds the spec requires for geography columns",
}

// unrewritableType is the key of t in unrewritableTypes ("" when none):
// geometry and geography carry their CRS in their names.
func unrewritableType(t iceberg.Type) string {
	switch t.(type) {
	case iceberg.UnknownType:
		return "unknown"
	case iceberg.VariantType:
		return "variant"
	case iceberg.GeometryType:
		return "geometry"
	case iceberg.GeographyType:
		return "geography"
	}
	return ""
}

// TypesProblem is why no data file of a table with schema sc may be
// rewritten ("" when none): a column, at any depth, of a type in
// unrewritableTypes. The plan refuses the table's compaction with it, and
// Run refuses to start, so they agree. Other actions (expiry, orphans,
// manifests) never read or write rows and still run.
func TypesProblem(sc *iceberg.Schema) string {
	if sc == nil {
		return ""
	}
	byID, err := iceberg.IndexByID(sc)
	if err != nil {
		return fmt.Sprintf("icewright cannot index the table's schema (%v), so it rewrites no data file", err)
	}
	found := map[string][]string{}
	for id, f := range byID {
		k := unrewritableType(f.Type)
		if k == "" {
			continue
		}
		name, ok := sc.FindColumnName(id)
		if !ok {
			name = f.Name
		}
		found[k] = append(found[k], fmt.Sprintf("%q (%s)", name, f.Type))
	}
	if len(found) == 0 {
		return ""
	}
	kinds := make([]string, 0, len(found))
	for k := range found {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var parts []string
	for _, k := range kinds {
		cols := found[k]
		slices.Sort(cols)
		noun := "column"
		if len(cols) > 1 {
			noun = "columns"
		}
		parts = append(parts, fmt.Sprintf("%s %s: %s", noun, strings.Join(cols, ", "), unrewritableTypes[k]))
	}
	return "icewright rewrites no data file of a table with such columns (" + strings.Join(parts, "; ") +
		"); compact it with an engine that writes these types as the spec requires, or leave compaction out of its policy"
}
