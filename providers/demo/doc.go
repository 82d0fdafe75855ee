// Package demo builds the lakehouse `icewright demo` creates: a sqlite SQL
// catalog, three tables with the maintenance debt the quickstart shows
// (small files, old snapshots, an unsorted table, orphans, a stray non-Iceberg
// file), the configuration that manages them, and what to run next. It
// shares the catalog and time-machine pieces with the test kit through
// internal/lakehouse, and never prints.
package demo
