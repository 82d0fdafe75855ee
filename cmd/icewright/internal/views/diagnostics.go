package views

import (
	"bytes"
	"fmt"
	"io"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/config"
)

// Diagnostics prints configuration diagnostics with hcl's text writer:
// "Error: summary", the location, the source snippet with the subject
// underlined, and the detail. Every diagnostic is printed, errors and
// warnings alike, so a user fixes all of them in one pass.
//
// hcl's writer says "on main.icewright.hcl line 12"; docs/design.md §3.5 wants the
// column too, and file:line:col is what editors and CI annotations jump
// to, so the location line is rewritten to "on main.icewright.hcl:12:5".
func Diagnostics(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics, s *Styles) {
	DiagnosticsWith(w, files, diags, s, false)
}

// DiagnosticsWith is Diagnostics; with compact (-compact-warnings) a
// warning is one line, its code, summary and location, as Terraform's
// compact warnings; errors are always printed in full.
func DiagnosticsWith(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics, s *Styles, compact bool) {
	for _, d := range diags {
		if code := config.LintCode(d); code != "" {
			if compact {
				line := fmt.Sprintf("%s %s: %s", s.Warn("Warning:"), code, d.Summary)
				if d.Subject != nil {
					line += s.Dim(fmt.Sprintf(" (%s:%d:%d)", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column))
				}
				fmt.Fprintln(w, line)
				continue
			}
			// The code leads the summary as in Atlas's lint output, and
			// the detail says how to silence it.
			cp := *d
			cp.Summary = code + ": " + d.Summary
			cp.Detail = fmt.Sprintf("%s\n\nTo silence it: icewright { ignore_warnings = [%q] }.", d.Detail, code)
			d = &cp
		}
		var buf bytes.Buffer
		// Width 0: no wrapping. Wrapped detail text would make golden
		// files depend on the terminal and breaks copy-paste of paths.
		dw := hcl.NewDiagnosticTextWriter(&buf, files, 0, s.Enabled())
		if err := dw.WriteDiagnostic(d); err != nil {
			fmt.Fprintf(w, "%s: %s\n", d.Summary, d.Detail)
			continue
		}
		out := buf.Bytes()
		if d.Subject != nil {
			r := d.Subject
			old := fmt.Sprintf("  on %s line %d", r.Filename, r.Start.Line)
			repl := fmt.Sprintf("  on %s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
			out = bytes.Replace(out, []byte(old), []byte(repl), 1)
		}
		_, _ = w.Write(out) // errors writing to stderr have nowhere to go
	}
}

// ValidateJSON is `validate -json`, in the shape of `terraform validate
// -json` so that tools reading that (editors, CI annotators) read this:
// valid, the counts, and each diagnostic with its range (file, start and
// end as line, column and byte offset). A lint warning has its code.
type ValidateJSON struct {
	FormatVersion string           `json:"format_version"`
	Valid         bool             `json:"valid"`
	ErrorCount    int              `json:"error_count"`
	WarningCount  int              `json:"warning_count"`
	Diagnostics   []DiagnosticJSON `json:"diagnostics"`
}

// DiagnosticJSON is one diagnostic of ValidateJSON.
type DiagnosticJSON struct {
	Severity string     `json:"severity"` // "error" | "warning"
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail"`
	Code     string     `json:"code,omitempty"` // lint code, warnings only
	Range    *RangeJSON `json:"range,omitempty"`
}

// RangeJSON is an hcl.Range: start inclusive, end exclusive; lines and
// columns from 1, bytes from 0.
type RangeJSON struct {
	Filename string  `json:"filename"`
	Start    PosJSON `json:"start"`
	End      PosJSON `json:"end"`
}

type PosJSON struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// ValidateDocument builds the validate -json document.
func ValidateDocument(diags hcl.Diagnostics) ValidateJSON {
	doc := ValidateJSON{FormatVersion: "1.0", Diagnostics: []DiagnosticJSON{}}
	for _, d := range diags {
		dj := DiagnosticJSON{Severity: "error", Summary: d.Summary, Detail: d.Detail, Code: config.LintCode(d)}
		if d.Severity == hcl.DiagWarning {
			dj.Severity = "warning"
			doc.WarningCount++
		} else {
			doc.ErrorCount++
		}
		if r := d.Subject; r != nil {
			dj.Range = &RangeJSON{
				Filename: r.Filename,
				Start:    PosJSON{r.Start.Line, r.Start.Column, r.Start.Byte},
				End:      PosJSON{r.End.Line, r.End.Column, r.End.Byte},
			}
		}
		doc.Diagnostics = append(doc.Diagnostics, dj)
	}
	doc.Valid = doc.ErrorCount == 0
	return doc
}

// WriteValidateJSON writes the validate -json document.
func WriteValidateJSON(w io.Writer, diags hcl.Diagnostics) error {
	return writeJSON(w, ValidateDocument(diags), "validate document")
}
