package views

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/icewright/icewright/diff"
)

// Demo tells the user what `icewright demo` built and what to run next.
// shownDir is the demo directory as the user should type it; self is how
// they ran icewright ("icewright", or "go run ./cmd/icewright").
func Demo(w io.Writer, info *diff.DemoLakehouse, shownDir, self string, s *Styles) error {
	rel := func(p string) string {
		if r, err := filepath.Rel(info.Dir, p); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.Join(shownDir, r)
		}
		return p
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n\n", s.OK("Built a demo lakehouse in"), shownDir)
	fmt.Fprintf(&b, "  catalog    %s (sqlite: %s)\n", info.Catalog, rel(info.CatalogDB))
	fmt.Fprintf(&b, "  warehouse  %s\n", rel(info.Warehouse))
	fmt.Fprintf(&b, "  config     %s\n\n", rel(info.ConfigFile))
	width := 0
	for _, t := range info.Tables {
		width = max(width, len(t.Address))
	}
	b.WriteString("Tables:\n")
	for _, t := range info.Tables {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, t.Address, t.Debt)
	}
	b.WriteString("\nNext, see what icewright would do, look at one table, then fix them all:\n")
	chdir := "-chdir=" + shellQuote(shownDir)
	for _, cmd := range []string{"plan", "inspect " + firstTable(info), "apply"} {
		fmt.Fprintf(&b, "  %s %s %s\n", self, chdir, cmd)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func firstTable(info *diff.DemoLakehouse) string {
	if len(info.Tables) == 0 {
		return info.Catalog + ".analytics.events"
	}
	return info.Tables[0].Address
}

// ShellQuote is shellQuote for the commands' "run this next" hints.
func ShellQuote(s string) string { return shellQuote(s) }

// shellQuote quotes a path for a POSIX shell only when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
