// Package engine is the seam between icewright's plan of a compaction and the
// engines that execute it (docs/design.md §5.4, docs/engines.md). A plan
// chooses an engine per partition: `local`, icewright's own streaming rewrite
// (providers/compact.Compact over providers/compaction), or an engine of
// an `engine` block, opened here. An engine plans a partition as a
// statement (diff.Engine, pure), runs it, and reads the rows apply's check
// compares; the check itself (reach.CheckSnapshots, the fingerprints) is
// the compact kind's, the same for every engine.
//
// Each engine is one descriptor in kinds (engine.go), keyed by its engine
// block's label: its remote URL's check (run with the configuration's
// checks, Diagnostics; a bad remote stops every command there) and its
// constructor. The engine's own package holds its settings, URL parsing
// and secret redaction (spark.CheckRemote, spark.RedactRemote); config
// keeps the block's raw values, its attributes and the labels it accepts
// (TestKindsAreConfigsEngines holds the two lists equal), and masks any
// URL parameter named like a secret from load on.
//
// It may import diff, config and its engines' packages. It is the only
// package that names an engine's package: adding Trino is a package beside
// spark and one line in kinds (and its label in config's engine table).
package engine
