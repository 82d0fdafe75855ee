package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/twmb/avro/ocf"

	"github.com/icewright/icewright/internal/testenv"
)

// fixture is one Spark-written table of internal/testdata/tables (see its README).
type fixture struct {
	Dir string
	// Rows is the exact number of live rows of the current snapshot.
	Rows int64
	// Current is the current metadata file, relative to the table.
	Current string
}

var fixtures = []fixture{
	{Dir: "duckdb-spark-lineitem-mor", Rows: 51793, Current: "metadata/v2.metadata.json"},
	{Dir: "glaredb-spark-lineitem-v1-partitioned", Rows: 1000, Current: "metadata/v1.metadata.json"},
	{Dir: "glaredb-spark-lineitem-v2-versioned", Rows: 2000, Current: "metadata/v2.metadata.json"},
}

// copyFixture copies a fixture table to dest (a table location: an absolute
// path, file://, or s3://), rewriting every path inside it (metadata JSON,
// manifest_path in manifest lists, data_file.file_path in manifests), and
// returns the location of its current metadata file. Non-Iceberg files
// (Hadoop's .crc) are copied as they are, unless sideFiles is false: an S3
// Tables bucket refuses every key outside the Iceberg layout.
func copyFixture(ctx context.Context, t testing.TB, fx fixture, dest string, props map[string]string, sideFiles bool) string {
	t.Helper()
	src := testenv.Fixture(t, fx.Dir)
	dest = strings.TrimSuffix(dest, "/")
	prefixes := fixturePrefixes(t, filepath.Join(src, fx.Current))
	rewrite := func(p string) string {
		for _, pre := range prefixes {
			if p == pre || strings.HasPrefix(p, pre+"/") {
				return dest + strings.TrimPrefix(p, pre)
			}
		}
		return p
	}
	fsys, err := icebergio.LoadFS(ctx, iceberg.Properties(props), dest)
	if err != nil {
		t.Fatalf("IO for %s: %v", dest, err)
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		t.Fatalf("IO %T for %s cannot write", fsys, dest)
	}
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if !strings.HasPrefix(rel, "data"+string(filepath.Separator)) && !strings.HasPrefix(rel, "metadata"+string(filepath.Separator)) {
			return nil // README and the like are not part of the table
		}
		name := d.Name()
		if strings.HasSuffix(name, ".crc") && !sideFiles {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(name, ".metadata.json"):
			raw, err = rewriteJSONPaths(raw, rewrite)
		case strings.HasSuffix(name, ".avro"):
			raw, err = rewriteAvroPaths(raw, rewrite)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		target := dest + "/" + filepath.ToSlash(rel)
		if err := wfs.WriteFile(target, raw); err != nil {
			return fmt.Errorf("write %s: %w", target, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("copy fixture %s to %s: %v", fx.Dir, dest, err)
	}
	return dest + "/" + fx.Current
}

// fixturePrefixes reads the table location written in the metadata (such as
// "./lineitem_iceberg") and returns the spellings paths use: with and
// without the leading "./".
func fixturePrefixes(t testing.TB, metadataPath string) []string {
	t.Helper()
	raw, err := os.ReadFile(metadataPath)
	if err != nil {
		t.Fatalf("read %s: %v", metadataPath, err)
	}
	var m struct {
		Location string `json:"location"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.Location == "" {
		t.Fatalf("no location in %s: %v", metadataPath, err)
	}
	loc := strings.TrimSuffix(m.Location, "/")
	bare := strings.TrimPrefix(loc, "./")
	return []string{"./" + bare, bare}
}

// rewriteJSONPaths rewrites every string value of a metadata document that
// is a path under the table. Numbers are kept as written (64-bit ids).
func rewriteJSONPaths(raw []byte, rewrite func(string) string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case string:
			return rewrite(x)
		}
		return v
	}
	return json.MarshalIndent(walk(doc), "", "  ")
}

// rewriteAvroPaths rewrites manifest_path (manifest lists) and
// data_file.file_path (manifests), keeping the schema, the codec and the
// file metadata that Iceberg stores in the header.
func rewriteAvroPaths(raw []byte, rewrite func(string) string) ([]byte, error) {
	rd, err := ocf.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	meta := map[string][]byte{}
	codec := ocf.Codec(nil)
	for k, v := range rd.Metadata() {
		switch k {
		case "avro.schema":
		case "avro.codec":
			switch string(v) {
			case "deflate":
				codec = ocf.DeflateCodec(-1)
			case "snappy":
				codec = ocf.SnappyCodec()
			case "null", "":
			default:
				return nil, fmt.Errorf("avro codec %q not handled", v)
			}
		default:
			meta[k] = v
		}
	}
	var out bytes.Buffer
	opts := []ocf.WriterOpt{ocf.WithMetadata(meta)}
	if codec != nil {
		opts = append(opts, ocf.WithCodec(codec))
	}
	w, err := ocf.NewWriter(&out, rd.Schema(), opts...)
	if err != nil {
		return nil, err
	}
	n := 0
	for {
		var rec map[string]any
		if err := rd.Decode(&rec); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if p, ok := rec["manifest_path"].(string); ok {
			rec["manifest_path"] = rewrite(p)
		}
		if df, ok := rec["data_file"].(map[string]any); ok {
			if p, ok := df["file_path"].(string); ok {
				df["file_path"] = rewrite(p)
			}
		}
		if err := w.Encode(rec); err != nil {
			return nil, fmt.Errorf("encode record %d: %w", n, err)
		}
		n++
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
