package objdel

import (
	"fmt"
	"strconv"
	"time"
)

// The catalog properties that pace deletions from the catalog's storage
// (docs/catalogs.md, Deleting in batches): expiry's released files, the
// orphan sweep, the quarantine purge. Unset, Settings' defaults hold.
const (
	BatchSizeProperty   = "icewright.delete-batch-size"
	ConcurrencyProperty = "icewright.delete-concurrency"
	CooldownProperty    = "icewright.delete-cooldown"
)

// ParseSettings reads the icewright.delete-* properties of catalog
// name (also checked with the configuration, providers.ConfigDiagnostics).
func ParseSettings(name string, p map[string]string) (Settings, error) {
	var set Settings
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
	if set.BatchSize, err = positive(BatchSizeProperty); err != nil {
		return set, err
	}
	if set.Concurrency, err = positive(ConcurrencyProperty); err != nil {
		return set, err
	}
	if v, ok := p[CooldownProperty]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return set, fmt.Errorf("catalog %s: property %s = %q: want a duration such as \"200ms\"", name, CooldownProperty, v)
		}
		set.Cooldown = d
	}
	return set, nil
}
