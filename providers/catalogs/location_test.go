package catalogs

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestDecodeMetadataLocation: the location is read wherever the key stands
// (before or after a large metadata), and every answer that does not say
// one location for certain is refused: missing, null, not a string, empty,
// twice, in another case, malformed, truncated, trailing data, not an
// object.
func TestDecodeMetadataLocation(t *testing.T) {
	const meta = `{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://b/t",` +
		`"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"metadata-location","required":false,"type":"string"}]}],` +
		`"properties":{"metadata-location":"s3://b/t/metadata/not-this.json","x":"\"}{"},"snapshots":[]}`
	ok := []struct{ name, body, want string }{
		{"first", `{"metadata-location":"s3://b/t/metadata/00001-a.metadata.json","metadata":` + meta + `,"config":{}}`, "s3://b/t/metadata/00001-a.metadata.json"},
		{"after the metadata", `{"metadata":` + meta + `,"config":{"k":"v"},"metadata-location":"s3://b/t/metadata/00002-b.metadata.json"}`, "s3://b/t/metadata/00002-b.metadata.json"},
		{"escaped", `{"metadata-location":"s3://b/a.b/t%231/metadata/00003-\u00e9\"q.metadata.json","metadata":{}}`, "s3://b/a.b/t%231/metadata/00003-é\"q.metadata.json"},
		{"whitespace", "\n {\n \"metadata\" : [ 1, {\"a\": null} ] ,\n \"metadata-location\" : \"s3://x\"\n }\n\n", "s3://x"},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			got, isOK := decodeMetadataLocation(strings.NewReader(c.body))
			if !isOK || got != c.want {
				t.Errorf("got %q, %v; want %q", got, isOK, c.want)
			}
		})
	}
	unsure := map[string]string{
		"missing":         `{"metadata":` + meta + `}`,
		"only nested":     `{"metadata":{"metadata-location":"s3://nested"}}`,
		"null":            `{"metadata-location":null,"metadata":{}}`,
		"number":          `{"metadata-location":1,"metadata":{}}`,
		"object":          `{"metadata-location":{"a":"s3://x"},"metadata":{}}`,
		"empty":           `{"metadata-location":"","metadata":{}}`,
		"twice, same":     `{"metadata-location":"s3://x","metadata":{},"metadata-location":"s3://x"}`,
		"twice":           `{"metadata-location":"s3://x","metadata":{},"metadata-location":"s3://y"}`,
		"other case":      `{"metadata-location":"s3://x","Metadata-Location":"s3://y"}`,
		"other case only": `{"METADATA-LOCATION":"s3://y"}`,
		"malformed":       `{"metadata-location":"s3://x","metadata":{"a":}}`,
		"truncated":       `{"metadata-location":"s3://x","metadata":{"a":1`,
		"trailing":        `{"metadata-location":"s3://x"} {}`,
		"array":           `[{"metadata-location":"s3://x"}]`,
		"string":          `"s3://x"`,
		"empty answer":    ``,
	}
	for name, body := range unsure {
		t.Run(name, func(t *testing.T) {
			if got, isOK := decodeMetadataLocation(strings.NewReader(body)); isOK {
				t.Errorf("%s: took %q", body, got)
			}
		})
	}
}

// BenchmarkLoadAnswer: a load-table answer's metadata location, read
// (decodeMetadataLocation) against decoded as iceberg-go's LoadTable
// decodes the answer (the metadata parsed: table.ParseMetadataBytes), on a
// fixture's metadata of 11 KB.
func BenchmarkLoadAnswer(b *testing.B) {
	meta, err := os.ReadFile("../../internal/testdata/tables/iceberg-cxx-trino-dangling-deletes/metadata/00011-31179cfb-920d-47df-af37-7362d4028557.metadata.json")
	if err != nil {
		b.Fatal(err)
	}
	answer := []byte(`{"metadata-location":"s3://b/t/metadata/00011.metadata.json","metadata":` + string(meta) + `,"config":{}}`)
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := decodeMetadataLocation(bytes.NewReader(answer)); !ok {
				b.Fatal("no location")
			}
		}
	})
	b.Run("parsed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var a struct {
				Loc  string          `json:"metadata-location"`
				Meta json.RawMessage `json:"metadata"`
			}
			if err := json.NewDecoder(bytes.NewReader(answer)).Decode(&a); err != nil {
				b.Fatal(err)
			}
			if _, err := table.ParseMetadataBytes(a.Meta); err != nil {
				b.Fatal(err)
			}
		}
	})
}
