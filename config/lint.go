package config

import (
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
)

// Lint is one kind of warning with its stable code (as Atlas's analyzers
// number theirs): `icewright { ignore_warnings = [...] }` names codes, and a
// pipeline can match on them in plan -json. Codes never change meaning and
// are never reused; a warning retired keeps its row out of this list.
type Lint struct {
	Code string // "IW101"
	Name string // what the warning is about, for docs and JSON readers
	Doc  string // one line for docs/plan-format.md
}

// Lint codes. The IW1xx series is configuration and table lint; every
// warning icewright prints about a configuration or a table has one.
const (
	LintTargetSize       = "IW101"
	LintTrinoRetention   = "IW102"
	LintDecimalSize      = "IW103"
	LintSortWithoutOrder = "IW104"
	LintGCDisabled       = "IW105"
	LintWhereUnpartition = "IW106"
	LintCommitGap        = "IW107"
	LintQuarantineStuck  = "IW108"
	LintOwnedProperty    = "IW109"
	LintSelectorEmpty    = "IW110"
	LintUndeclaredVar    = "IW111"
	LintCatalogEmpty     = "IW112"
	LintSelectorNoMatch  = "IW113"
	LintTargetNoMatch    = "IW114"
	LintEngineUnused     = "IW115"
	LintCatalogNameShare = "IW116"
	LintPricingPartial   = "IW117"
)

// Lints is every lint warning, by code; the one list docs, validation of
// ignore_warnings and the renderers read.
func Lints() []Lint {
	return []Lint{
		{LintTargetSize, "target_size_range", "`target_file_size` outside 64MiB–2GiB."},
		{LintTrinoRetention, "max_age_below_trino", "`snapshot_retention.max_age` below Trino's 7-day `expire_snapshots.min-retention`."},
		{LintDecimalSize, "decimal_size_unit", "A size written with a decimal unit (`MB`, `GB`: powers of 1000) where `MiB`, `GiB` were probably meant."},
		{LintSortWithoutOrder, "sort_without_order", "`compaction.strategy = \"sort\"` without a sort order (in the policy, or on the table either)."},
		{LintGCDisabled, "gc_disabled", "`gc.enabled = false` (in the policy or on the table) with an expiry or orphan policy: nothing will be deleted."},
		{LintWhereUnpartition, "where_unpartitioned", "`compaction.where` on an unpartitioned table restricts nothing."},
		{LintCommitGap, "orphan_age_below_commit_gap", "`orphan_files.older_than` shorter than the longest gap between a table's commits (gaps left by expiry do not count)."},
		{LintQuarantineStuck, "quarantine_run_stuck", "A quarantine run no apply will ever purge."},
		{LintOwnedProperty, "property_set_by_attribute", "A property in `properties` that a policy attribute owns."},
		{LintSelectorEmpty, "selector_excludes_all", "A `tables` selector whose excludes remove every table it matches."},
		{LintUndeclaredVar, "undeclared_variable_value", "A variables file assigns a variable that is not declared."},
		{LintCatalogEmpty, "catalog_empty", "A catalog lists no table at all (for a SQL catalog: its label is the `catalog_name` of the rows icewright reads; the warning names the ones present)."},
		{LintSelectorNoMatch, "selector_no_match", "A `tables` selector matches no table of its catalog (with a did-you-mean from the names the catalog has)."},
		{LintTargetNoMatch, "target_no_match", "A `-target` matches no managed table (with a did-you-mean)."},
		{LintEngineUnused, "engine_unused", "An `engine` block that no policy, `table` or `tables` block names in `compaction.engine`."},
		{LintCatalogNameShare, "catalog_name_shared", "A SQL catalog's database also holds tables under another `catalog_name` that no catalog block reads: they count as other tables for the orphan sweep and expiry (plan-level, and in `doctor`)."},
		{LintPricingPartial, "pricing_incomplete", "A `pricing` block that leaves a price unset on a table whose storage has no default prices (local storage, `storage = \"none\"`): its plan shows quantities only."},
	}
}

// LookupLint finds a lint by code.
func LookupLint(code string) (Lint, bool) {
	for _, l := range Lints() {
		if l.Code == code {
			return l, true
		}
	}
	return Lint{}, false
}

// lintExtra is the hcl.Diagnostic.Extra of a lint warning: its code.
type lintExtra struct{ code string }

// LintCode is the code of a lint diagnostic, "" for one without (errors).
func LintCode(d *hcl.Diagnostic) string {
	if e, ok := d.Extra.(lintExtra); ok {
		return e.code
	}
	return ""
}

// Ignores reports whether the configuration silences the warning code
// (icewright { ignore_warnings = [...] }).
func (c *Config) Ignores(code string) bool {
	return c != nil && code != "" && slices.Contains(c.Settings.IgnoreWarnings, code)
}

// lintWarning builds a coded warning diagnostic.
func lintWarning(code string, subject *hcl.Range, summary, detail string) *hcl.Diagnostic {
	if _, ok := LookupLint(code); !ok {
		panic("config: unknown lint code " + code) // programming error: add it to Lints
	}
	return &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: detail, Subject: subject, Extra: lintExtra{code}}
}

// dropIgnored removes the warnings ignore_warnings names, after checking
// that each code it names exists (a typo would silence nothing).
func (l *loader) dropIgnored() {
	codes := make([]string, 0, len(Lints()))
	for _, lt := range Lints() {
		codes = append(codes, lt.Code)
	}
	for i, c := range l.cfg.Settings.IgnoreWarnings {
		if slices.Contains(codes, c) {
			continue
		}
		detail := fmt.Sprintf("%q is not a warning code; codes are listed in docs/plan-format.md.", c)
		if sug := nameSuggestion(c, codes); sug != "" {
			detail += fmt.Sprintf(" Did you mean %q?", sug)
		}
		rng := l.cfg.Settings.DeclRange
		if i < len(l.ignoreRanges) {
			rng = l.ignoreRanges[i]
		}
		l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown warning code", Detail: detail, Subject: rng.Ptr()})
	}
	kept := l.diags[:0]
	for _, d := range l.diags {
		if d.Severity == hcl.DiagWarning && l.cfg.Ignores(LintCode(d)) {
			continue
		}
		kept = append(kept, d)
	}
	l.diags = kept
}
