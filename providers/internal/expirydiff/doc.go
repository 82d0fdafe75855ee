// Package expirydiff holds the differential test between diff.SelectExpired
// and iceberg-go's own Transaction.ExpireSnapshots. It lives under providers
// because it imports iceberg-go, which diff must not; it has no code of its
// own.
package expirydiff
