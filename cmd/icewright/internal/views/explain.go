package views

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ExplainRow is one effective policy value for `icewright explain`. The
// command maps config's explain lines to rows, so this view does not
// depend on how config models them.
type ExplainRow struct {
	Name    string // "snapshot_retention.max_age"
	Value   string // as HCL would write it: "\"2d\"", "3", "[\"a\"]"
	Default bool   // nobody set it
	// Unset, when not "", replaces the value: what leaving the attribute
	// unset means (no value spells it).
	Unset  string
	Block  string // `table "lake.analytics.clicks"`, `policy "events"`
	Origin string // "main.icewright.hcl:61:26"
}

// ExplainProperty is one table property the policy owns (docs/design.md §3.4).
type ExplainProperty struct {
	Key    string
	Value  string
	Block  string
	Origin string
}

// ExplainHeader says how the table got its policy.
type ExplainHeader struct {
	Address   string
	MatchedBy string // `table "..."` or `tables "..."`
	MatchedAt string // file:line:col of that block
	Policy    string // "" when the block sets everything inline
}

// Explain renders every effective value, HCL-like, with where it came
// from as a trailing comment, so the output reads like the configuration
// a reviewer would have to merge in their head.
func Explain(w io.Writer, h ExplainHeader, rows []ExplainRow, props []ExplainProperty, s *Styles) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", s.Bold("# "+h.Address))
	fmt.Fprintf(&b, "%s\n", s.Dim(fmt.Sprintf("# matched by %s (%s)", h.MatchedBy, h.MatchedAt)))
	if h.Policy != "" {
		fmt.Fprintf(&b, "%s\n", s.Dim(fmt.Sprintf("# policy %q", h.Policy)))
	}
	b.WriteString("\n")
	nameW, valW := 0, 0
	for _, r := range rows {
		nameW = max(nameW, len(r.Name))
		// A long list would push every comment far right; such values
		// just run past the column.
		if len(r.Value) <= 24 {
			valW = max(valW, len(r.Value))
		}
	}
	for _, r := range rows {
		if r.Unset != "" {
			// A comment line: nothing here may be pasted back as a value.
			b.WriteString(s.Dim(fmt.Sprintf("# %s %s (default)", r.Name, r.Unset)) + "\n")
			continue
		}
		from := "default"
		if !r.Default {
			from = r.Block
			if r.Origin != "" {
				from += ", " + r.Origin
			}
		}
		line := fmt.Sprintf("%-*s = %-*s  ", nameW, r.Name, valW, r.Value)
		if r.Default {
			b.WriteString(s.Dim(line+"# "+from) + "\n")
		} else {
			b.WriteString(line + s.Dim("# "+from) + "\n")
		}
	}
	if len(props) > 0 {
		b.WriteString("\n" + s.Dim("# table properties this policy sets on the table") + "\n")
		keyW, valW := 0, 0
		for _, p := range props {
			keyW = max(keyW, len(strconv.Quote(p.Key)))
			valW = max(valW, len(propValue(p)))
		}
		for _, p := range props {
			from := p.Block
			if p.Origin != "" {
				from += ", " + p.Origin
			}
			b.WriteString(fmt.Sprintf("%-*s = %-*s  ", keyW, strconv.Quote(p.Key), valW, propValue(p)) + s.Dim("# "+from) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func propValue(p ExplainProperty) string {
	if isSecretKey(p.Key) {
		return Masked
	}
	return strconv.Quote(p.Value)
}

// NotManaged says that no block manages an address, and why when a
// selector matched it but excluded it.
func NotManaged(w io.Writer, addr string, excludedBy []string, s *Styles) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is not managed by this configuration: ", addr)
	if len(excludedBy) == 0 {
		b.WriteString("no table or tables block matches it.\n")
	} else {
		fmt.Fprintf(&b, "%s.\n", strings.Join(excludedBy, "; "))
	}
	b.WriteString("icewright will neither change it nor report it.\n")
	_, err := io.WriteString(w, s.Bold(b.String()))
	return err
}
