package providers

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/icewright/icewright/providers/internal/objdel"
	"github.com/icewright/icewright/providers/internal/reach"
)

// The catalog properties that pace deletions from the catalog's storage
// (docs/catalogs.md, Deleting in batches): expiry's released files, the
// orphan sweep, the quarantine purge. They belong to the storage the
// catalog's tables live on, as the request timeout does, and change
// nothing a plan shows.
const (
	DeleteBatchSizeProperty   = "icewright.delete-batch-size"
	DeleteConcurrencyProperty = "icewright.delete-concurrency"
	DeleteCooldownProperty    = "icewright.delete-cooldown"
)

// The catalog properties that pace the reading of manifests (the
// referenced set of the orphan sweep, expiry's walks, the plan's): a pause
// of icewright.manifest-read-pause after every icewright.manifest-read-pause-every
// entries read (default 1,500). Unset or zero, nothing pauses.
const (
	ManifestReadPauseProperty      = "icewright.manifest-read-pause"
	ManifestReadPauseEveryProperty = "icewright.manifest-read-pause-every"
)

// withReadPace returns ctx carrying the manifest read pacing of catalog
// name (reach.WithPace): every walk of that catalog's tables with it
// pauses as the properties say. A catalog not configured paces nothing
// (opening it fails on its own).
func (s *Session) withReadPace(ctx context.Context, name string) (context.Context, error) {
	cc, err := s.catalogConfig(name)
	if err != nil {
		return ctx, nil
	}
	p, err := parseReadPace(name, cc.Properties)
	if err != nil {
		return ctx, err
	}
	p.Sleep = s.sleep
	return reach.WithPace(ctx, p), nil
}

// parseReadPace reads the icewright.manifest-read-pause* properties of
// catalog name (also checked with the configuration, ConfigDiagnostics).
func parseReadPace(name string, p map[string]string) (reach.Pace, error) {
	var pace reach.Pace
	if v, ok := p[ManifestReadPauseProperty]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return pace, fmt.Errorf("catalog %s: property %s = %q: want a duration such as \"100ms\"", name, ManifestReadPauseProperty, v)
		}
		pace.Pause = d
	}
	if v, ok := p[ManifestReadPauseEveryProperty]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return pace, fmt.Errorf("catalog %s: property %s = %q: want a whole number above 0", name, ManifestReadPauseEveryProperty, v)
		}
		pace.Every = n
	}
	return pace, nil
}

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

// parseDeleteSettings reads the icewright.delete-* properties of catalog
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
