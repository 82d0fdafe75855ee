package lakehouse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/twmb/avro/ocf"
)

// CopyFixture copies the Spark-written fixture table srcDir (one of
// internal/testdata/tables/*) to dstDir and rewrites every path inside it to point
// at dstDir: the strings of each metadata.json, manifest_path in manifest
// lists and data_file.file_path in manifests. The fixtures hold paths
// relative to the repository that wrote them ("./lineitem_iceberg",
// "iceberg/tables-v1/..."), which no reader can resolve from elsewhere. It
// returns the rewritten current metadata location (from version-hint.text).
func CopyFixture(srcDir, dstDir string) (string, error) {
	srcDir = filepath.Clean(srcDir)
	prefixes, err := fixturePrefixes(srcDir)
	if err != nil {
		return "", err
	}
	rewrite := func(p string) (string, bool) {
		for _, pre := range prefixes {
			if p == pre {
				return dstDir, true
			}
			if rest, ok := strings.CutPrefix(p, pre+"/"); ok {
				return filepath.Join(dstDir, rest), true
			}
		}
		return p, false
	}
	err = filepath.WalkDir(srcDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(srcDir, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dstDir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(p, ".metadata.json"):
			raw, err = rewriteJSON(raw, rewrite)
		case strings.HasSuffix(p, ".avro") && strings.Contains(rel, "metadata"):
			raw, err = rewriteAvro(raw, rewrite)
		}
		if err != nil {
			return fmt.Errorf("rewrite %s: %w", rel, err)
		}
		return os.WriteFile(dst, raw, 0o644)
	})
	if err != nil {
		return "", fmt.Errorf("copy fixture %s: %w", srcDir, err)
	}
	hint, err := os.ReadFile(filepath.Join(dstDir, "metadata", "version-hint.text"))
	if err != nil {
		return "", fmt.Errorf("copy fixture %s: %w", srcDir, err)
	}
	return filepath.Join(dstDir, "metadata", "v"+strings.TrimSpace(string(hint))+".metadata.json"), nil
}

// fixturePrefixes reads the table location of the fixture's first metadata
// file: the paths inside start with it, with or without a leading "./".
func fixturePrefixes(srcDir string) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(srcDir, "metadata", "v1.metadata.json"))
	if err != nil {
		return nil, fmt.Errorf("fixture %s: %w", srcDir, err)
	}
	var m struct {
		Location string `json:"location"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("fixture %s: %w", srcDir, err)
	}
	if m.Location == "" {
		return nil, errors.New("fixture has no location")
	}
	loc := strings.TrimSuffix(m.Location, "/")
	out := []string{loc}
	if t := strings.TrimPrefix(loc, "./"); t != loc {
		out = append(out, t)
	} else {
		out = append(out, "./"+loc)
	}
	return out, nil
}

func rewriteJSON(raw []byte, rewrite func(string) (string, bool)) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if s, ok := rewrite(x); ok {
				return s
			}
			return x
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
			return x
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k])
			}
			return x
		}
		return v
	}
	return json.MarshalIndent(walk(v), "", "  ")
}

// rewriteAvro rewrites manifest_path (manifest lists) and data_file.file_path
// (manifests) in an Avro object container file, keeping its schema and the
// key/value metadata Iceberg stores in the header (schema, partition-spec,
// format-version, content).
func rewriteAvro(raw []byte, rewrite func(string) (string, bool)) ([]byte, error) {
	rd, err := ocf.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	meta := map[string][]byte{}
	for k, v := range rd.Metadata() {
		if k == "avro.schema" || k == "avro.codec" {
			continue
		}
		meta[k] = v
	}
	var records []any
	for {
		var v any
		if err := rd.Decode(&v); err != nil {
			if err == io.EOF { // Decode returns bare io.EOF at the end only
				break
			}
			return nil, err
		}
		if m, ok := v.(map[string]any); ok {
			if s, ok := m["manifest_path"].(string); ok {
				m["manifest_path"], _ = rewrite(s)
			}
			if df, ok := m["data_file"].(map[string]any); ok {
				if s, ok := df["file_path"].(string); ok {
					df["file_path"], _ = rewrite(s)
				}
			}
		}
		records = append(records, v)
	}
	var out bytes.Buffer
	w, err := ocf.NewWriter(&out, rd.Schema(), ocf.WithMetadata(meta), ocf.WithCodec(ocf.DeflateCodec(-1)))
	if err != nil {
		return nil, err
	}
	for _, r := range records {
		if err := w.Encode(r); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
