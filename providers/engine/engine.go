// Package engine is the seam between icewright' plan of a compaction and the
// engines that execute it (docs/design.md §5.4, docs/engines.md). A plan
// chooses an engine per partition: `local`, icewright' own streaming rewrite
// (providers/compact.Compact over providers/compaction, which shares the session's
// aggregate and commit check and so stays in providers), or an engine of
// an `engine` block, opened here. An engine plans a partition as a
// statement (diff.Engine, pure), runs it, and reads the rows apply's check
// compares; the check itself (reach.CheckSnapshots, the fingerprints) is
// the session's, the same for every engine.
//
// It may import diff, config and its engines' packages. It is the only
// package that names an engine's package: adding Trino is one more case in
// Open and a package beside spark.
package engine

import (
	"context"
	"fmt"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/engine/spark"
)

// Local is the name of icewright' own rewrite (config.LocalEngine).
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

// Open returns the engine of an engine block. Nothing is contacted until
// it runs something.
func Open(e *config.Engine) (Engine, error) {
	switch e.Name {
	case spark.Name:
		return spark.New(e), nil
	}
	return nil, fmt.Errorf("engine %q is not one icewright can run", e.Name)
}
