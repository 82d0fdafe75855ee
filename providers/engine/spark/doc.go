// Package spark is the Spark executor of compaction (docs/engines.md): it
// renders the rewrite_data_files CALL of a delegated partition (Plan,
// pure) and runs it and the row fingerprints apply's check needs over
// Spark Connect. remote.go owns the engine block's remote: its form
// (CheckRemote, sc://host:port/;param=value) and the token's redaction in
// the messages the engine composes (RedactRemote).
//
// It drives Spark Connect through github.com/apache/spark-connect-go (the
// pseudo-version in go.mod is the one that resolves here): it speaks the
// protocol, its session runs SQL and collects rows through arrow-go, which
// we use already, and a client of our own over the gRPC protocol would
// repeat it. It may import diff and config; nothing of ours imports it but
// the seam, providers/engine.
package spark
