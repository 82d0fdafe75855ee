package compaction

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// A column added after data was written is read, from the files that lack
// it, as its initial-default (spec: column projection). Metadata JSON
// holds a default in the spec's single-value form: a JSON bool or number,
// or a string for date ("2003-10-20"), time, timestamps, decimal, uuid and
// hex-encoded fixed/binary. iceberg-go v0.7.0 decodes it into `any` as it
// is (bool, float64, string) and its scanner then fails on every string
// form of a numeric type ("unsupported write-default value type string"),
// so a table PyIceberg evolved this way cannot be read at all. typedDefault
// turns the decoded value into the Go value iceberg-go's scanner takes for
// the type, and readerTable hands the scanner a schema with such defaults
// (at any depth: a field added inside a struct too).
//
// A JSON number for an int or long passes through float64: beyond 2^53 the
// decoded value may not be the one written, and a commit writes the
// float64 back in its shortest form, another number (-2^63, exact as a
// float64, is written as -9223372036854776000, which is no long at all).
// Reading takes such a number from the metadata file's text (exactDefaults);
// DefaultsProblem makes the plan refuse every commit to the table.

// maxExactInt is 2^53: float64 holds every integer of smaller magnitude
// exactly, and from it on a decoded number may be another one rounded.
const maxExactInt = 1 << 53

// typedDefault converts a default as iceberg-go decoded it from metadata
// JSON (a float64 or a string where the type wants another Go value) to
// the value its scanner takes for t; any other value (a bool, or a value a
// Go writer set already typed) is left as it is. exact, when not empty, is
// the number's text in the metadata file (for int and long beyond 2^53).
func typedDefault(v any, t iceberg.Type, exact json.Number) (any, error) {
	switch x := v.(type) {
	case float64:
		switch t.(type) {
		case iceberg.Int32Type, iceberg.Int64Type:
			n, err := intDefault(x, exact)
			if err != nil {
				return nil, err
			}
			if _, ok := t.(iceberg.Int32Type); ok {
				if n < math.MinInt32 || n > math.MaxInt32 {
					return nil, fmt.Errorf("default %d is out of range for int", n)
				}
				return int32(n), nil
			}
			return n, nil
		case iceberg.Float32Type:
			return float32(x), nil
		}
	case string:
		switch tt := t.(type) {
		case iceberg.StringType:
		case iceberg.FixedType, iceberg.BinaryType:
			b, err := hex.DecodeString(x)
			if err != nil {
				return nil, fmt.Errorf("default %q of %s is not hex: %w", x, t, err)
			}
			if fx, isFixed := tt.(iceberg.FixedType); isFixed && len(b) != fx.Len() {
				return nil, fmt.Errorf("default %q has %d bytes, %s holds %d", x, len(b), t, fx.Len())
			}
			return b, nil
		case iceberg.PrimitiveType:
			// date, time, timestamps, decimal, uuid: iceberg-go's own
			// string literal casts parse the spec's forms.
			lit, err := iceberg.NewLiteral(x).To(tt)
			if err != nil {
				return nil, fmt.Errorf("default %q of %s: %w", x, t, err)
			}
			return lit.Any(), nil
		}
	}
	return v, nil
}

// intDefault is an int or long default: exact's text when given, else the
// decoded float64 if it holds an integer that float64 cannot have rounded.
func intDefault(f float64, exact json.Number) (int64, error) {
	if exact != "" {
		n, err := strconv.ParseInt(string(exact), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("default %s is not a long: %w", exact, err)
		}
		return n, nil
	}
	if f != math.Trunc(f) {
		return 0, fmt.Errorf("default %v is not an integer", f)
	}
	if math.Abs(f) >= maxExactInt {
		// 2^53+1 decodes as 2^53: from 2^53 on, the float64 may not be
		// the number written.
		return 0, fmt.Errorf("default %v is not below 2^53 and was read through float64: its exact value is unknown", f)
	}
	return int64(f), nil
}

// typedSchema is sc with every initial and write default typed
// (typedDefault); exact holds the metadata text of large int/long defaults
// by field id.
func typedSchema(sc *iceberg.Schema, exact map[int]json.Number) (*iceberg.Schema, error) {
	fields, changed, err := typedFields(sc.Fields(), exact)
	if err != nil || !changed {
		return sc, err
	}
	return iceberg.NewSchemaWithIdentifiers(sc.ID, sc.IdentifierFieldIDs, fields...), nil
}

func typedFields(in []iceberg.NestedField, exact map[int]json.Number) ([]iceberg.NestedField, bool, error) {
	out := make([]iceberg.NestedField, len(in))
	changed := false
	for i, f := range in {
		var err error
		if st, ok := f.Type.(*iceberg.StructType); ok {
			sub, subChanged, serr := typedFields(st.FieldList, exact)
			if serr != nil {
				return nil, false, serr
			}
			if subChanged {
				f.Type = &iceberg.StructType{FieldList: sub}
				changed = true
			}
		}
		if f.InitialDefault != nil || f.WriteDefault != nil {
			if f.InitialDefault, err = typedDefault(f.InitialDefault, f.Type, exact[f.ID]); err == nil {
				f.WriteDefault, err = typedDefault(f.WriteDefault, f.Type, exact[f.ID])
			}
			if err != nil {
				return nil, false, fmt.Errorf("column %s (field id %d): %w", f.Name, f.ID, err)
			}
			changed = true
		}
		out[i] = f
	}
	return out, changed, nil
}

// largeIntDefaults lists the int/long fields of sc (at any depth) whose
// default decoded at 2^53 or beyond, the only ones float64 may have
// rounded.
func largeIntDefaults(sc *iceberg.Schema) []int {
	var ids []int
	walkFields(sc.Fields(), func(f iceberg.NestedField) {
		switch f.Type.(type) {
		case iceberg.Int32Type, iceberg.Int64Type:
		default:
			return
		}
		for _, v := range []any{f.InitialDefault, f.WriteDefault} {
			if x, ok := v.(float64); ok && math.Abs(x) >= maxExactInt {
				ids = append(ids, f.ID)
				return
			}
		}
	})
	return ids
}

// exactDefaults reads the current schema's large int/long defaults from
// the metadata file's text (json.Number keeps every digit). It reads the
// file only when there is such a default. rounded names those whose text
// differs from what iceberg-go decoded.
func exactDefaults(ctx context.Context, tbl *table.Table) (exact map[int]json.Number, rounded []string, err error) {
	sc := tbl.Schema()
	ids := largeIntDefaults(sc)
	if len(ids) == 0 {
		return nil, nil, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("open table io: %w", err)
	}
	f, err := fsys.Open(tbl.MetadataLocation())
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", tbl.MetadataLocation(), err)
	}
	raw, err := io.ReadAll(f)
	_ = f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", tbl.MetadataLocation(), err)
	}
	var md struct {
		CurrentSchemaID int               `json:"current-schema-id"`
		Schemas         []json.RawMessage `json:"schemas"`
		Schema          json.RawMessage   `json:"schema"` // format v1
	}
	if err := json.Unmarshal(raw, &md); err != nil {
		return nil, nil, fmt.Errorf("parse %s: %w", tbl.MetadataLocation(), err)
	}
	type rawField struct {
		ID             int             `json:"id"`
		Name           string          `json:"name"`
		Type           json.RawMessage `json:"type"`
		InitialDefault any             `json:"initial-default"`
		WriteDefault   any             `json:"write-default"`
	}
	type rawStruct struct {
		SchemaID int        `json:"schema-id"`
		Fields   []rawField `json:"fields"`
	}
	decode := func(b []byte, v any) error {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		return d.Decode(v)
	}
	exact = map[int]json.Number{}
	byID := map[int]rawField{}
	var walk func([]rawField)
	walk = func(fields []rawField) {
		for _, f := range fields {
			byID[f.ID] = f
			if len(f.Type) > 0 && f.Type[0] == '{' {
				var st rawStruct
				if decode(f.Type, &st) == nil {
					walk(st.Fields)
				}
			}
		}
	}
	for _, s := range append(md.Schemas, md.Schema) {
		var st rawStruct
		if len(s) == 0 || decode(s, &st) != nil || (st.SchemaID != sc.ID && len(md.Schemas) > 0) {
			continue
		}
		walk(st.Fields)
		break
	}
	for _, id := range ids {
		rf, ok := byID[id]
		if !ok {
			continue
		}
		decoded, _ := sc.FindFieldByID(id)
		for _, pair := range [][2]any{{rf.InitialDefault, decoded.InitialDefault}, {rf.WriteDefault, decoded.WriteDefault}} {
			n, ok := pair[0].(json.Number)
			if !ok {
				continue
			}
			exact[id] = n
			// What a commit writes back is encoding/json's shortest form
			// of the float64 (-2^63 becomes -9223372036854776000, out of
			// a long's range for Java): another number unless the texts
			// agree, and the text must be a long at all.
			f, isFloat := pair[1].(float64)
			_, perr := strconv.ParseInt(string(n), 10, 64)
			if perr != nil || (isFloat && strconv.FormatFloat(f, 'f', -1, 64) != string(n)) {
				if msg := fmt.Sprintf("%s (field id %d) = %s", rf.Name, id, n); !slices.Contains(rounded, msg) {
					rounded = append(rounded, msg)
				}
			}
		}
	}
	return exact, rounded, nil
}

// DefaultsProblem is why no commit may touch tbl because of its column
// defaults ("" when none): an int or long default at or beyond 2^53 that
// iceberg-go holds as a float64, which every commit writes back into the
// schema as another number.
func DefaultsProblem(ctx context.Context, tbl *table.Table) (string, error) {
	_, rounded, err := exactDefaults(ctx, tbl)
	if err != nil || len(rounded) == 0 {
		return "", err
	}
	return fmt.Sprintf("the default of %s is an integer not below 2^53, which iceberg-go holds as a float64: every commit would write the schema back with another number there; "+
		"icewright commits nothing to this table. Give the column a default below 2^53 (9007199254740992) in magnitude with another engine (Spark, PyIceberg), or compact the table with one", strings.Join(rounded, ", ")), nil
}
