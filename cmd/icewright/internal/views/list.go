package views

import (
	"fmt"
	"io"
	"strings"
)

// TableList is `icewright list`: every table of every configured catalog and
// the block that manages it (docs/cli.md documents the JSON fields).
type TableList struct {
	Tables []ListedTable `json:"tables"`
	// Errors are the catalogs that could not be listed.
	Errors []ListError `json:"errors"`
}

type ListedTable struct {
	Address string `json:"address"`
	Catalog string `json:"catalog"`
	Managed bool   `json:"managed"`
	// Policy is the policy the matching block names ("" for a block
	// without one, or an unmanaged table).
	Policy string `json:"policy,omitempty"`
	// MatchedBy is the block that chose it: `table "a.b.c"`,
	// `tables "a.b.*"`; Origin is its file:line:col.
	MatchedBy string `json:"matched_by,omitempty"`
	Origin    string `json:"origin,omitempty"`
	// ExcludedBy says, for an unmanaged table, which selectors match it
	// but exclude it.
	ExcludedBy []string `json:"excluded_by,omitempty"`
}

type ListError struct {
	Catalog string `json:"catalog"`
	Error   string `json:"error"`
}

func ListJSON(w io.Writer, l *TableList) error { return writeJSON(w, l, "table list") }

// List prints one line a table: address, policy, the block that chose it
// and where; or "unmanaged".
func List(w io.Writer, l *TableList, s *Styles) error {
	width, pwidth := 0, 0
	policies := make([]string, len(l.Tables))
	for i, t := range l.Tables {
		width = max(width, len(t.Address))
		if t.Managed {
			policies[i] = "(no policy)"
			if t.Policy != "" {
				policies[i] = fmt.Sprintf("policy %q", t.Policy)
			}
			pwidth = max(pwidth, len(policies[i]))
		}
	}
	var b strings.Builder
	managed := 0
	for i, t := range l.Tables {
		if !t.Managed {
			why := ""
			if len(t.ExcludedBy) > 0 {
				why = " (" + strings.Join(t.ExcludedBy, "; ") + ")"
			}
			fmt.Fprintf(&b, "%-*s  %s\n", width, t.Address, s.Dim("unmanaged"+why))
			continue
		}
		managed++
		fmt.Fprintf(&b, "%-*s  %-*s  %s\n", width, t.Address, pwidth, policies[i], s.Dim(fmt.Sprintf("by %s at %s", t.MatchedBy, t.Origin)))
	}
	if len(l.Tables) > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s, %d managed.\n", countOf(len(l.Tables), "table", "tables"), managed)
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("write table list: %w", err)
	}
	return nil
}
