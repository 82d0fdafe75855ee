package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// The language as the decoder reads it. The schemas Load passes to HCL are
// built from these tables, and docs/configuration.md is rendered from them
// (Reference), so what validate accepts and what the reference lists cannot
// drift apart. Policy attributes are in policyFields (fields.go).

// blockDoc is one kind of block.
type blockDoc struct {
	name   string
	labels []string
	doc    string
}

// attrDoc is one attribute of a block other than the policy attributes.
type attrDoc struct {
	name     string
	required bool
	typ      string
	def      string // "" when there is no default
	doc      string
}

var topBlocks = []blockDoc{
	{"icewright", nil, "Settings of icewright itself. At most one per configuration."},
	{"variable", []string{"name"}, "An input variable, used as `var.NAME`. Values come from the sources in [Variable values](#variable-values)."},
	{"locals", nil, "Named values computed once, used as `local.NAME`. Any attribute; a local may use variables, functions and other locals (in any order, across files; a cycle is an error)."},
	{"catalog", []string{"name"}, "An Iceberg catalog. Its name is the first level of table addresses (`NAME.namespace.table`)."},
	{"engine", []string{"name"}, "A compute engine that compaction may delegate partitions to (`compaction.engine`): `\"spark\"`, a Spark Connect endpoint (docs/engines.md). At most one per name."},
	{"policy", []string{"name"}, "A named, reusable policy body; `table` and `tables` blocks use it with `policy = policy.NAME`."},
	{"table", []string{"address"}, "The policy of one table, `catalog.namespace.table` (namespaces may have several levels). Wins over every `tables` selector."},
	{"tables", []string{"pattern"}, "The policy of every table matching a glob: `*` within one level, `**` as a whole level for any number of levels. Two selectors that can match the same table (after their excludes) are an error."},
}

var topSchema = schemaOf(topBlocks, nil)

// nestedBlockDocs are the blocks inside a policy body, in the order they
// are explained. A block no block in the chain declares means that
// maintenance does not run.
var nestedBlockDocs = []blockDoc{
	{"compaction", nil, "Rewrite data files toward `target_file_size` (`rewrite_data_files`)."},
	{"snapshot_retention", nil, "Expire old snapshots and refs, deleting the files only they reference (`expire_snapshots`)."},
	{"orphan_files", nil, "Remove files under the table location that no snapshot references (`remove_orphan_files`); see docs/orphans.md for what is listed and the safety rules."},
	{"manifests", nil, "Rewrite the current snapshot's manifests when there are too many (`rewrite_manifests`)."},
	{"dangling_deletes", nil, "Remove from the metadata the delete files that no live data file can apply to any more (`remove_dangling_deletes`): position deletes and deletion vectors naming only data files gone from the snapshot, equality deletes that no live data file of their partition is older than. No attributes: `dangling_deletes {}` turns it on."},
	{"partition_ageing", nil, "Rewrite old partitions of a time-partitioned table into a coarser spec (`age_partitions`): `partition_ageing { after = \"90d\"  from = \"day\"  to = \"month\" }` moves every day of each month that ended 90 days ago into one month partition. The coarser spec is the table's default spec with its `from` field replaced by the `to` transform of the same column; it is added in the rewrite's own commit and is not made the default spec (writers keep writing days) unless `default = true`. A table where that spec is ambiguous (no `from` field or two, another time field of the column, format v1) is a refusal in the plan."},
	{"pricing", nil, "The prices a plan turns its estimates into money with (docs/cost.md): the cost of the run, the saving per month and the payback time. Unlike the blocks above it runs nothing; without it a table on S3, Cloud Storage or Azure Blob Storage gets its storage's default prices, and one on local storage none (its plan shows quantities only)."},
}

var nestedBlocks = blockNames(nestedBlockDocs)

var settingsAttrs = []attrDoc{
	{"required_version", false, "string", "", "A version constraint such as `\">= 0.1, < 1.0\"`; any other icewright refuses the configuration."},
	{"parallelism", false, "number", "`4`", "Tables worked on at a time; `-parallelism` on the command line wins."},
	{"ignore_warnings", false, "list of strings", "", "Lint warning codes (`\"IW102\"`, ...) never reported, by validate, plan or apply; the codes are listed in docs/plan-format.md. An unknown code is an error."},
}

var variableAttrs = []attrDoc{
	{"type", false, "type", "`any`", "A type constraint (`string`, `number`, `bool`, `list(string)`, `map(string)`, `object({...})`, ...). Text from `-var` or the environment is literal for primitive types and an HCL expression for collections."},
	{"default", false, "any", "", "The value when no other source sets one; without it the variable is required."},
	{"description", false, "string", "", "What the variable is for."},
	{"sensitive", false, "bool", "`false`", "Keep the value out of output: any table property holding it is shown as `(sensitive)` and stored in a saved plan only as a digest."},
}

var variableSchema = schemaOf(nil, variableAttrs)

var catalogAttrs = []attrDoc{
	{"type", true, "string", "", "One of " + strings.Join(mdCodeQuoted(catalogTypes), ", ") + "."},
	{"uri", false, "string", "", "Where the catalog is: `sqlite:PATH` or a PostgreSQL URL for `sql` (a relative sqlite path is against the configuration directory), the server URL for `rest`, the metastore for `hive`."},
	{"warehouse", false, "string", "", "The warehouse location; a relative path is a local directory against the configuration directory."},
	{"properties", false, "map of strings", "", "iceberg-go catalog and IO properties (`s3.endpoint`, `credential`, ...), as its catalogs document them. Values named like secrets are never printed."},
}

var catalogSchema = schemaOf(nil, catalogAttrs)

// engineNames are the engines an engine block may declare (its label):
// config's half of each engine's descriptor, with engineAttrs; the other
// half (its remote's form, its constructor) is in providers/engine, whose
// test holds the two lists equal.
var engineNames = []string{"spark"}

// EngineNames are the labels an engine block may have.
func EngineNames() []string { return slices.Clone(engineNames) }

var engineAttrs = []attrDoc{
	{"remote", true, "string", "", "The Spark Connect endpoint, `sc://host:15002` (a `;token=...` parameter in it is a secret, never printed); usually `env(\"SPARK_REMOTE\")`."},
	{"catalog", false, "string", "the icewright catalog's label", "Spark's name for the catalog the tables are in, used to qualify every statement (`CALL <catalog>.system.rewrite_data_files(...)`)."},
}

var engineSchema = schemaOf(nil, engineAttrs)

// bodyAttrs are the attributes a policy body has besides policyFields; in
// lists the block kinds that accept each.
var bodyAttrs = []struct {
	attrDoc
	in []bodyKind
}{
	{attrDoc{"properties", false, "map of strings", "", "Table properties to set. A key is overridden one by one down the chain. Keys a policy attribute sets (such as `write.target-file-size-bytes`) get a warning: write the attribute."}, []bodyKind{bodyPolicy, bodyTable, bodyTables}},
	{attrDoc{"extends", false, "policy.NAME", "", "The policy this one builds on: every attribute it does not set comes from there (chains allowed, cycles are an error)."}, []bodyKind{bodyPolicy}},
	{attrDoc{"policy", false, "policy.NAME", "", "The policy this block's tables get; attributes written in the block itself win over it."}, []bodyKind{bodyTable, bodyTables}},
	{attrDoc{"exclude", false, "list of strings", "", "Address globs this selector does not manage."}, []bodyKind{bodyTables}},
}

var bodyKindNames = map[bodyKind]string{bodyPolicy: "policy", bodyTable: "table", bodyTables: "tables"}

func schemaOf(blocks []blockDoc, attrs []attrDoc) *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, b := range blocks {
		s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: b.name, LabelNames: b.labels})
	}
	for _, a := range attrs {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: a.name, Required: a.required})
	}
	return s
}

func blockNames(blocks []blockDoc) []string {
	out := make([]string, len(blocks))
	for i, b := range blocks {
		out[i] = b.name
	}
	return out
}

func mdCodeQuoted(items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = fmt.Sprintf("`%q`", s)
	}
	return out
}

// Table properties the structured attributes own (docs/design.md §3.4).
const (
	PropTargetFileSize = "write.target-file-size-bytes"
	PropMaxSnapshotAge = "history.expire.max-snapshot-age-ms"
	PropMinSnapshots   = "history.expire.min-snapshots-to-keep"
	PropMaxRefAge      = "history.expire.max-ref-age-ms"
)

// ownedProperties maps each owned property to the attribute that sets it.
var ownedProperties = map[string]string{
	PropTargetFileSize: "target_file_size",
	PropMaxSnapshotAge: "snapshot_retention.max_age",
	PropMinSnapshots:   "snapshot_retention.min_snapshots",
	PropMaxRefAge:      "snapshot_retention.max_ref_age",
}

func ownedProperty(key string) (string, bool) {
	a, ok := ownedProperties[key]
	return a, ok
}

func kindType(k valueKind) string {
	switch k {
	case kindSize:
		return "size"
	case kindDuration:
		return "duration"
	case kindInt:
		return "whole number"
	case kindFloat:
		return "number"
	case kindBool:
		return "bool"
	case kindString:
		return "string"
	case kindList:
		return "list of strings"
	case kindMap:
		return "map of strings"
	case kindSort:
		return "list of sort terms"
	}
	panic(fmt.Sprintf("config: valueKind %d has no name", k)) // programming error: a kind without a row here
}

// fieldDefault renders the default of a policy attribute from fillDefaults
// itself: filled at two target sizes, a default that follows the target is
// a share of it.
func fieldDefault(f fieldDesc) string {
	var a, b PolicyBody
	fillDefaults(&a)
	b.TargetFileSize = Setting[int64]{Value: 2 * DefaultTargetFileSize, Set: true}
	fillDefaults(&b)
	sa, sb := f.get(&a).(settingPtr), f.get(&b).(settingPtr)
	va := renderValue(f.kind, sa.value())
	if f.kind == kindSize && f.name != "target_file_size" && va != renderValue(f.kind, sb.value()) {
		v, target := sa.value().(int64), a.TargetFileSize.Value
		return fmt.Sprintf("%d%% of `target_file_size` (%s with its default)", (v*100+target/2)/target, FormatSize(v))
	}
	if f.block == "pricing" {
		// Prices default per table, from its storage (PricingPolicy.For).
		switch va {
		case `""`:
			return "from the location's scheme"
		case "0":
			return "the storage's ([docs/cost.md](cost.md))"
		}
	}
	switch va {
	case `""`, "[]", "{}", `"0s"`, "0", "false":
		if f.kind == kindDuration || f.kind == kindString || f.kind == kindList || f.kind == kindSort {
			return "unset"
		}
	}
	return "`" + va + "`"
}

// Reference renders docs/configuration.md.
func Reference() []byte {
	var b strings.Builder
	b.WriteString(`# Configuration reference

<!-- Generated from the tables the decoder reads (config/fields.go, config/reference.go)
     by "go generate ./config"; config's TestReference fails when this file is stale. -->

A configuration is every ` + "`*.icewright.hcl`" + ` file in one directory (not its subdirectories), read
as one. Sizes are ` + "`\"512MiB\"`" + `, ` + "`\"1GiB\"`, `\"128MB\"`" + ` or a whole number of bytes; durations are
` + "`\"36h\"`, `\"7d\"`, `\"2w\"`" + `. A table's effective policy is its ` + "`table`" + ` block, or else the one
` + "`tables`" + ` selector that matches it, merged attribute by attribute over its ` + "`policy`" + ` and that
policy's ` + "`extends`" + ` chain, then the defaults below. ` + "`icewright explain ADDR`" + ` shows the result
and the ` + "`file:line`" + ` of every value.

## Blocks

| block | what it is |
| --- | --- |
`)
	for _, blk := range topBlocks {
		anchor := blk.name
		if anchor == "policy" || anchor == "table" || anchor == "tables" {
			anchor = "policy-table-tables"
		}
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s |\n", blockHeader(blk), anchor, blk.doc)
	}

	writeAttrs := func(title string, blk *blockDoc, attrs []attrDoc) {
		fmt.Fprintf(&b, "\n## %s\n\n", title)
		if blk != nil {
			b.WriteString(blk.doc + "\n\n")
		}
		b.WriteString("| attribute | type | default | what it does |\n| --- | --- | --- | --- |\n")
		for _, a := range attrs {
			def := a.def
			if a.required {
				def = "required"
			} else if def == "" {
				def = "unset"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", a.name, a.typ, def, a.doc)
		}
	}
	writeAttrs("icewright", &topBlocks[0], settingsAttrs)
	writeAttrs("variable", &topBlocks[1], variableAttrs)
	fmt.Fprintf(&b, "\n## locals\n\n%s\n", topBlocks[2].doc)
	writeAttrs("catalog", &topBlocks[3], catalogAttrs)
	writeAttrs("engine", &topBlocks[4], engineAttrs)

	b.WriteString("\n## policy, table, tables\n\n")
	for _, blk := range topBlocks[5:] {
		fmt.Fprintf(&b, "- `%s`: %s\n", blockHeader(blk), blk.doc)
	}
	b.WriteString("\nThe three share one body: the attributes and nested blocks below. Besides them:\n\n")
	b.WriteString("| attribute | in | type | what it does |\n| --- | --- | --- | --- |\n")
	for _, a := range bodyAttrs {
		var in []string
		for _, k := range a.in {
			in = append(in, "`"+bodyKindNames[k]+"`")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", a.name, strings.Join(in, ", "), a.typ, a.doc)
	}

	referencePolicyFields(&b)
	referenceFunctions(&b)
	fmt.Fprintf(&b, "\n## Variable values\n\nA variable takes its value from these sources, a later one winning:\n\n"+
		"1. its `default`;\n"+
		"2. the environment variable `%sNAME`;\n"+
		"3. each `-var-file=FILE` in order (an HCL file of `NAME = value` lines, relative to the configuration directory);\n"+
		"4. each `-var=NAME=VALUE` in order.\n\n"+
		"Expressions read it as `var.NAME`; `local.NAME` are the locals and `path.root` is the configuration directory.\n",
		EnvVarPrefix)
	return []byte(b.String())
}

// referencePolicyFields writes the policy attributes, top-level and by
// nested block, with their defaults and Iceberg properties.
func referencePolicyFields(b *strings.Builder) {
	props := map[string]string{}
	for p, attr := range ownedProperties {
		props[attr] = p
	}
	writeFields := func(block string) {
		b.WriteString("| attribute | type | default | Iceberg property | what it does |\n| --- | --- | --- | --- | --- |\n")
		for _, f := range policyFields() {
			if f.block != block {
				continue
			}
			prop := "–"
			if p, ok := props[f.path()]; ok {
				prop = "`" + p + "`"
			}
			fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s |\n", f.name, kindType(f.kind), fieldDefault(f), prop, f.doc)
		}
	}
	b.WriteString("\n### Top-level attributes\n\n")
	writeFields("")
	for _, blk := range nestedBlockDocs {
		fmt.Fprintf(b, "\n### %s\n\n%s\n", blk.name, blk.doc)
		if slices.ContainsFunc(policyFields(), func(f fieldDesc) bool { return f.block == blk.name }) {
			b.WriteString("\n")
			writeFields(blk.name)
		}
	}
	b.WriteString("\nAn Iceberg property is set on the table only when some block in the chain sets its attribute:\n" +
		"a default is not a decision, so icewright never takes over a property nobody named.\n")

}

// referenceFunctions writes the functions expressions may call, and what
// env and file do.
func referenceFunctions(b *strings.Builder) {
	b.WriteString("\n## Functions\n\nExpressions may call these (the go-cty standard library under Terraform's names, plus `env` and `file`):\n\n")
	b.WriteString("| function | what it does |\n| --- | --- |\n")
	fns := functions("", nil, nil)
	names := make([]string, 0, len(fns))
	for n := range fns {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fn := fns[n]
		var params []string
		for _, p := range fn.Params() {
			params = append(params, p.Name)
		}
		if vp := fn.VarParam(); vp != nil {
			params = append(params, vp.Name+"...")
		}
		fmt.Fprintf(b, "| `%s(%s)` | %s |\n", n, strings.Join(params, ", "), strings.ReplaceAll(fn.Description(), "|", `\|`))
	}
	fmt.Fprintf(b, "\n`env(NAME)` of an unset variable is an error when `plan`, `apply`, `explain` and every other command\n"+
		"that reaches a catalog load the configuration, naming the variable (a missing password would otherwise\n"+
		"surface as the catalog's authentication error). `validate` needs no secrets, as `terraform validate`\n"+
		"checks a configuration regardless of variables: there an unset variable is an unknown value,\n"+
		"everything that does not depend on it is checked, and the output names the variables it could not\n"+
		"use (`Unset environment variables (...): ICEBERG_REST_CREDENTIAL.`), so a pull request's check job\n"+
		"runs without secrets (`examples/ci`). `fmt` never evaluates anything.\n"+
		"`env(NAME, DEFAULT)` gives the default, and `env(NAME, \"\")` allows the variable unset. A variable set\n"+
		"to the empty string is set. `env()` values are not part of a saved plan's digest, so credentials rotate\n"+
		"without making plans stale. `file(PATH)` reads at most %d MiB of a regular UTF-8 file, relative to the\n"+
		"configuration directory (`path.root`).\n", maxFileFunc>>20)

}

func blockHeader(blk blockDoc) string {
	h := blk.name
	for _, l := range blk.labels {
		h += fmt.Sprintf(" %q", strings.ToUpper(l))
	}
	return h + " { }"
}
