package config

import (
	"sort"
	"strconv"

	"github.com/hashicorp/hcl/v2"
)

// ExplainLine is one effective value of a table's policy and where it came
// from, for `icewright explain`.
type ExplainLine struct {
	Name    string    // "snapshot_retention.max_age", `properties["k"]`
	Value   string    // as HCL would spell it: `"2d"`, `5`, `["a", "b"]`
	Default bool      // no block set it
	Block   string    // `table "lake.a.b"`, `policy "events"`; "" for defaults
	Origin  hcl.Range // the attribute that set it; zero for defaults
	// Unset, for an attribute whose absence is not a value (max_ref_age),
	// says what unset means; Value is then "" (no value may be pasted).
	Unset string
}

// unsetMeaning is what leaving an attribute unset means when no value
// written in its place would mean the same: explain used to print
// max_ref_age = "0s" for unset, and "0s" removes every ref.
func unsetMeaning(path string) string {
	if path == "snapshot_retention.max_ref_age" {
		return "unset: tags and branches live forever"
	}
	return ""
}

// Explain lists every effective value: the top-level attributes, each
// property, and the attributes of each nested block the chain declares
// (an undeclared block means icewright does not run that maintenance, so its
// defaults would only mislead).
func (e *Effective) Explain() []ExplainLine {
	var out []ExplainLine
	add := func(f fieldDesc) {
		sp := f.get(&e.PolicyBody).(settingPtr)
		set, origin, block := sp.meta()
		line := ExplainLine{Name: f.path(), Value: renderValue(f.kind, sp.value()), Default: !set}
		if n, ok := sp.value().(int64); ok && f.kind == kindSize && n >= 1024 && FormatSizeExact(n) == strconv.FormatInt(n, 10) {
			// A size no unit divides (max_file_size's default, 180% of
			// the target) reads in the unit of its neighbours as well.
			line.Value += " (" + FormatSize(n) + ")"
		}
		if !set {
			if u := unsetMeaning(f.path()); u != "" {
				line.Value, line.Unset = "", u
			}
		}
		if set {
			line.Block, line.Origin = block, origin
		}
		out = append(out, line)
	}
	fields := policyFields()
	for _, f := range fields {
		if f.block == "" {
			add(f)
		}
	}
	keys := make([]string, 0, len(e.Properties))
	for k := range e.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := e.Properties[k]
		value := strconv.Quote(s.Value)
		if s.Sensitive || IsSecretKey(k) {
			value = Masked
		}
		out = append(out, ExplainLine{
			Name:   "properties[" + strconv.Quote(k) + "]",
			Value:  value,
			Block:  s.Block,
			Origin: s.Origin,
		})
	}
	for _, b := range nestedBlocks {
		declared, _ := blockState(&e.PolicyBody, b)
		if !*declared {
			continue
		}
		for _, f := range fields {
			if f.block == b {
				add(f)
			}
		}
	}
	return out
}
