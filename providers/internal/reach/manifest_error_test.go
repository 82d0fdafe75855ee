package reach

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
)

type namedManifest struct {
	iceberg.ManifestFile
	path string
}

func (m namedManifest) FilePath() string { return m.path }

// TestManifestReadErrorSaysWhatToDo: iceberg-go's refusal of a manifest whose
// own metadata disagrees with the manifest list (Trino's delete manifests
// without 'content') gets a sentence with the remedy; other errors are only
// wrapped with the manifest's path. Both keep the cause for errors.Is.
func TestManifestReadErrorSaysWhatToDo(t *testing.T) {
	m := namedManifest{path: "s3://b/t/metadata/x-m1.avro"}
	cause := errors.New(`manifest file's 'content' metadata indicates "data", but entry from manifest list indicates "deletes"`)
	err := manifestReadError(m, cause)
	for _, want := range []string{"read manifest s3://b/t/metadata/x-m1.avro: ", "'content' key", "neither plan nor change this table", "rewrite_manifests"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if !errors.Is(err, cause) {
		t.Error("the cause is lost")
	}
	other := errors.New("unexpected EOF")
	if err := manifestReadError(m, other); err.Error() != "read manifest s3://b/t/metadata/x-m1.avro: unexpected EOF" || !errors.Is(err, other) {
		t.Errorf("other error: %v", err)
	}
}
