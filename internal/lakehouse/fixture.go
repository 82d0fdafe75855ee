package lakehouse

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"
)

// CopyFixture copies a fixture table of internal/testdata/tables whose
// current version is named by metadata/version-hint.text; see CopyTable.
func CopyFixture(srcDir, dstDir string) (string, error) {
	hint, err := os.ReadFile(filepath.Join(srcDir, "metadata", "version-hint.text"))
	if err != nil {
		return "", fmt.Errorf("copy fixture %s: %w", srcDir, err)
	}
	return CopyTable(srcDir, dstDir, "metadata/v"+strings.TrimSpace(string(hint))+".metadata.json")
}

// CopyTable copies a table that another engine wrote (srcDir is its
// location: the directory holding metadata/ and usually data/) to dstDir and
// rewrites every path inside it to point at dstDir, so that any reader can
// resolve it from there. current is the current metadata file relative to
// srcDir; CopyTable returns its new location.
//
// Writers record paths in many spellings: relative to the working directory
// of the repository that wrote them ("./lineitem_iceberg",
// "data/persistent/t"), absolute ("/home/iceberg/warehouse/t",
// "file:///Users/x/t") or on object storage ("s3://bucket/warehouse/t").
// The prefixes are read from every metadata file's location and write paths
// (write.data.path, write.metadata.path, write.object-storage.path), which
// all sit at or under the location in the tables we copy.
//
// What is rewritten: every string of each metadata.json that starts with a
// prefix; manifest_path (and manifest_length, since the manifest's bytes
// change) in manifest lists; data_file.file_path and referenced_data_file in
// manifests; the file_path column of Parquet position delete files, whose
// new file_size_in_bytes and file_path bounds go into their manifest
// entries; and the referenced-data-file blob property of Puffin deletion
// vectors (with their new size). Without the last step, a reader matching deletes to data files
// by path would silently apply none of them.
//
// Paths become bare absolute paths under dstDir, unless an option says
// otherwise (FileURIs).
func CopyTable(srcDir, dstDir, current string, opts ...CopyOption) (string, error) {
	srcDir, dstDir = filepath.Clean(srcDir), filepath.Clean(dstDir)
	c := &tableCopy{srcDir: srcDir, dstDir: dstDir, target: dstDir, done: map[string]bool{}, newLength: map[string]int64{}, puffinSize: map[string]int64{}}
	for _, opt := range opts {
		opt(&c.o)
	}
	var err error
	if c.prefixes, err = tablePrefixes(srcDir); err != nil {
		return "", fmt.Errorf("copy table %s: %w", srcDir, err)
	}
	if c.o.fileURIs {
		c.target = "file://" + filepath.ToSlash(dstDir)
	}
	var files []string
	err = filepath.WalkDir(srcDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("copy table %s: %w", srcDir, err)
	}
	// Manifests first: their new lengths go into the lists, and the
	// position delete files they name are rewritten before them.
	manifests, lists := c.avroFiles(files)
	for _, af := range manifests {
		if err := c.copyManifest(af); err != nil {
			return "", err
		}
	}
	for _, af := range lists {
		if err := c.copyList(af); err != nil {
			return "", err
		}
	}
	for _, p := range files {
		if err := c.copyOther(p); err != nil {
			return "", err
		}
	}
	return filepath.Join(dstDir, filepath.FromSlash(current)), nil
}

// tableCopy is one CopyTable.
type tableCopy struct {
	srcDir, dstDir string
	target         string   // dstDir as the rewritten paths spell it
	prefixes       []string // longest first
	o              copyOptions
	done           map[string]bool  // source files written already
	newLength      map[string]int64 // rewritten manifests by new path
	puffinSize     map[string]int64 // rewritten Puffin files by new path
}

// avroFile is a manifest or manifest list being rewritten.
type avroFile struct {
	src     string
	meta    map[string][]byte
	schema  *avro.Schema
	records []map[string]any
}

// rewrite moves p under target when it starts with a prefix.
func (c *tableCopy) rewrite(p string) (string, bool) {
	for _, pre := range c.prefixes {
		if p == pre {
			return c.target, true
		}
		if rest, ok := strings.CutPrefix(p, pre+"/"); ok {
			return c.target + "/" + rest, true
		}
	}
	return p, false
}

// local maps a rewritten path back to the source file it was copied from.
func (c *tableCopy) local(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, c.target+"/")
	if !ok {
		return "", false
	}
	return filepath.Join(c.srcDir, filepath.FromSlash(rest)), true
}

// write writes raw as the copy of the source file src.
func (c *tableCopy) write(src string, raw []byte) error {
	rel, err := filepath.Rel(c.srcDir, src)
	if err != nil {
		return err
	}
	dst := filepath.Join(c.dstDir, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, raw, 0o644)
}

// avroFiles sorts the Avro files into manifests (entries with data_file)
// and manifest lists (entries with manifest_path), marking them done; an
// Avro file that is neither (a data file in Avro) is copied as it is.
func (c *tableCopy) avroFiles(files []string) (manifests, lists []*avroFile) {
	for _, p := range files {
		if !strings.HasSuffix(p, ".avro") {
			continue
		}
		af := &avroFile{src: p}
		var err error
		af.records, af.meta, af.schema, err = readOCF(p)
		if err != nil {
			// Not an Iceberg metadata Avro file (a data file in Avro):
			// copied as it is.
			continue
		}
		switch {
		case len(af.records) > 0 && af.records[0]["manifest_path"] != nil:
			lists = append(lists, af)
		case len(af.records) > 0 && af.records[0]["data_file"] != nil:
			manifests = append(manifests, af)
		case strings.Contains(string(af.meta["avro.schema"]), "manifest_path"):
			lists = append(lists, af)
		case strings.Contains(string(af.meta["avro.schema"]), "data_file"):
			manifests = append(manifests, af)
		default:
			continue
		}
		c.done[p] = true
	}
	return manifests, lists
}

// copyManifest rewrites a manifest's paths and snapshot ids, and the
// delete files it names (deletion vectors, position deletes), with their
// new sizes and bounds.
func (c *tableCopy) copyManifest(af *avroFile) error {
	renumberMeta(af.meta, c.o.snapshotIDs)
	for _, rec := range af.records {
		if v, ok := rec["snapshot_id"]; ok {
			rec["snapshot_id"] = renumber(v, c.o.snapshotIDs)
		}
		df, _ := rec["data_file"].(map[string]any)
		if df == nil {
			continue
		}
		for _, k := range []string{"file_path", "referenced_data_file"} {
			if s, ok := df[k].(string); ok {
				df[k], _ = c.rewrite(s)
			}
		}
		if err := c.copyDeleteFile(df); err != nil {
			return err
		}
	}
	raw, err := writeOCF(af.schema, af.meta, af.records)
	if err != nil {
		return fmt.Errorf("copy table %s: rewrite %s: %w", c.srcDir, af.src, err)
	}
	if err := c.write(af.src, raw); err != nil {
		return fmt.Errorf("copy table %s: %w", c.srcDir, err)
	}
	rel, _ := filepath.Rel(c.srcDir, af.src)
	c.newLength[c.target+"/"+filepath.ToSlash(rel)] = int64(len(raw))
	return nil
}

// copyDeleteFile rewrites the Puffin or position delete file a manifest
// entry's data_file names (once), and sets its new size and bounds.
func (c *tableCopy) copyDeleteFile(df map[string]any) error {
	if isPuffin(df) {
		dst := df["file_path"].(string)
		if n, ok := c.puffinSize[dst]; ok {
			df["file_size_in_bytes"] = n
			return nil
		}
		src, ok := c.local(dst)
		if !ok || c.done[src] {
			return nil
		}
		raw, err := rewritePuffin(src, c.rewrite)
		if err != nil {
			return fmt.Errorf("copy table %s: deletion vectors %s: %w", c.srcDir, src, err)
		}
		if err := c.write(src, raw); err != nil {
			return fmt.Errorf("copy table %s: %w", c.srcDir, err)
		}
		c.done[src] = true
		c.puffinSize[dst] = int64(len(raw))
		df["file_size_in_bytes"] = int64(len(raw))
		return nil
	}
	if !isPositionDeleteParquet(df) {
		return nil
	}
	dst := df["file_path"].(string)
	src, ok := c.local(dst)
	if !ok || c.done[src] {
		return nil
	}
	raw, lo, hi, err := rewritePositionDeletes(src, c.rewrite)
	if err != nil {
		return fmt.Errorf("copy table %s: position deletes %s: %w", c.srcDir, src, err)
	}
	if err := c.write(src, raw); err != nil {
		return fmt.Errorf("copy table %s: %w", c.srcDir, err)
	}
	c.done[src] = true
	df["file_size_in_bytes"] = int64(len(raw))
	setBound(df, "lower_bounds", lo)
	setBound(df, "upper_bounds", hi)
	return nil
}

// copyList rewrites a manifest list's paths, lengths and snapshot ids.
func (c *tableCopy) copyList(af *avroFile) error {
	renumberMeta(af.meta, c.o.snapshotIDs)
	for _, rec := range af.records {
		if v, ok := rec["added_snapshot_id"]; ok {
			rec["added_snapshot_id"] = renumber(v, c.o.snapshotIDs)
		}
		if s, ok := rec["manifest_path"].(string); ok {
			p, _ := c.rewrite(s)
			rec["manifest_path"] = p
			if n, ok := c.newLength[p]; ok {
				rec["manifest_length"] = n
			}
		}
	}
	raw, err := writeOCF(af.schema, af.meta, af.records)
	if err != nil {
		return fmt.Errorf("copy table %s: rewrite %s: %w", c.srcDir, af.src, err)
	}
	if err := c.write(af.src, raw); err != nil {
		return fmt.Errorf("copy table %s: %w", c.srcDir, err)
	}
	return nil
}

// copyOther copies a file not written yet: a metadata.json with its paths
// and snapshot ids rewritten, any other as it is.
func (c *tableCopy) copyOther(p string) error {
	if c.done[p] {
		return nil
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("copy table %s: %w", c.srcDir, err)
	}
	if strings.HasSuffix(p, ".metadata.json") {
		if raw, err = rewriteJSON(raw, c.rewrite, c.o.snapshotIDs); err != nil {
			return fmt.Errorf("copy table %s: rewrite %s: %w", c.srcDir, p, err)
		}
	}
	if err := c.write(p, raw); err != nil {
		return fmt.Errorf("copy table %s: %w", c.srcDir, err)
	}
	return nil
}

// CopyOption changes how CopyTable spells the paths it rewrites.
type CopyOption func(*copyOptions)

type copyOptions struct {
	fileURIs    bool
	snapshotIDs map[int64]int64
}

// SnapshotIDs makes CopyTable renumber snapshots: each id that is a key of
// ids becomes its value wherever the table names it (the metadata JSON's
// snapshot, parent, current-snapshot, ref and log ids, the manifest lists'
// added_snapshot_id and header, the manifests' entry snapshot_id). File
// names keep the old digits, as a writer that renumbered would leave them.
// Tests use it to give a table iceberg-go wrote the ids another writer
// would (a negative id: issue 32).
func SnapshotIDs(ids map[int64]int64) CopyOption {
	return func(o *copyOptions) { o.snapshotIDs = ids }
}

// renumber maps a snapshot id as the Avro decoder or the JSON decoder holds
// it (int64, nil, json.Number) through ids.
func renumber(v any, ids map[int64]int64) any {
	switch x := v.(type) {
	case int64:
		if n, ok := ids[x]; ok {
			return n
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			if n, ok := ids[i]; ok {
				return json.Number(strconv.FormatInt(n, 10))
			}
		}
	}
	return v
}

// renumberMeta maps the snapshot ids an Avro header names.
func renumberMeta(meta map[string][]byte, ids map[int64]int64) {
	for _, k := range []string{"snapshot-id", "parent-snapshot-id"} {
		if i, err := strconv.ParseInt(string(meta[k]), 10, 64); err == nil {
			if n, ok := ids[i]; ok {
				meta[k] = []byte(strconv.FormatInt(n, 10))
			}
		}
	}
}

// FileURIs makes CopyTable write every rewritten path as a file:// URI of
// dstDir ("file:///dst/data/ts=2023-08-22T09%3A15%3A20/f.parquet"), the rest
// of each path as its writer spelled it: the escapes of Java's and
// PyIceberg's partition directories stay in the names, as they are when
// those engines write at a file: location (and as a table copied to local
// disk often is). dstDir is used as the URI's path as it is.
func FileURIs() CopyOption {
	return func(o *copyOptions) { o.fileURIs = true }
}

// writePathProperties are the table properties that hold a path prefix.
var writePathProperties = []string{"write.data.path", "write.metadata.path", "write.object-storage.path", "write.folder-storage.path"}

// tablePrefixes collects the location and write paths of every metadata
// file under srcDir/metadata in each spelling a writer may have used for
// them, longest first so the most specific prefix wins.
func tablePrefixes(srcDir string) ([]string, error) {
	mds, err := filepath.Glob(filepath.Join(srcDir, "metadata", "*.metadata.json"))
	if err != nil {
		return nil, err
	}
	var locs []string
	for _, md := range mds {
		raw, err := os.ReadFile(md)
		if err != nil {
			return nil, err
		}
		var m struct {
			Location   string            `json:"location"`
			Properties map[string]string `json:"properties"`
			Snapshots  []struct {
				ManifestList string `json:"manifest-list"`
			} `json:"snapshots"`
			MetadataLog []struct {
				File string `json:"metadata-file"`
			} `json:"metadata-log"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			continue // not table metadata (a writer's placeholder)
		}
		if m.Location == "" {
			continue
		}
		loc := strings.TrimSuffix(m.Location, "/")
		locs = append(locs, loc)
		// A table edited by hand may name its metadata files under
		// another spelling of the location than "location" says (the
		// BigQuery table: gs:// location, relative manifest lists).
		for _, s := range m.Snapshots {
			if before, _, ok := strings.Cut(s.ManifestList, "/metadata/"); ok {
				locs = append(locs, before)
			}
		}
		for _, e := range m.MetadataLog {
			if before, _, ok := strings.Cut(e.File, "/metadata/"); ok {
				locs = append(locs, before)
			}
		}
		for _, k := range writePathProperties {
			// Write paths outside the location (another directory of
			// the origin's storage) cannot be mapped into dstDir, and
			// the tables we copy keep them inside.
			if w := strings.TrimSuffix(m.Properties[k], "/"); w != "" && strings.HasPrefix(w, loc+"/") {
				locs = append(locs, w[:len(loc)]) // the location spelled as the write path spells it
			}
		}
	}
	if len(locs) == 0 {
		return nil, errors.New("no metadata file with a location")
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, loc := range locs {
		bare := loc
		for _, scheme := range []string{"file://", "file:"} {
			if t, ok := strings.CutPrefix(bare, scheme); ok {
				bare = t
				break
			}
		}
		bare = strings.TrimPrefix(bare, "./")
		add(loc)
		add(bare)
		if strings.Contains(bare, "://") {
			continue // s3://, gs://: one spelling
		}
		add("./" + bare)
		add("file://" + bare)
		add("file:" + bare)
		if strings.HasPrefix(bare, "/") {
			add("file://" + strings.TrimPrefix(bare, "/")) // file://Users/x, as some writers join
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out, nil
}

// The reserved field ids of a position delete file (Iceberg spec).
const (
	posDeleteFilePathID = 2147483546
)

func isPositionDeleteParquet(df map[string]any) bool {
	content, _ := df["content"].(int32)
	format, _ := df["file_format"].(string)
	return content == 1 && strings.EqualFold(format, "PARQUET")
}

func isPuffin(df map[string]any) bool {
	format, _ := df["file_format"].(string)
	return strings.EqualFold(format, "PUFFIN")
}

// puffinMagic opens and closes a Puffin file and its footer.
var puffinMagic = []byte("PFA1")

// rewritePuffin rewrites the referenced-data-file property of each blob in
// a Puffin file's footer (readers check it against the manifest's
// referenced_data_file). Blobs come before the footer, so their offsets
// stay valid. A compressed footer, or a file that is not Puffin (a legacy
// bare deletion vector), is copied as it is.
func rewritePuffin(src string, rewrite func(string) (string, bool)) ([]byte, error) {
	raw, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	n := len(raw)
	if n < 16 || !bytes.Equal(raw[:4], puffinMagic) || !bytes.Equal(raw[n-4:], puffinMagic) {
		return raw, nil
	}
	size := int(binary.LittleEndian.Uint32(raw[n-12 : n-8]))
	flags := binary.LittleEndian.Uint32(raw[n-8 : n-4])
	start := n - 12 - size
	if flags&1 != 0 || start < 8 || !bytes.Equal(raw[start-4:start], puffinMagic) {
		return raw, nil
	}
	var footer map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw[start : n-12]))
	dec.UseNumber()
	if err := dec.Decode(&footer); err != nil {
		return nil, fmt.Errorf("footer: %w", err)
	}
	blobs, _ := footer["blobs"].([]any)
	for _, b := range blobs {
		bm, _ := b.(map[string]any)
		props, _ := bm["properties"].(map[string]any)
		if s, ok := props["referenced-data-file"].(string); ok {
			props["referenced-data-file"], _ = rewrite(s)
		}
	}
	payload, err := json.Marshal(footer)
	if err != nil {
		return nil, err
	}
	out := append([]byte{}, raw[:start]...)
	out = append(out, payload...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(payload)))
	out = binary.LittleEndian.AppendUint32(out, flags)
	return append(out, puffinMagic...), nil
}

// rewritePositionDeletes rewrites the file_path column of a Parquet position
// delete file and returns the new file with the column's new min and max.
// The Arrow schema read keeps the Parquet field ids (PARQUET:field_id
// metadata), and the writer writes them back.
func rewritePositionDeletes(src string, rewrite func(string) (string, bool)) ([]byte, []byte, []byte, error) {
	f, err := os.Open(src)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		return nil, nil, nil, err
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, nil, nil, err
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, nil, nil, err
	}
	defer tbl.Release()
	idx := tbl.Schema().FieldIndices("file_path")
	if len(idx) != 1 {
		return nil, nil, nil, errors.New("no file_path column")
	}
	var lo, hi string
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
		s, ok := chunk.(*array.String)
		if !ok {
			return nil, nil, nil, fmt.Errorf("file_path is %s", chunk.DataType())
		}
		for i := range s.Len() {
			if s.IsNull(i) {
				b.AppendNull()
				continue
			}
			p, _ := rewrite(s.Value(i))
			b.Append(p)
			if lo == "" || p < lo {
				lo = p
			}
			if p > hi {
				hi = p
			}
		}
	}
	paths := b.NewArray()
	defer paths.Release()
	cols := make([]arrow.Array, tbl.NumCols())
	for i := range cols {
		if i == idx[0] {
			cols[i] = paths
			continue
		}
		c, err := array.Concatenate(tbl.Column(i).Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			return nil, nil, nil, err
		}
		defer c.Release()
		cols[i] = c
	}
	rec := array.NewRecord(tbl.Schema(), cols, int64(paths.Len()))
	defer rec.Release()
	var out bytes.Buffer
	w, err := pqarrow.NewFileWriter(tbl.Schema(), &out, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd)), pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, nil, nil, err
	}
	if err := w.Write(rec); err != nil {
		return nil, nil, nil, err
	}
	if err := w.Close(); err != nil {
		return nil, nil, nil, err
	}
	return out.Bytes(), []byte(lo), []byte(hi), nil
}

// setBound sets the file_path entry of a manifest entry's lower_bounds or
// upper_bounds, when the entry has bounds at all.
func setBound(df map[string]any, key string, v []byte) {
	bounds, ok := df[key].([]any)
	if !ok {
		return
	}
	for _, e := range bounds {
		if kv, ok := e.(map[string]any); ok {
			if id, _ := kv["key"].(int32); id == posDeleteFilePathID {
				kv["value"] = v
			}
		}
	}
}

func rewriteJSON(raw []byte, rewrite func(string) (string, bool), ids map[int64]int64) ([]byte, error) {
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
				switch k {
				case "snapshot-id", "parent-snapshot-id", "current-snapshot-id":
					x[k] = renumber(x[k], ids)
				default:
					x[k] = walk(x[k])
				}
			}
			return x
		}
		return v
	}
	return json.MarshalIndent(walk(v), "", "  ")
}

// readOCF reads an Avro object container file: its records, its key/value
// metadata (Iceberg keeps schema, partition-spec, format-version and content
// there) and its schema.
func readOCF(p string) ([]map[string]any, map[string][]byte, *avro.Schema, error) {
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, nil, nil, err
	}
	rd, err := ocf.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, nil, err
	}
	defer rd.Close()
	meta := map[string][]byte{}
	for k, v := range rd.Metadata() {
		meta[k] = v
	}
	var records []map[string]any
	for {
		var v map[string]any
		if err := rd.Decode(&v); err != nil {
			if err == io.EOF { // Decode returns bare io.EOF at the end only
				break
			}
			return nil, nil, nil, err
		}
		records = append(records, v)
	}
	return records, meta, rd.Schema(), nil
}

// writeOCF writes records with the schema and metadata readOCF returned
// (deflate-compressed whatever the original codec: readers do not care).
func writeOCF(schema *avro.Schema, meta map[string][]byte, records []map[string]any) ([]byte, error) {
	keep := map[string][]byte{}
	for k, v := range meta {
		if k != "avro.schema" && k != "avro.codec" {
			keep[k] = v
		}
	}
	var out bytes.Buffer
	w, err := ocf.NewWriter(&out, schema, ocf.WithMetadata(keep), ocf.WithCodec(ocf.DeflateCodec(-1)))
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
