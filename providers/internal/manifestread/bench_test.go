package manifestread

import "testing"

// BenchmarkManifestDecode decodes every manifest of the repository's
// fixtures (245 manifests, 43 distinct schemas, 5,417 entries) from
// memory: iceberg-go's reader as the walk used it (EntriesWithProjection's
// reader), against Read (schemas parsed once, fewer fields).
//
//	go test ./providers/internal/manifestread -run '^$' -bench ManifestDecode -benchmem
func BenchmarkManifestDecode(b *testing.B) {
	ms := corpus(b)
	var readable []corpusManifest
	for _, c := range ms {
		if _, err := icebergEntries(c.m, c.data); err == nil {
			readable = append(readable, c)
		}
	}
	b.Run("iceberg-go", func(b *testing.B) {
		for b.Loop() {
			for _, c := range readable {
				if _, err := icebergEntries(c.m, c.data); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("manifestread", func(b *testing.B) {
		for b.Loop() {
			for _, c := range readable {
				if _, err := ourEntries(c.m, c.data, false); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
