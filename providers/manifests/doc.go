// Package manifests is the home of the rewrite_manifests action kind
// (diff/manifests.go decides it from the manifest counts of the current
// snapshot's aggregate): Kind, and Rewrite, which merges the current
// snapshot's manifests with iceberg-go's RewriteManifests, holds the staged
// snapshot to the commit check (exactly the same live files) and commits
// it asserting main has not moved. Compaction calls Rewrite first when a
// format v3 table's files lack row ids.
package manifests
