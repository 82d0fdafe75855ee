// Package catalogs opens the catalogs a configuration declares through
// iceberg-go: sql on sqlite or PostgreSQL (with icewright's own sqlite handle,
// see internal/lakehouse), rest, glue, hive and hadoop, and
// registers the object stores (s3, gs, abfs; file is built in); Walk lists
// every table of one. The session in providers opens them lazily, one per
// name. Each catalog type is one descriptor (Type, in types.go): how it
// opens, whether iceberg-go names its metadata files, and doctor's probes
// of it. It also reads a SQL catalog database's iceberg_tables rows
// directly (SQLTableRows, and SQLTableRowsOf for one table under the key
// iceberg-go stores its namespace by), and a table's current metadata
// location without parsing its metadata (MetadataLocation: for REST, the
// load-table answer's "metadata-location", read by the transport the REST
// catalog is opened with).
package catalogs
