package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/engine/spark"
)

// Local is the name of icewright's own rewrite (config.LocalEngine).
const Local = config.LocalEngine

// Engine executes delegated partitions.
type Engine interface {
	diff.Engine
	// Run sends one planned call; the result is the engine's own account
	// of it, for the apply's result. An error carries the engine's message.
	Run(ctx context.Context, call diff.EngineCall) (string, error)
	// Fingerprint reads the rows of the call's partition in one snapshot.
	Fingerprint(ctx context.Context, call diff.EngineCall, snapshotID int64) (diff.RowFingerprint, error)
	// Doctor checks the endpoint for `icewright doctor`, without rewriting
	// anything: that it answers (within ctx's deadline), its version, and
	// for each catalog it would be given a table of (labels: icewright
	// catalog labels) that the catalog and its rewrite procedure exist.
	Doctor(ctx context.Context, labels []string) []diff.DoctorFinding
	Close() error
}

// kind is one engine's descriptor.
type kind struct {
	// checkRemote says why a remote is not one the engine can use.
	checkRemote func(remote string) error
	// open makes the engine of a block; nothing is contacted until it
	// runs something.
	open func(*config.Engine) Engine
}

// kinds are the engines icewright can delegate to, by engine block label:
// one line per engine.
var kinds = map[string]kind{
	spark.Name: {spark.CheckRemote, func(e *config.Engine) Engine { return spark.New(e) }},
}

// Names are the labels of the engines kinds holds, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(kinds))
}

// Diagnostics are the errors of the configuration's engine blocks that
// need their engine's knowledge: a remote the engine cannot use, at the
// remote attribute (providers.ConfigDiagnostics runs it with the other
// checks config cannot make). An unknown label is config's error already.
func Diagnostics(cfg *config.Config) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, e := range cfg.Engines {
		k, ok := kinds[e.Name]
		if !ok || e.RemoteRange.Filename == "" {
			continue
		}
		if err := k.checkRemote(e.Remote); err != nil {
			rng := e.RemoteRange
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid engine remote", Detail: err.Error() + ".", Subject: &rng})
		}
	}
	return diags
}

// Open returns the engine of an engine block. Nothing is contacted until
// it runs something.
func Open(e *config.Engine) (Engine, error) {
	k, ok := kinds[e.Name]
	if !ok {
		return nil, fmt.Errorf("engine %q is not one icewright can run", e.Name)
	}
	return k.open(e), nil
}
