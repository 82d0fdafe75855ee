package manifestread

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/icewright/icewright/internal/testenv"
)

// corpusManifest is one manifest of the repository's tables with its
// manifest list entry.
type corpusManifest struct {
	list string // the manifest list's path, for messages
	m    iceberg.ManifestFile
	data []byte
}

// corpus finds every manifest list in the repository's table fixtures
// (every .avro file whose schema is a manifest list's) and the manifests
// it names, by file name under the same table.
func corpus(t testing.TB) []corpusManifest {
	t.Helper()
	root := testenv.RepoRoot(t)
	var lists []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".avro") && isManifestList(t, p) {
			lists = append(lists, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusManifest
	for _, l := range lists {
		f, err := os.Open(l)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := iceberg.ReadManifestList(f)
		f.Close()
		if err != nil {
			t.Logf("%s: iceberg-go cannot read the manifest list: %v", l, err)
			continue
		}
		tableRoot := filepath.Dir(filepath.Dir(l)) // above metadata/
		for _, m := range ms {
			p := findFile(t, tableRoot, filepath.Base(m.FilePath()))
			if p == "" {
				continue // a manifest the fixture does not carry
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, corpusManifest{list: l, m: m, data: b})
		}
	}
	return out
}

func isManifestList(t testing.TB, p string) bool {
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := readHeader(bufio.NewReader(f))
	return err == nil && bytes.Contains(h.meta["avro.schema"], []byte(`"manifest_path"`))
}

func findFile(t testing.TB, root, name string) string {
	var found string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name && found == "" {
			found = p
		}
		return nil
	})
	return found
}

// icebergEntries reads a manifest with iceberg-go's reader, projected as
// the walk reads it.
func icebergEntries(m iceberg.ManifestFile, data []byte) ([]iceberg.ManifestEntry, error) {
	rd, err := iceberg.NewManifestReaderWithProjection(m, bytes.NewReader(data), iceberg.ManifestEntryProjection{})
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var out []iceberg.ManifestEntry
	for {
		e, err := rd.ReadEntry()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
}

func ourEntries(m iceberg.ManifestFile, data []byte, discardDeleted bool) ([]iceberg.ManifestEntry, error) {
	var out []iceberg.ManifestEntry
	err := Read(bytes.NewReader(data), m, discardDeleted, func(e iceberg.ManifestEntry) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// TestReadAgreesWithIcebergGoOnTheCorpus: every manifest of every table in
// the repository (other engines' writers: Spark, Trino, DuckDB, Dremio,
// PyIceberg, iceberg-cxx; v1 to v3; deletes, deletion vectors, every
// partition type) decodes to the same entries, field by field, as
// iceberg-go's reader; what iceberg-go refuses, Read refuses.
func TestReadAgreesWithIcebergGoOnTheCorpus(t *testing.T) {
	ms := corpus(t)
	if len(ms) < 100 {
		t.Fatalf("found %d manifests in the repository's fixtures; is the walk looking at the repository?", len(ms))
	}
	entries, refused := 0, 0
	for _, c := range ms {
		want, werr := icebergEntries(c.m, c.data)
		got, gerr := ourEntries(c.m, c.data, false)
		switch {
		case werr != nil && gerr == nil:
			t.Errorf("%s (list %s): iceberg-go refuses it (%v), Read does not", c.m.FilePath(), c.list, werr)
			continue
		case werr != nil:
			refused++
			continue
		case gerr != nil:
			t.Errorf("%s (list %s): Read refuses what iceberg-go reads: %v", c.m.FilePath(), c.list, gerr)
			continue
		case len(got) != len(want):
			t.Errorf("%s: %d entries, iceberg-go %d", c.m.FilePath(), len(got), len(want))
			continue
		}
		for i := range want {
			if d := Differences(want[i], got[i]); len(d) > 0 {
				t.Errorf("%s entry %d (%s): %s", c.m.FilePath(), i, want[i].DataFile().FilePath(), strings.Join(d, "; "))
			}
		}
		entries += len(want)
		live, err := ourEntries(c.m, c.data, true)
		if err != nil {
			t.Fatal(err)
		}
		deleted := 0
		for _, e := range want {
			if e.Status() == iceberg.EntryStatusDELETED {
				deleted++
			}
		}
		if len(live) != len(want)-deleted {
			t.Errorf("%s: %d live entries, want %d", c.m.FilePath(), len(live), len(want)-deleted)
		}
	}
	t.Logf("%d manifests, %d entries compared; %d refused by both", len(ms), entries, refused)
}

// TestSchemaParsedOncePerDistinctSchema: reading the corpus twice parses no
// schema the second time.
func TestSchemaParsedOncePerDistinctSchema(t *testing.T) {
	ms := corpus(t)
	for _, c := range ms {
		_, _ = ourEntries(c.m, c.data, false)
	}
	parsed.Lock()
	before := parsed.n
	parsed.Unlock()
	for _, c := range ms {
		_, _ = ourEntries(c.m, c.data, false)
	}
	parsed.Lock()
	after := parsed.n
	parsed.Unlock()
	if after != before {
		t.Errorf("the second read of %d manifests parsed %d schemas, want 0", len(ms), after-before)
	}
	distinct := map[string]bool{}
	for _, c := range ms {
		h, err := readHeader(bufio.NewReader(bytes.NewReader(c.data)))
		if err == nil {
			distinct[string(h.meta["avro.schema"])] = true
		}
	}
	t.Logf("%d manifests, %d distinct schemas, %d plans parsed", len(ms), len(distinct), before)
}

// TestReadRefusesCorruptManifests: a cut or altered file is an error, not
// a panic, and not a shorter list of entries.
func TestReadRefusesCorruptManifests(t *testing.T) {
	ms := corpus(t)
	c := ms[0]
	want, err := icebergEntries(c.m, c.data)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{0, 3, 10, len(c.data) / 2, len(c.data) - 1} {
		if got, err := ourEntries(c.m, c.data[:cut], false); err == nil {
			t.Errorf("cut at %d of %d bytes: no error (%d entries, whole file has %d)", cut, len(c.data), len(got), len(want))
		}
	}
	bad := bytes.Clone(c.data)
	bad[len(bad)-1] ^= 0xff // the last sync marker
	if _, err := ourEntries(c.m, bad, false); err == nil {
		t.Error("an altered sync marker: no error")
	}
}

// TestReadListAgreesWithIcebergGoOnTheCorpus: every manifest list of the
// repository's tables decodes to the same manifest files, field by field,
// as iceberg-go's ReadManifestList, except v3 lists, which ReadList leaves
// to iceberg-go (ErrV3List); what iceberg-go refuses, ReadList refuses.
func TestReadListAgreesWithIcebergGoOnTheCorpus(t *testing.T) {
	root := testenv.RepoRoot(t)
	lists, compared, v3 := 0, 0, 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".avro") || !isManifestList(t, p) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lists++
		want, werr := iceberg.ReadManifestList(bytes.NewReader(b))
		got, gerr := ReadList(bytes.NewReader(b))
		switch {
		case errors.Is(gerr, ErrV3List):
			v3++
		case werr != nil && gerr == nil:
			t.Errorf("%s: iceberg-go refuses it (%v), ReadList does not", p, werr)
		case werr != nil:
		case gerr != nil:
			t.Errorf("%s: ReadList refuses what iceberg-go reads: %v", p, gerr)
		case len(got) != len(want):
			t.Errorf("%s: %d manifests, iceberg-go %d", p, len(got), len(want))
		default:
			for i := range want {
				if d := ListDifferences(want[i], got[i]); len(d) > 0 {
					t.Errorf("%s entry %d: %s", p, i, strings.Join(d, "; "))
				}
				compared++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if lists < 50 || compared < 100 {
		t.Fatalf("%d lists, %d entries compared: is the walk looking at the repository?", lists, compared)
	}
	t.Logf("%d manifest lists, %d entries compared, %d v3 lists left to iceberg-go", lists, compared, v3)
}
