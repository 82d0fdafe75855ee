package views

import (
	"bytes"
	"fmt"
	"io"

	"github.com/hashicorp/hcl/v2"
)

// Diagnostics prints configuration diagnostics with hcl's text writer:
// "Error: summary", the location, the source snippet with the subject
// underlined, and the detail. Every diagnostic is printed, errors and
// warnings alike, so a user fixes all of them in one pass.
//
// hcl's writer says "on main.iceops.hcl line 12"; docs/design.md §3.5 wants the
// column too, and file:line:col is what editors and CI annotations jump
// to, so the location line is rewritten to "on main.iceops.hcl:12:5".
func Diagnostics(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics, s *Styles) {
	for _, d := range diags {
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
