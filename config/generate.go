package config

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// ImportedTable is what `icewright import` read of one existing table: its
// properties and default sort order, in the language's vocabulary.
type ImportedTable struct {
	Address    string
	Properties map[string]string
	SortOrder  []SortField
}

// GenerateOptions steer the grouping of Generate.
type GenerateOptions struct {
	// Selectable reports whether a `tables "NS.*"` selector may be written
	// for the namespace NS ("catalog.ns"): only when every table it would
	// match is one being imported (a table left out by -target, or one the
	// configuration already manages, would otherwise be taken over) and no
	// selector of the configuration could overlap it.
	Selectable func(namespace string) bool
	// Taken are names no generated policy may have (the configuration's).
	Taken map[string]bool
	// Secrets are the configuration's secret values: a property holding
	// one is not written.
	Secrets Secrets
}

// Generate writes a configuration that keeps the tables exactly as they are
// (`icewright import`, docs/design.md §3.7): one policy per distinct set of
// settings, a `tables` selector for a namespace where the tables agree and
// a `table` block for each one that does not. A policy declares only what
// the table already has (its target file size, sort order and other
// properties), which plan finds equal, and no maintenance block: a
// compaction, snapshot_retention, orphan_files or manifests block would
// plan work, which is a decision for the user, not a description. The
// table's own retention properties are written as a commented
// snapshot_retention block to uncomment. A secret-named property, or one
// holding a secret of the configuration, is never written: only its key, in
// a comment; the table keeps it because icewright owns only the keys a policy
// names (§3.4). The result is in canonical format (`icewright fmt` leaves it
// unchanged).
func Generate(tables []ImportedTable, opts GenerateOptions) []byte {
	entries := make([]importEntry, 0, len(tables))
	for _, t := range tables {
		entries = append(entries, importEntry{t, importedPolicy(t, opts.Secrets)})
	}
	slices.SortFunc(entries, func(a, b importEntry) int { return strings.Compare(a.t.Address, b.t.Address) })
	spaces := importNamespaces(entries, opts)

	// One policy per distinct settings, named after its first user: the
	// namespace of a selector, else the table.
	pn := &policyNamer{names: map[string]string{}, taken: map[string]bool{}}
	for k := range opts.Taken {
		pn.taken[k] = true
	}
	blocks := importBlocks(spaces, pn)

	f := hclwrite.NewEmptyFile()
	root := f.Body()
	root.AppendUnstructuredTokens(comment(
		`Written by "icewright import": policies that keep these tables as they are,`,
		`so "icewright plan" shows no change. No compaction, snapshot_retention,`,
		`orphan_files or manifests block is declared: add one to a policy to`,
		`have icewright maintain its tables.`))
	for _, p := range pn.order {
		root.AppendNewline()
		b := root.AppendNewBlock("policy", []string{pn.names[p.key()]}).Body()
		p.write(b)
	}
	for _, bl := range blocks {
		root.AppendNewline()
		b := root.AppendNewBlock(bl.kind, []string{bl.label}).Body()
		b.SetAttributeTraversal("policy", hcl.Traversal{hcl.TraverseRoot{Name: "policy"}, hcl.TraverseAttr{Name: bl.policy}})
	}
	return hclwrite.Format(f.Bytes())
}

// importEntry is one imported table and the policy that keeps it as it is.
type importEntry struct {
	t    ImportedTable
	body *policyText
}

// importNamespace is the imported tables of one namespace, and the
// settings its selector carries (when it has one).
type importNamespace struct {
	name     string
	entries  []importEntry
	selector string // the key the selector carries
	hasSel   bool
}

// importNamespaces groups the entries by namespace, in order. Per
// namespace, the settings most of its tables share (ties go to the first
// table's) become the selector's policy, when at least two share them and
// the namespace can be selected; every other table is an outlier with a
// table block, which beats the selector (§3.3).
func importNamespaces(entries []importEntry, opts GenerateOptions) []*importNamespace {
	var spaces []*importNamespace
	byName := map[string]*importNamespace{}
	for _, e := range entries {
		ns, _ := SplitNamespace(e.t.Address)
		n := byName[ns]
		if n == nil {
			n = &importNamespace{name: ns}
			byName[ns] = n
			spaces = append(spaces, n)
		}
		n.entries = append(n.entries, e)
	}
	for _, n := range spaces {
		if len(n.entries) < 2 || opts.Selectable == nil || !opts.Selectable(n.name) {
			continue
		}
		counts := map[string]int{}
		best := ""
		for _, e := range n.entries {
			k := e.body.key()
			counts[k]++
			if counts[k] > counts[best] {
				best = k
			}
		}
		if counts[best] >= 2 {
			n.selector, n.hasSel = best, true
		}
	}
	return spaces
}

// policyNamer names one policy per distinct settings, after its first
// user, never a name taken; order is the policies in the order named.
type policyNamer struct {
	names map[string]string // key → policy name
	taken map[string]bool
	order []*policyText
}

func (pn *policyNamer) name(p *policyText, from string) string {
	k := p.key()
	if n, ok := pn.names[k]; ok {
		return n
	}
	n := uniqueName(identifier(from), pn.taken)
	pn.taken[n] = true
	pn.names[k] = n
	pn.order = append(pn.order, p)
	return n
}

// importBlock is a tables or table block naming its policy.
type importBlock struct {
	kind, label, policy string
}

// importBlocks are the selectors and table blocks, namespace by
// namespace, each selector before its outliers.
func importBlocks(spaces []*importNamespace, pn *policyNamer) []importBlock {
	// Selectors name their policies first: a namespace names a shared
	// policy better than the table that happens to sort first.
	selectors := map[string]importBlock{}
	for _, n := range spaces {
		for _, e := range n.entries {
			if n.hasSel && e.body.key() == n.selector {
				lvl := strings.Split(n.name, ".")
				selectors[n.name] = importBlock{"tables", n.name + ".*", pn.name(e.body, lvl[len(lvl)-1])}
				break
			}
		}
	}
	var blocks []importBlock
	for _, n := range spaces {
		if sel, ok := selectors[n.name]; ok {
			blocks = append(blocks, sel)
		}
		for _, e := range n.entries {
			if n.hasSel && e.body.key() == n.selector {
				continue
			}
			_, tbl := SplitNamespace(e.t.Address)
			blocks = append(blocks, importBlock{"table", e.t.Address, pn.name(e.body, tbl)})
		}
	}
	return blocks
}

// policyText is the body of one generated policy.
type policyText struct {
	targetFileSize int64 // 0 when the table has none
	sortOrder      []string
	properties     map[string]string
	// notes are comment lines: retention to uncomment, keys not written.
	retention  []string
	skipped    []string
	unsortable string // the first sort term sort_order cannot write
}

var ownedRetention = []struct {
	prop, attr string
	duration   bool
}{
	{PropMaxSnapshotAge, "max_age", true},
	{PropMinSnapshots, "min_snapshots", false},
	{PropMaxRefAge, "max_ref_age", true},
}

func importedPolicy(t ImportedTable, secrets Secrets) *policyText {
	p := &policyText{properties: map[string]string{}}
	// A term the language cannot spell (a column named "event-ts", a
	// transform it has no word for) would not load, or would load as
	// another order that plan then installs: the whole order stays out,
	// and the table keeps it (a policy without sort_order leaves it).
	for _, f := range t.SortOrder {
		text := f.String()
		if back, err := ParseSortField(text); err != nil || back.String() != text {
			p.sortOrder = nil
			p.unsortable = text
			break
		}
		p.sortOrder = append(p.sortOrder, text)
	}
	for k, v := range t.Properties {
		if IsSecretKey(k) || secrets.Contains(v) {
			p.skipped = append(p.skipped, k)
			continue
		}
		if k == PropTargetFileSize {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
				p.targetFileSize = n
				continue
			}
		}
		if _, owned := ownedProperty(k); owned {
			continue // retention, below; an unparsable size stays as the table has it
		}
		p.properties[k] = v
	}
	slices.Sort(p.skipped)
	for _, r := range ownedRetention {
		v, ok := t.Properties[r.prop]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		val := strconv.FormatInt(n, 10)
		if r.duration {
			val = strconv.Quote(FormatDuration(time.Duration(n) * time.Millisecond))
		}
		p.retention = append(p.retention, fmt.Sprintf("  %s = %s", r.attr, val))
	}
	return p
}

// key identifies the settings: two tables with the same key share a policy.
func (p *policyText) key() string {
	f := hclwrite.NewEmptyFile()
	p.write(f.Body())
	return string(f.Bytes())
}

func (p *policyText) write(b *hclwrite.Body) {
	if p.targetFileSize > 0 {
		b.SetAttributeValue("target_file_size", cty.StringVal(FormatSizeExact(p.targetFileSize)))
	}
	if len(p.sortOrder) > 0 {
		vals := make([]cty.Value, len(p.sortOrder))
		for i, s := range p.sortOrder {
			vals[i] = cty.StringVal(s)
		}
		b.SetAttributeValue("sort_order", cty.ListVal(vals))
	}
	if len(p.properties) > 0 {
		b.SetAttributeRaw("properties", mapTokens(p.properties))
	}
	if len(p.retention) > 0 {
		lines := []string{
			"The table's own retention (history.expire.*). Uncomment to have icewright",
			"expire snapshots past it: plan then shows what that removes.",
			"snapshot_retention {",
		}
		lines = append(lines, p.retention...)
		b.AppendUnstructuredTokens(comment(append(lines, "}")...))
	}
	if p.targetFileSize == 0 && len(p.sortOrder) == 0 && len(p.properties) == 0 && len(p.retention) == 0 && p.unsortable == "" {
		b.AppendUnstructuredTokens(comment("The tables set nothing a policy writes: Iceberg's defaults."))
	}
	if p.unsortable != "" {
		b.AppendUnstructuredTokens(comment(fmt.Sprintf("The table's sort order is not written: sort_order cannot express %q; the table keeps it.", p.unsortable)))
	}
	for _, k := range p.skipped {
		b.AppendUnstructuredTokens(comment(fmt.Sprintf("property %q is secret and not written; the table keeps it.", k)))
	}
}

// mapTokens renders a map of strings one key a line, every key quoted (a
// bare key reads like a reference), in key order.
func mapTokens(m map[string]string) hclwrite.Tokens {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	nl := &hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")}
	toks := hclwrite.Tokens{{Type: hclsyntax.TokenOBrace, Bytes: []byte("{")}, nl}
	for _, k := range keys {
		toks = append(toks, hclwrite.TokensForValue(cty.StringVal(k))...)
		toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenEqual, Bytes: []byte("=")})
		toks = append(toks, hclwrite.TokensForValue(cty.StringVal(m[k]))...)
		toks = append(toks, nl)
	}
	return append(toks, &hclwrite.Token{Type: hclsyntax.TokenCBrace, Bytes: []byte("}")})
}

func comment(lines ...string) hclwrite.Tokens {
	var buf bytes.Buffer
	for _, l := range lines {
		buf.WriteString(strings.TrimRight("# "+l, " ") + "\n")
	}
	return hclwrite.Tokens{{Type: hclsyntax.TokenComment, Bytes: buf.Bytes()}}
}

var notIdent = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// identifier makes a policy name of a namespace or table name.
func identifier(s string) string {
	s = notIdent.ReplaceAllString(s, "_")
	if s == "" || !(s[0] >= 'A' && s[0] <= 'Z' || s[0] >= 'a' && s[0] <= 'z' || s[0] == '_') {
		s = "t_" + s
	}
	return s
}

func uniqueName(base string, taken map[string]bool) string {
	if !taken[base] {
		return base
	}
	for i := 2; ; i++ {
		if n := fmt.Sprintf("%s_%d", base, i); !taken[n] {
			return n
		}
	}
}
