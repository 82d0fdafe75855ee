package views

import (
	"encoding/json"
	"fmt"
	"io"
)

// writeJSON writes v as one indented JSON document and a newline: the
// shape of every -json output. what names the document in errors.
func writeJSON(w io.Writer, v any, what string) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", what, err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	return nil
}
