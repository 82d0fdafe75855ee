package views

import (
	"fmt"
	"io"
	"strings"

	"github.com/icewright/icewright/diff"
)

// DoctorJSON writes `doctor -json`.
func DoctorJSON(w io.Writer, d *diff.Doctor) error {
	return writeJSON(w, d, "doctor report")
}

// Doctor renders the report one finding a line: status, where (the
// catalog, or the table), what was checked, what was found and, after
// " -> ", what to do; then the count.
func Doctor(w io.Writer, d *diff.Doctor, s *Styles) error {
	var b strings.Builder
	for _, f := range d.Findings {
		status := s.OK("ok  ")
		switch f.Status {
		case diff.DoctorWarn:
			status = s.Warn("warn")
		case diff.DoctorFail:
			status = s.Refuse("FAIL")
		}
		where := f.Catalog
		if f.Engine != "" {
			where = fmt.Sprintf("engine %q", f.Engine)
		}
		if f.Table != "" {
			where = f.Table
		}
		line := fmt.Sprintf("%s %s %s: %s", status, where, f.Check, f.Message)
		if f.Fix != "" {
			line += " -> " + f.Fix
		}
		b.WriteString(line + "\n")
	}
	fmt.Fprintf(&b, "\n%s, %s, %s.\n", countOf(d.Failures, "failure", "failures"), countOf(d.Warnings, "warning", "warnings"), countOf(len(d.Findings), "check", "checks"))
	_, err := io.WriteString(w, b.String())
	return err
}
