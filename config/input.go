package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// Limits on input. Every file icewright reads as input (configuration, var
// file, file() argument, saved plan) is a regular file within a size bound:
// a configuration that is a link to /dev/zero must not exhaust memory, nor
// a FIFO hang the command, nor a saved plan of gigabytes be read whole
// before it is refused.
const (
	MaxConfigFileBytes = 16 << 20 // one *.icewright.hcl or -var-file
	// MaxConfigBytes bounds all *.icewright.hcl files of a directory
	// together, and MaxBlocks their top-level blocks: memory grows with
	// both (about 500 bytes kept per one-line table block, and the parse of
	// a file several times its size), and a fleet that large is written
	// with tables selectors. 185,000 one-line table blocks (10 MB) are
	// within both (docs/benchmarks.md, "Configuration size").
	MaxConfigBytes   = 32 << 20
	MaxBlocks        = 250_000
	MaxPlanFileBytes = 512 << 20 // a saved plan (orphan path lists can be long)
	// MaxNesting bounds how deep brackets, braces, parentheses and template
	// interpolations nest. hcl's parser recurses once per level, so 400 KB
	// of "[" overflowed the Go stack; real configurations nest a few levels.
	MaxNesting = 100
)

// The limits Load applies: MaxConfigBytes and MaxBlocks, lowered by tests.
var maxConfigBytes, maxBlocks = MaxConfigBytes, MaxBlocks

// ReadRegularFile reads path, which must be a regular file (a symlink to
// one is fine) of at most limit bytes. It never blocks on a FIFO or device:
// the file is checked before it is opened, opened non-blocking, and checked
// again on the open descriptor (it may have been swapped in between).
func ReadRegularFile(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, st, limit); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regular(path, st, limit); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %s, the limit for this input", path, FormatSize(limit))
	}
	return b, nil
}

// ReadLimited reads r (standard input) up to limit bytes.
func ReadLimited(r io.Reader, what string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %s, the limit for this input", what, FormatSize(limit))
	}
	return b, nil
}

var errNotRegular = errors.New("not a regular file")

func regular(path string, st os.FileInfo, limit int64) error {
	if !st.Mode().IsRegular() {
		kind := "a special file"
		switch m := st.Mode(); {
		case m.IsDir():
			kind = "a directory"
		case m&os.ModeNamedPipe != 0:
			kind = "a named pipe"
		case m&os.ModeDevice != 0 || m&os.ModeCharDevice != 0:
			kind = "a device"
		case m&os.ModeSocket != 0:
			kind = "a socket"
		}
		return fmt.Errorf("%s is %s, %w: icewright reads only regular files", path, kind, errNotRegular)
	}
	if st.Size() > limit {
		return fmt.Errorf("%s is %s, larger than %s, the limit for this input", path, FormatSize(st.Size()), FormatSize(limit))
	}
	return nil
}

// checkInput reports input that is not UTF-8 (checkEncoding), and input
// whose brackets nest deeper than MaxNesting, before hcl parses it. It counts ( [ { and the ${ %{ of templates outside
// comments; inside a quoted string only those interpolations count, and the
// string resumes after the interpolation's closing brace. One linear pass;
// heredocs are scanned as code, which can only over-count.
func checkInput(src []byte, filename string) *hcl.Diagnostic {
	if d := checkEncoding(src, filename); d != nil {
		return d
	}
	var frames []bool // per open level: true when it is an interpolation inside a string
	inString := false
	line, col := 1, 1
	advance := func(c byte) {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		atLine, atCol := line, col
		advance(c)
		open, interp := false, false
		switch {
		case inString && c == '\\' && i+1 < len(src):
			i++
			advance(src[i])
			continue
		case inString && c == '"':
			inString = false
			continue
		case inString && (c == '$' || c == '%') && i+1 < len(src) && src[i+1] == '{':
			i++
			advance(src[i])
			open, interp, inString = true, true, false
		case inString:
			continue
		case c == '"':
			inString = true
			continue
		case c == '#' || (c == '/' && i+1 < len(src) && src[i+1] == '/'):
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			for i += 2; i < len(src) && !(src[i-1] == '*' && src[i] == '/'); i++ {
				advance(src[i])
			}
			continue
		case c == '(' || c == '[' || c == '{':
			open = true
		case c == ')' || c == ']' || c == '}':
			if n := len(frames); n > 0 {
				inString = frames[n-1] // back into the string an interpolation was in
				frames = frames[:n-1]
			}
		}
		if !open {
			continue
		}
		frames = append(frames, interp)
		if len(frames) > MaxNesting {
			pos := hcl.Pos{Line: atLine, Column: atCol, Byte: i}
			return &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Configuration nested too deeply",
				Detail:   fmt.Sprintf("Brackets, braces or interpolations nest more than %d levels deep here; icewright refuses such input before parsing it.", MaxNesting),
				Subject:  &hcl.Range{Filename: filename, Start: pos, End: pos},
			}
		}
	}
	return nil
}

// checkEncoding reports the first byte of src that is not UTF-8. hcl finds
// most such bytes itself, but not all ("A=\xec\n0" parses without an
// error), and a file parsed in chunks (parseInChunks) must not read
// differently from the same file parsed whole, so the whole input is
// checked once, before either.
func checkEncoding(src []byte, filename string) *hcl.Diagnostic {
	if utf8.Valid(src) {
		return nil
	}
	line, col := 1, 1
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && n <= 1 {
			pos := hcl.Pos{Line: line, Column: col, Byte: i}
			return &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid character encoding",
				Detail:   "All input files must be UTF-8 encoded. Ensure that UTF-8 encoding is selected in your editor.",
				Subject:  &hcl.Range{Filename: filename, Start: pos, End: hcl.Pos{Line: line, Column: col + 1, Byte: i + 1}},
			}
		}
		if src[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += n
	}
	return nil
}
