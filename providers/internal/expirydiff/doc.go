// Package expirydiff holds differential tests of diff against iceberg-go:
// diff.SelectExpired against Transaction.ExpireSnapshots, and diff's
// compaction selection and packing against compaction.Config.PlanCompaction.
// It lives under providers because it imports iceberg-go, which diff must
// not; it has no code of its own.
package expirydiff
