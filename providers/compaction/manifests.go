package compaction

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Every commit that adds or rewrites files writes manifests of their
// partition spec, and iceberg-go v0.7.0 cannot write the manifest of every
// spec another engine can: it names the Avro type of each decimal
// partition field "fixed" (Java names it decimal_P_S), so the manifest
// schema of a spec whose partition tuple has two decimal fields (two
// identity or truncate fields on decimals, or a v1 spec keeping a dropped
// decimal field as void beside another) does not compile ("conflicting
// definitions for named type fixed"), and the commit fails after the
// rewrite wrote its files. UnwritableSpecs finds such specs by building
// the very manifest writer a commit builds, so the plan refuses what the
// commit would fail on.

// UnwritableSpecs maps the id of each partition spec of tbl whose manifests
// iceberg-go cannot write to a sentence saying why and what to do; nil when
// there is none.
func UnwritableSpecs(tbl *table.Table) map[int]string {
	md := tbl.Metadata()
	sc := tbl.Schema()
	var out map[int]string
	for _, spec := range md.PartitionSpecs() {
		_, err := iceberg.NewManifestWriter(md.Version(), io.Discard, spec, sc, 0)
		if err == nil {
			continue
		}
		if out == nil {
			out = map[int]string{}
		}
		var decimals []string
		for _, f := range spec.PartitionType(sc).FieldList {
			if _, ok := f.Type.(iceberg.DecimalType); ok {
				decimals = append(decimals, f.Name+" "+f.Type.String())
			}
		}
		if len(decimals) > 1 {
			out[spec.ID()] = fmt.Sprintf("partition spec %d has %d decimal fields (%s), and iceberg-go v0.7.0 gives every decimal partition field the same Avro type name, so it cannot write a manifest of this spec (%v). "+
				"Its files and manifests are left as they are; compact them with another engine (Spark's rewrite_data_files), or evolve the partition spec to at most one decimal field",
				spec.ID(), len(decimals), strings.Join(decimals, ", "), err)
			continue
		}
		out[spec.ID()] = fmt.Sprintf("iceberg-go v0.7.0 cannot write a manifest of partition spec %d (%v). Its files and manifests are left as they are; compact them with another engine (Spark's rewrite_data_files)", spec.ID(), err)
	}
	return out
}

// SpecCheck memoizes UnwritableSpecs across the tables of a plan: a fleet's
// tables share a few partition types, and building a manifest writer (an
// Avro schema compiled) per table was a tenth of a fleet plan's CPU
// (docs/benchmarks.md, Fleet). The writer's construction depends only on the
// format version and the partition type (names, field ids, types,
// optionality), which is the key. The zero value is ready; safe for
// concurrent use.
type SpecCheck struct {
	m sync.Map // key -> error (nil: writable)
}

// Unwritable is UnwritableSpecs(tbl), with each (version, partition type)
// checked once.
func (c *SpecCheck) Unwritable(tbl *table.Table) map[int]string {
	md := tbl.Metadata()
	sc := tbl.Schema()
	for _, spec := range md.PartitionSpecs() {
		key := fmt.Sprintf("%d|%s", md.Version(), spec.PartitionType(sc))
		v, ok := c.m.Load(key)
		if !ok {
			_, err := iceberg.NewManifestWriter(md.Version(), io.Discard, spec, sc, 0)
			v, _ = c.m.LoadOrStore(key, err)
		}
		if v != nil {
			// Some spec cannot be written: the full check words why.
			return UnwritableSpecs(tbl)
		}
	}
	return nil
}
