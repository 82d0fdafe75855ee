// Package manifestread decodes Iceberg manifests for the read-only walks
// (providers/internal/reach): a plan's observation, the sweep's referenced
// set at plan, the expiry estimate, the compaction aggregate.
//
// Why not iceberg-go's reader: iceberg-go v0.7.0 opens every manifest with
// twmb/avro's ocf.NewReader, which parses the writer schema in the file's
// header again for every file, although the manifests of a table (and of
// most tables of a fleet) carry the same schema: on a fleet plan that was
// about a third of the CPU. Here the header is read by hand (bounded: a
// corrupt file is an error, never a huge allocation), each distinct writer
// schema is parsed, projected to the fields the walks read and resolved
// once (a bounded cache keyed by the schema's bytes), and the blocks are
// decoded with twmb/avro (its codecs and its resolved-schema decoding,
// which skips the fields left out: column statistics, split offsets, key
// metadata) into iceberg-go's own ManifestEntry, built with its exported
// constructors, so the consumers see the types they always saw. ReadList
// does the same for v1 and v2 manifest lists (into iceberg-go's
// ManifestFile; a v3 list's first_row_id has no exported setter, so
// iceberg-go reads those).
//
// It is a fast path, not an authority: a file is deleted only on the word
// of iceberg-go's own reader. reach.Spec.Decoder chooses; its zero value
// is iceberg-go, and only the plan's walks choose this one; any error here
// sends the manifest back to iceberg-go's reader.
package manifestread
