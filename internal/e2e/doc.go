// Package e2e holds icewright's end-to-end tests: plan → apply → plan on real
// catalogs (sqlite, PostgreSQL, an Iceberg REST catalog) and real object
// storage (local files, S3), on tables iceberg-go writes, on the
// Spark-written fixtures in internal/testdata/tables, and on tables Spark and
// PyIceberg write during the run (testdata/writers, driven by the foreign_*
// tests, which also compare icewright's expiry and orphan plans with Spark's
// procedures), including a server stopped in the middle of an apply.
//
// The servers come from scripts/services.sh through internal/testenv; without
// them the tests skip (or fail under ICEWRIGHT_REQUIRE_SERVICES=1).
package e2e
