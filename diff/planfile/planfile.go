// Package planfile is the saved plan: its encoding (the plan document of
// docs/design.md §5.2, which plan -json prints too), its strict decoding,
// its checksum and its format version (docs/design.md §5.3). It is the only
// reader and writer of plan files; the views render plans, they do not
// read or write them.
package planfile

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
)

// ErrInvalid marks a saved plan that icewright refuses to read.
var ErrInvalid = errors.New("invalid saved plan")

// Write encodes the plan document: indented JSON and a final newline. It
// is the saved plan's content and what plan -json prints, so `show -json`
// of a saved plan and `plan -json` print the same bytes apart from
// created_at.
func Write(w io.Writer, p *diff.Plan) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode plan: %w", err)
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}

// Save writes the plan to path with mode 0600 (it names every table and
// path of the lakehouse), atomically so a crash never leaves a truncated
// plan that apply would have to refuse.
func Save(path string, p *diff.Plan) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".icewright-plan-*")
	if err != nil {
		return fmt.Errorf("save plan: %w", err)
	}
	tmp := f.Name()
	werr := Write(f, p)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save plan %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save plan %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save plan %s: %w", path, err)
	}
	return nil
}

// Load reads the saved plan at path, a regular file of at most
// config.MaxPlanFileBytes, with Read. A file that cannot be read is an
// error "read saved plan: ..."; one that Read refuses wraps ErrInvalid.
func Load(path string) (*diff.Plan, error) {
	b, err := config.ReadRegularFile(path, config.MaxPlanFileBytes)
	if err != nil {
		return nil, fmt.Errorf("read saved plan: %w", err)
	}
	return Read(bytes.NewReader(b))
}

// Read decodes a saved plan strictly: a truncated file, a plan of another
// major format version, unknown fields, missing required fields,
// inconsistent action payloads, or content that no longer matches the
// plan's checksum (a hand edit) are refused with an error saying which.
func Read(r io.Reader) (*diff.Plan, error) {
	data, err := io.ReadAll(io.LimitReader(r, config.MaxPlanFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read: %w", ErrInvalid, err)
	}
	if len(data) > config.MaxPlanFileBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrInvalid, config.MaxPlanFileBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: the file is empty", ErrInvalid)
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%w: not a complete JSON document (truncated or corrupted file)", ErrInvalid)
	}
	// The version is checked before the strict decode so that a plan from a
	// newer major version says so instead of "unknown field".
	var head struct {
		FormatVersion *string `json:"format_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if head.FormatVersion == nil {
		return nil, fmt.Errorf("%w: no format_version: not an icewright plan", ErrInvalid)
	}
	if err := CheckVersion(*head.FormatVersion); err != nil {
		return nil, err
	}

	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p diff.Plan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the plan document", ErrInvalid)
	}
	if err := checkActionFields(data); err != nil {
		return nil, err
	}
	if err := Validate(&p); err != nil {
		return nil, err
	}
	if p.Checksum == "" {
		return nil, fmt.Errorf("%w: no checksum: the plan was not written by icewright plan", ErrInvalid)
	}
	want, err := Checksum(&p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if p.Checksum != want {
		return nil, fmt.Errorf("%w: content does not match its checksum: the plan was edited after icewright wrote it; run icewright plan again", ErrInvalid)
	}
	return &p, nil
}

// pathsSentinel stands in for an orphan action's paths while the rest of
// its table is marshalled; no storage path contains NUL bytes.
const pathsSentinel = "\x00icewright-orphan-paths\x00"

// writeTableJSON writes exactly json.Marshal(tp) to w, but marshals the
// orphan paths one at a time: a table with 200,000 orphans would otherwise
// build one ~30 MB buffer (doubling as it grows) only to hash it.
func writeTableJSON(w io.Writer, tp *diff.TablePlan) error {
	cp := *tp
	cp.Actions = slices.Clone(tp.Actions)
	var lists [][]string
	for i := range cp.Actions {
		if o := cp.Actions[i].Orphans; o != nil && len(o.Paths) > 0 {
			oc := *o
			lists = append(lists, o.Paths)
			oc.Paths = []string{pathsSentinel}
			cp.Actions[i].Orphans = &oc
		}
	}
	// The JSON round trip normalises what a saved plan's reader sees (an
	// invalid UTF-8 byte reads back as U+FFFD), so a plan hashes the same
	// before it is written and after it is read.
	b, err := readBackJSON(&cp)
	if err != nil {
		return err
	}
	mark, _ := json.Marshal(pathsSentinel)
	parts := bytes.Split(b, mark)
	if len(parts) != len(lists)+1 {
		// Not the shape expected: the whole table at once.
		b, err := readBackJSON(tp)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for i, part := range parts {
		_, _ = bw.Write(part)
		if i == len(lists) {
			break
		}
		for j, p := range lists[i] {
			if j > 0 {
				_ = bw.WriteByte(',')
			}
			q, err := json.Marshal(asReadBack(p))
			if err != nil {
				return err
			}
			_, _ = bw.Write(q)
		}
	}
	return bw.Flush()
}

// readBackJSON is the JSON of tp as it reads back from a file.
func readBackJSON(tp *diff.TablePlan) ([]byte, error) {
	b, err := json.Marshal(tp)
	if err != nil {
		return nil, err
	}
	var q diff.TablePlan
	if err := json.Unmarshal(b, &q); err != nil {
		return nil, err
	}
	return json.Marshal(&q)
}

// asReadBack is s as a JSON round trip returns it: every byte that is not
// part of valid UTF-8 becomes U+FFFD, as encoding/json writes it.
func asReadBack(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// CheckVersion accepts a plan document of this icewright's major format
// version (diff.FormatVersion); additive changes keep the major.
func CheckVersion(v string) error {
	major, _, ok := strings.Cut(v, ".")
	if !ok {
		return fmt.Errorf("%w: format_version %q is not MAJOR.MINOR", ErrInvalid, v)
	}
	want, _, _ := strings.Cut(diff.FormatVersion, ".")
	if _, err := strconv.Atoi(major); err != nil {
		return fmt.Errorf("%w: format_version %q is not MAJOR.MINOR", ErrInvalid, v)
	}
	if n, _ := strconv.Atoi(major); n == 1 && want == "2" {
		// Format 2.0 records each compaction group's files, which apply
		// rewrites; a 1.x plan has only their counts.
		return fmt.Errorf("%w: format_version %s was written by an older icewright, whose compaction groups do not name their files; this icewright reads %s.x and rewrites exactly the files a plan names: run plan again", ErrInvalid, v, want)
	}
	if major != want {
		return fmt.Errorf("%w: format_version %s is not supported by this icewright (reads %s.x); plan again with this version", ErrInvalid, v, want)
	}
	return nil
}

// checkActionFields refuses unknown fields inside actions: their custom
// JSON decoding is flat and lenient, so the top-level DisallowUnknownFields
// does not reach them. Each raw action's keys must be keys its decoded form
// can produce.
func checkActionFields(data []byte) error {
	var raw struct {
		Tables []struct {
			Address string            `json:"address"`
			Actions []json.RawMessage `json:"actions"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	for _, t := range raw.Tables {
		for i, a := range t.Actions {
			var keys map[string]json.RawMessage
			if err := json.Unmarshal(a, &keys); err != nil {
				return fmt.Errorf("%w: %s action %d: %w", ErrInvalid, t.Address, i+1, err)
			}
			var act diff.Action
			if err := json.Unmarshal(a, &act); err != nil {
				return fmt.Errorf("%w: %s action %d: %w", ErrInvalid, t.Address, i+1, err)
			}
			allowed := map[string]bool{"type": true, "destructive": true, "reason": true, "estimate": true}
			if pt := act.Type.PayloadType(); pt != nil {
				for _, k := range jsonKeys(pt) {
					allowed[k] = true
				}
			}
			for k := range keys {
				if !allowed[k] {
					return fmt.Errorf("%w: %s action %d (%s): unknown field %q", ErrInvalid, t.Address, i+1, act.Type, k)
				}
			}
		}
	}
	return nil
}

func jsonKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// Validate checks a plan's structure: required fields, one table per
// address, actions in order with the payload their type names, destructive
// flags as the contract says, payload lists that agree with their counts,
// and a summary that matches the tables.
func Validate(p *diff.Plan) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	if err := CheckVersion(p.FormatVersion); err != nil {
		return err
	}
	if !strings.HasPrefix(p.ConfigDigest, "sha256:") {
		return bad("config_digest %q is missing or malformed", p.ConfigDigest)
	}
	if p.CreatedAt.IsZero() {
		return bad("created_at is missing")
	}
	if p.Tables == nil {
		return bad("tables is missing")
	}
	seen := map[string]bool{}
	for _, t := range p.Tables {
		if t.Address == "" {
			return bad("a table has no address")
		}
		if seen[t.Address] {
			return bad("table %s appears twice", t.Address)
		}
		seen[t.Address] = true
		if t.Observed.TableUUID == "" || t.Observed.MetadataLocation == "" {
			return bad("table %s: observed table_uuid and metadata_location are required", t.Address)
		}
		last := 0
		for i, a := range t.Actions {
			ord := a.Type.Order()
			if ord == 0 {
				return bad("table %s action %d: unknown type %q", t.Address, i+1, a.Type)
			}
			if ord <= last {
				return bad("table %s: action %s out of order or repeated", t.Address, a.Type)
			}
			last = ord
			if a.Destructive != a.Type.Destructive() {
				return bad("table %s: action %s has destructive=%v", t.Address, a.Type, a.Destructive)
			}
			if err := a.Validate(); err != nil {
				return bad("table %s: action %s: %v", t.Address, a.Type, err)
			}
		}
	}
	cp := *p
	diff.Summarize(&cp)
	if cp.Summary != p.Summary {
		return bad("summary %+v does not match the tables (%+v)", p.Summary, cp.Summary)
	}
	if len(cp.Refusals) != len(p.Refusals) || (len(p.Refusals) > 0 && !reflect.DeepEqual(cp.Refusals, p.Refusals)) {
		return bad("refusals do not match the tables' refusals")
	}
	return nil
}

// Checksum is "sha256:<hex>" over the plan's safety-relevant content:
// format version, config digest, targets and every table
// (observed identity, actions, refusals). created_at is left out so two
// plans of an unchanged table are the same document; the summary and errors are left
// out (the summary is re-derived and compared in Validate).
//
// The bytes hashed are json.Marshal of {format_version, config_digest,
// targets, tables}, but written table by table into the hash: marshalling
// the whole document at once held a copy of every orphan path (200,000
// paths are ~30 MB, more while the buffer grows) on top of the plan, and
// was the peak of a large plan's memory.
func Checksum(p *diff.Plan) (string, error) {
	h := sha256.New()
	write := func(prefix string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("checksum: %w", err)
		}
		_, _ = h.Write([]byte(prefix))
		_, _ = h.Write(b)
		return nil
	}
	if err := write(`{"format_version":`, p.FormatVersion); err != nil {
		return "", err
	}
	if err := write(`,"config_digest":`, p.ConfigDigest); err != nil {
		return "", err
	}
	if err := write(`,"targets":`, p.Targets); err != nil {
		return "", err
	}
	if p.Tables == nil {
		_, _ = h.Write([]byte(`,"tables":null}`))
	} else {
		sep := `,"tables":[`
		for i := range p.Tables {
			_, _ = h.Write([]byte(sep))
			if err := writeTableJSON(h, &p.Tables[i]); err != nil {
				return "", fmt.Errorf("checksum: %w", err)
			}
			sep = ","
		}
		if len(p.Tables) == 0 {
			_, _ = h.Write([]byte(sep))
		}
		_, _ = h.Write([]byte(`]}`))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
