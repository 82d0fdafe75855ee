package providers

import (
	"context"

	"github.com/icewright/icewright/providers/internal/objdel"
	"github.com/icewright/icewright/providers/internal/reach"
)

// The catalog properties that pace deletions (objdel.ParseSettings) and
// manifest reads (reach.ParsePace), named here for the configuration's
// checks and tests. They belong to the storage the catalog's tables live
// on, as the request timeout does, and change nothing a plan shows.
const (
	DeleteBatchSizeProperty        = objdel.BatchSizeProperty
	DeleteConcurrencyProperty      = objdel.ConcurrencyProperty
	DeleteCooldownProperty         = objdel.CooldownProperty
	ManifestReadPauseProperty      = reach.PauseProperty
	ManifestReadPauseEveryProperty = reach.PauseEveryProperty
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
	p, err := reach.ParsePace(name, cc.Properties)
	if err != nil {
		return ctx, err
	}
	p.Sleep = s.sleep
	return reach.WithPace(ctx, p), nil
}

// deleteSettings reads the deletion pacing of catalog name; unset
// properties keep objdel's defaults, a malformed one is an error (a
// configuration error first: ConfigDiagnostics).
func (s *Session) deleteSettings(name string) (objdel.Settings, error) {
	cc, err := s.catalogConfig(name)
	if err != nil {
		return objdel.Settings{}, err
	}
	return objdel.ParseSettings(name, cc.Properties)
}
