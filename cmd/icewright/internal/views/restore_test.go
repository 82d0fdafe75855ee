package views

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/icewright/icewright/diff"
)

func TestRestore(t *testing.T) {
	res := diff.RestoreResult{RunID: "20261130T120000Z", Bytes: 30,
		Restored:     []diff.QuarantinedFile{{Original: "/t/data/a.parquet", Size: 30}},
		Refused:      []string{"/t/data/b.parquet: a file exists there; not overwritten"},
		NotHeld:      []string{"/t/data/c.parquet"},
		ManifestKept: "1 file is not back"}
	var plain, coloured bytes.Buffer
	if err := Restore(&plain, "lake.a.t", res, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	want := `Restored 1 file (30 bytes) of quarantine run 20261130T120000Z to lake.a.t.
  + /t/data/a.parquet
Not restored (1), still in the quarantine:
  ! /t/data/b.parquet: a file exists there; not overwritten
Listed but never held by this run (not moved by it, not at their original path), left alone (1):
  ? /t/data/c.parquet
The run's manifest is kept: 1 file is not back.

Note: no snapshot of lake.a.t references the restored files, so the next plan finds them again as orphan files and its apply would quarantine them again. To keep them, add their paths (relative to the table location) to orphan_files.exclude, or add them to the table.
`
	if plain.String() != want {
		t.Errorf("got\n%s\nwant\n%s", plain.String(), want)
	}
	if err := Restore(&coloured, "lake.a.t", res, NewStyles(true)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(coloured.String(), "\x1b[32m+\x1b[0m") || !strings.Contains(coloured.String(), "\x1b[31;1m!") {
		t.Errorf("no colour with colour on: %q", coloured.String())
	}

	var js bytes.Buffer
	if err := RestoreJSON(&js, "lake.a.t", diff.RestoreResult{RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["address"] != "lake.a.t" || doc["refused"] == nil || doc["restored"] == nil {
		t.Errorf("document %s", js.String())
	}
}
