package catalogs

import (
	"slices"
	"testing"

	"github.com/icewright/icewright/config"
)

// TestTypesAreConfigs: config accepts a catalog type for each descriptor
// types holds, and for no other (the two halves of each catalog type).
func TestTypesAreConfigs(t *testing.T) {
	if got, want := Names(), slices.Sorted(slices.Values(config.CatalogTypes())); !slices.Equal(got, want) {
		t.Fatalf("providers/catalogs has %v, config accepts %v", got, want)
	}
	for _, n := range Names() {
		if types[n].open == nil {
			t.Errorf("catalog type %q has no open", n)
		}
	}
}
