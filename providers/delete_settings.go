package providers

import (
	"fmt"
	"strconv"
	"time"

	"github.com/iceops/iceops/providers/internal/objdel"
)

// The catalog properties that pace deletions from the catalog's storage
// (docs/catalogs.md, Deleting in batches): expiry's released files, the
// orphan sweep, the quarantine purge. They belong to the storage the
// catalog's tables live on, as the request timeout does, and change
// nothing a plan shows.
const (
	DeleteBatchSizeProperty   = "iceops.delete-batch-size"
	DeleteConcurrencyProperty = "iceops.delete-concurrency"
	DeleteCooldownProperty    = "iceops.delete-cooldown"
)

// deleteSettings reads the deletion pacing of catalog name; unset
// properties keep objdel's defaults, a malformed one is an error (a
// configuration error first: ConfigDiagnostics).
func (s *Session) deleteSettings(name string) (objdel.Settings, error) {
	cc, err := s.catalogConfig(name)
	if err != nil {
		return objdel.Settings{}, err
	}
	return parseDeleteSettings(name, cc.Properties)
}

// parseDeleteSettings reads the iceops.delete-* properties of catalog
// name (also checked with the configuration, ConfigDiagnostics).
func parseDeleteSettings(name string, p map[string]string) (objdel.Settings, error) {
	var set objdel.Settings
	var err error
	positive := func(key string) (int, error) {
		v, ok := p[key]
		if !ok {
			return 0, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("catalog %s: property %s = %q: want a whole number above 0", name, key, v)
		}
		return n, nil
	}
	if set.BatchSize, err = positive(DeleteBatchSizeProperty); err != nil {
		return set, err
	}
	if set.Concurrency, err = positive(DeleteConcurrencyProperty); err != nil {
		return set, err
	}
	if v, ok := p[DeleteCooldownProperty]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return set, fmt.Errorf("catalog %s: property %s = %q: want a duration such as \"200ms\"", name, DeleteCooldownProperty, v)
		}
		set.Cooldown = d
	}
	return set, nil
}
