package manifestread

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/twmb/avro"
	"github.com/twmb/avro/atype"
)

// plan is what one distinct writer schema (with the manifest's partition
// spec, which may mark day-transform fields as dates) decodes with: the
// writer schema resolved against the projection of the fields we read,
// and how partition values turn into iceberg-go's types.
type plan struct {
	schema *avro.Schema
	// v1Snapshot: a v1 writer whose snapshot_id is not a union (iceberg-go's
	// "fallback" entry).
	v1Snapshot bool
	nameToID   map[string]int
	idToType   map[int]string
	idToScale  map[int]int
}

// maxPlans bounds each cache of plans: a fleet's tables share a handful of
// schemas (one per partition layout and format version), so this is
// plenty; past it, an arbitrary plan is dropped.
const maxPlans = 256

// cache holds what was built from one distinct schema, at most maxPlans.
type cache[T any] struct {
	mu sync.Mutex
	m  map[string]*T
}

// get returns key's value, building it with build the first time.
func (c *cache[T]) get(key string, build func() (*T, error)) (*T, error) {
	c.mu.Lock()
	v := c.m[key]
	c.mu.Unlock()
	if v != nil {
		return v, nil
	}
	v, err := build()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*T{}
	}
	if len(c.m) >= maxPlans {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[key] = v
	return v, nil
}

// plans caches a plan by the bytes of the writer schema and the manifest's
// partition-spec metadata.
var plans cache[plan]

// planFor returns the plan of a manifest's header, parsing the schema only
// the first time it is seen.
func planFor(meta map[string][]byte) (*plan, error) {
	schema, ok := meta["avro.schema"]
	if !ok {
		return nil, errors.New("the Avro header has no avro.schema")
	}
	spec := meta["partition-spec"]
	return plans.get(string(schema)+"\x00"+string(spec), func() (*plan, error) { return newPlan(string(schema), spec) })
}

// Parsed counts the writer schemas parsed (tests: once per distinct one).
var parsed struct {
	sync.Mutex
	n int
}

// readFields are the data_file fields decoded: what the walk's consumers
// read (paths, sizes, counts, partition, content, and what a delete file
// or a v3 file carries). The column statistics, split offsets, key
// metadata and block size are skipped.
func readField(name string) bool {
	switch name {
	case "content", "file_path", "file_format", "partition", "record_count", "file_size_in_bytes",
		"equality_ids", "sort_order_id", "first_row_id", "referenced_data_file", "content_offset",
		"content_size_in_bytes":
		return true
	}
	return false
}

func newPlan(schemaJSON string, specJSON []byte) (*plan, error) {
	parsed.Lock()
	parsed.n++
	parsed.Unlock()
	writer, err := avro.Parse(schemaJSON)
	if err != nil {
		return nil, fmt.Errorf("parse the manifest's Avro schema: %w", err)
	}
	root := *writer.Root()
	if root.Type != "record" {
		return nil, fmt.Errorf("the manifest's Avro schema is a %q, not a record", root.Type)
	}
	p := &plan{}
	fields := make([]avro.SchemaField, 0, len(root.Fields))
	var dataFile *avro.SchemaNode
	for _, f := range root.Fields {
		switch f.Name {
		case "snapshot_id":
			p.v1Snapshot = f.Type.Type != atype.Union
		case "data_file":
			df := f.Type
			if df.Type != "record" {
				return nil, fmt.Errorf("manifest entry data_file has unexpected Avro type %q", df.Type)
			}
			kept := make([]avro.SchemaField, 0, len(df.Fields))
			for _, g := range df.Fields {
				if readField(g.Name) {
					kept = append(kept, g)
				}
			}
			df.Fields = kept
			f.Type = df
			dataFile = &df
		}
		fields = append(fields, f)
	}
	if dataFile == nil {
		return nil, errors.New("manifest entry schema does not contain a data_file field")
	}
	root.Fields = fields
	reader, err := root.Schema()
	if err != nil {
		return nil, fmt.Errorf("project the manifest's Avro schema: %w", err)
	}
	if p.schema, err = avro.Resolve(writer, reader); err != nil {
		return nil, fmt.Errorf("resolve the manifest's Avro schema: %w", err)
	}
	p.partitionTypes(dataFile, specJSON)
	return p, nil
}

// partitionTypes records, for each partition field, its id and logical
// type, as iceberg-go's reader does (getFieldIDMap,
// applyDayTransformDates in manifest.go), so that values convert the same.
func (p *plan) partitionTypes(dataFile *avro.SchemaNode, specJSON []byte) {
	p.nameToID, p.idToType, p.idToScale = map[string]int{}, map[int]string{}, map[int]int{}
	for _, f := range dataFile.Fields {
		if f.Name != "partition" {
			continue
		}
		for _, pf := range f.Type.Fields {
			id, ok := fieldID(pf)
			if !ok {
				continue
			}
			p.nameToID[pf.Name] = id
			t := pf.Type
			if t.Type == atype.Union {
				t = t.Branches[len(t.Branches)-1]
			}
			if t.LogicalType != "" {
				p.idToType[id] = t.LogicalType
				if t.LogicalType == atype.Decimal {
					p.idToScale[id] = t.Scale
				}
			}
		}
	}
	if len(specJSON) == 0 {
		return
	}
	var spec []iceberg.PartitionField
	if json.Unmarshal(specJSON, &spec) != nil {
		return
	}
	for _, f := range spec {
		if _, ok := f.Transform.(iceberg.DayTransform); ok {
			p.idToType[f.FieldID] = atype.Date
		}
	}
}

// fieldID is a field's Iceberg "field-id" property (as iceberg-go's
// schemaFieldID reads it).
func fieldID(f avro.SchemaField) (int, bool) {
	switch v := f.Props["field-id"].(type) {
	case float64:
		return int(v), true
	case int:
		return v, true
	case int64:
		return int(v), true
	}
	return 0, false
}
