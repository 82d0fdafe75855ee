package views

import (
	"fmt"
	"io"
)

// Error prints a command-level error on w (stderr), Terraform-style.
func Error(w io.Writer, err error, s *Styles) {
	fmt.Fprintf(w, "%s %s\n", s.Refuse("Error:"), err)
}
