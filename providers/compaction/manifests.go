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
		if why := droppedSource(spec, sc); why != "" {
			if out == nil {
				out = map[int]string{}
			}
			out[spec.ID()] = why
			continue
		}
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

// droppedSource is why a rewrite cannot write spec's files when a
// partition field's source column is gone from the current schema sc (the
// column dropped after the field was removed from the spec, which Java and
// Spark allow), or "". iceberg-go resolves a field's source in the current
// schema only, so it writes the outputs' partition tuples empty, and the
// commit check refuses every such rewrite (nothing is lost, but apply fails
// on every run). A void field has no value to lose.
func droppedSource(spec iceberg.PartitionSpec, sc *iceberg.Schema) string {
	for _, f := range spec.Fields() {
		if _, void := f.Transform.(iceberg.VoidTransform); void {
			continue
		}
		if _, ok := sc.FindFieldByID(f.SourceID()); !ok {
			return fmt.Sprintf("partition spec %d's field %s is %s of column id %d, which was dropped from the schema, and iceberg-go v0.7.0 writes a rewritten file's partition only from the current schema's columns, so the commit would fail. "+
				"Its files are left as they are; compact them with another engine (Spark's rewrite_data_files), or rewrite them into the current spec",
				spec.ID(), f.Name, f.Transform, f.SourceID())
		}
	}
	return ""
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
		if droppedSource(spec, sc) != "" {
			return UnwritableSpecs(tbl)
		}
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

// WithoutUnwritableSpecs drops the groups of specs in UnwritableSpecs,
// whose commit would fail: the plan refuses them up front
// (diff.compactRefusals) and the others are still compacted. held counts
// the files left out.
func WithoutUnwritableSpecs(tbl *table.Table, groups []Group) (kept []Group, held int) {
	bad := UnwritableSpecs(tbl)
	if len(bad) == 0 {
		return groups, 0
	}
	for _, g := range groups {
		if _, ok := bad[g.SpecID]; ok {
			held += len(g.Tasks)
			continue
		}
		kept = append(kept, g)
	}
	return kept, held
}
