package views

import (
	"bytes"
	"io"
	"sync"

	"github.com/icewright/icewright/config"
)

// isSecretKey is the one masking rule of docs/design.md §3.2, owned by config.
func isSecretKey(key string) bool { return config.IsSecretKey(key) }

// MaskingWriter passes text on with every secret of the configuration
// replaced by config.Masked (config.Secrets.Mask). cmd puts it in front of
// stdout and stderr once the configuration is loaded, so that nothing
// printed (an error quoting a DSN, hcl's "with var.pw as ...", a log line)
// carries a secret out, whatever produced it.
//
// It holds text back until the end of a line ('\n' or '\r'), so a secret
// written in two pieces is still seen whole; Flush writes what is held
// (before a prompt, and at exit).
type MaskingWriter struct {
	mu      sync.Mutex
	w       io.Writer
	secrets config.Secrets
	pending []byte
}

// NewMaskingWriter wraps w; with no secrets it returns w itself.
func NewMaskingWriter(w io.Writer, s config.Secrets) io.Writer {
	if s.MaxLen() == 0 {
		return w
	}
	return &MaskingWriter{w: w, secrets: s}
}

func (m *MaskingWriter) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending = append(m.pending, p...)
	cut := bytes.LastIndexAny(m.pending, "\n\r")
	if cut < 0 {
		return len(p), nil
	}
	if err := m.emit(m.pending[:cut+1]); err != nil {
		return 0, err
	}
	m.pending = append(m.pending[:0], m.pending[cut+1:]...)
	return len(p), nil
}

// Flush writes the text held since the last end of line.
func (m *MaskingWriter) Flush() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.pending) == 0 {
		return nil
	}
	err := m.emit(m.pending)
	m.pending = m.pending[:0]
	return err
}

func (m *MaskingWriter) emit(b []byte) error {
	_, err := io.WriteString(m.w, m.secrets.Mask(string(b)))
	return err
}
