package spark

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/icewright/icewright/diff"
)

// Plan renders the CALL that compacts one partition, or why Spark cannot
// be bounded to exactly that partition. It is pure: the plan calls it.
//
// Spark's rewrite_data_files selects the files of its where (converted to
// an Iceberg filter, projected on the partition spec) that its own size
// rules pick, and commits one replace with partial progress off. The where
// is an equality per identity field and a half-open range per time
// transform, whose projection on that transform is exactly the partition;
// the options repeat the policy's size rules, so Spark picks the files the
// plan counted.
func (e *Engine) Plan(d diff.Delegation) (diff.EnginePlan, string) {
	if d.OtherSpecs || d.SpecID != d.DefaultSpecID {
		// A where on the current spec's columns also selects the rows of
		// files written under another spec, and Spark writes its output
		// in the current spec: neither is this partition's rewrite.
		return diff.EnginePlan{}, fmt.Sprintf("the table has live data files in more than one partition spec (this partition is in spec %d, the current spec is %d): Spark's where would also select the other spec's files, and its output is written in the current spec", d.SpecID, d.DefaultSpecID)
	}
	var terms []string
	for _, v := range d.Partition {
		term, why := predicate(v)
		if why != "" {
			return diff.EnginePlan{}, why
		}
		if term != "" {
			terms = append(terms, term)
		}
	}
	filter := strings.Join(terms, " AND ")
	catalog := e.catalogFor(d.Catalog)
	tableName := qualified(append(append([]string{}, d.Namespace...), d.Table))
	args := []string{"table => " + literal(tableName)}
	switch d.Strategy {
	case "binpack", "":
		args = append(args, "strategy => 'binpack'")
	case "sort":
		order, why := sortOrder(d.SortOrder)
		if why != "" {
			return diff.EnginePlan{}, why
		}
		for _, f := range d.SortOrder {
			if why := orderable(d.Schema, f.Column, "sort", sortRefused); why != "" {
				return diff.EnginePlan{}, why
			}
		}
		args = append(args, "strategy => 'sort'", "sort_order => "+literal(order))
	case "zorder":
		cols := make([]string, len(d.ZOrderColumns))
		for i, c := range d.ZOrderColumns {
			if why := orderable(d.Schema, c, "z-order", zorderRefused); why != "" {
				return diff.EnginePlan{}, why
			}
			cols[i] = ident(c)
		}
		args = append(args, "strategy => 'sort'", "sort_order => "+literal("zorder("+strings.Join(cols, ",")+")"))
	default:
		return diff.EnginePlan{}, fmt.Sprintf("strategy %q has no Spark equivalent", d.Strategy)
	}
	if filter != "" {
		args = append(args, "where => "+literal(filter))
	}
	s := d.Selection
	opts := [][2]string{
		{"min-input-files", strconv.Itoa(max(s.MinInputFiles, 1))},
		{"target-file-size-bytes", strconv.FormatInt(s.Target, 10)},
		{"min-file-size-bytes", strconv.FormatInt(s.Min, 10)},
		{"max-file-size-bytes", strconv.FormatInt(s.Max, 10)},
		{"delete-file-threshold", strconv.Itoa(max(s.DeleteFileThreshold, 1))},
		// One commit for the call: apply checks exactly one new replace.
		{"partial-progress.enabled", "false"},
	}
	kv := make([]string, 0, 2*len(opts))
	for _, o := range opts {
		kv = append(kv, literal(o[0]), literal(o[1]))
	}
	args = append(args, "options => map("+strings.Join(kv, ", ")+")")
	return diff.EnginePlan{
		Statement: fmt.Sprintf("CALL %s.%s(%s)", ident(catalog), Procedure, strings.Join(args, ", ")),
		Target:    ident(catalog) + "." + tableName,
		Filter:    filter,
	}, ""
}

// predicate is the Spark SQL condition that holds exactly for the rows of
// one partition field's value ("" for a void field, which holds them all).
func predicate(v diff.PartitionValue) (string, string) {
	if v.Transform == "void" {
		return "", ""
	}
	if v.Column == "" {
		return "", fmt.Sprintf("partition field %s's source column is no longer in the table's schema (dropped): no Spark where selects its rows", v.Field)
	}
	if strings.Contains(v.Column, ".") {
		return "", fmt.Sprintf("partition field %s has the source column %q, nested in a struct or with a dot in its name, which icewright does not write as a Spark column reference", v.Field, v.Column)
	}
	col := ident(v.Column)
	if v.Null {
		// Every transform maps null to null and only null.
		return col + " IS NULL", ""
	}
	switch v.Transform {
	case "identity":
		lit, why := identityLiteral(v)
		if why != "" {
			return "", why
		}
		return col + " = " + lit, ""
	case "year", "month", "day", "hour":
		lo, hi, why := timeRange(v)
		if why != "" {
			return "", why
		}
		return fmt.Sprintf("%s >= %s AND %s < %s", col, lo, col, hi), ""
	}
	return "", fmt.Sprintf("partition field %s is %s(%s): a Spark where on the source column cannot select exactly the rows of one %s value", v.Field, v.Transform, v.Column, strings.SplitN(v.Transform, "[", 2)[0])
}

var decimalType = regexp.MustCompile(`^decimal\(\d+, ?\d+\)$`)

func identityLiteral(v diff.PartitionValue) (string, string) {
	switch {
	case v.Type == "string":
		return literal(v.Value), ""
	case v.Type == "int" || v.Type == "long":
		if _, err := strconv.ParseInt(v.Value, 10, 64); err != nil {
			return "", fmt.Sprintf("partition field %s holds %q, not a whole number", v.Field, v.Value)
		}
		return v.Value, ""
	case v.Type == "boolean":
		return strconv.FormatBool(v.Value == "true"), ""
	case decimalType.MatchString(v.Type):
		if !regexp.MustCompile(`^-?\d+(\.\d+)?$`).MatchString(v.Value) {
			return "", fmt.Sprintf("partition field %s holds %q, not a decimal", v.Field, v.Value)
		}
		return v.Value + "BD", ""
	case v.Type == "date":
		return "DATE " + literal(time.Unix(0, 0).UTC().AddDate(0, 0, int(v.Ordinal)).Format(time.DateOnly)), ""
	case v.Type == "timestamptz":
		return timestampLiteral(time.UnixMicro(v.Ordinal).UTC(), true), ""
	case v.Type == "timestamp":
		return timestampLiteral(time.UnixMicro(v.Ordinal).UTC(), false), ""
	}
	return "", fmt.Sprintf("partition field %s is an identity of a %s column, which icewright does not write as a Spark literal", v.Field, v.Type)
}

// timeRange is the half-open range of source values one year, month, day
// or hour value covers.
func timeRange(v diff.PartitionValue) (string, string, string) {
	epoch := time.Unix(0, 0).UTC()
	var lo, hi time.Time
	n := int(v.Ordinal)
	switch v.Transform {
	case "year":
		lo, hi = epoch.AddDate(n, 0, 0), epoch.AddDate(n+1, 0, 0)
	case "month":
		lo, hi = epoch.AddDate(0, n, 0), epoch.AddDate(0, n+1, 0)
	case "day":
		lo, hi = epoch.AddDate(0, 0, n), epoch.AddDate(0, 0, n+1)
	case "hour":
		lo, hi = epoch.Add(time.Duration(v.Ordinal)*time.Hour), epoch.Add(time.Duration(v.Ordinal+1)*time.Hour)
	}
	switch v.Type {
	case "date":
		if v.Transform == "hour" {
			break
		}
		return "DATE " + literal(lo.Format(time.DateOnly)), "DATE " + literal(hi.Format(time.DateOnly)), ""
	case "timestamptz":
		return timestampLiteral(lo, true), timestampLiteral(hi, true), ""
	case "timestamp":
		return timestampLiteral(lo, false), timestampLiteral(hi, false), ""
	}
	return "", "", fmt.Sprintf("partition field %s is %s(%s) of a %s column, which icewright does not write as a Spark range", v.Field, v.Transform, v.Column, v.Type)
}

// timestampLiteral writes a timestamptz with an explicit offset, so that
// the session time zone of the Spark server does not move it, and a
// timestamp without zone as TIMESTAMP_NTZ, which has none to move.
func timestampLiteral(t time.Time, zoned bool) string {
	if zoned {
		return "TIMESTAMP " + literal(t.Format("2006-01-02 15:04:05.000000")+"+00:00")
	}
	return "TIMESTAMP_NTZ " + literal(t.Format("2006-01-02 15:04:05.000000"))
}

func sortOrder(fields []diff.SortField) (string, string) {
	if len(fields) == 0 {
		return "", "strategy sort needs a sort order"
	}
	terms := make([]string, len(fields))
	for i, f := range fields {
		if f.Transform != "identity" && f.Transform != "" {
			return "", fmt.Sprintf("the sort order has the term %s; icewright gives Spark's sort_order only plain columns", f.String())
		}
		dir, nulls := "ASC", "NULLS LAST"
		if f.Descending {
			dir = "DESC"
		}
		if f.NullsFirst {
			nulls = "NULLS FIRST"
		}
		terms[i] = fmt.Sprintf("%s %s %s", ident(f.Column), dir, nulls)
	}
	return strings.Join(terms, ", "), ""
}

// zorderRefused says whether Spark's z-order (Iceberg's SparkZOrderUDF)
// refuses a column of this Iceberg type: it orders only the Spark types
// byte, short, int, long, float, double, string, binary, boolean, date,
// timestamp and timestamp_ntz, so decimal, time and the rest fail the
// rewrite at apply ("Cannot use column ... in ZOrdering").
func zorderRefused(typ string) bool {
	switch typ {
	case "int", "long", "float", "double", "string", "uuid", "binary", "boolean", "date", "timestamp", "timestamptz":
		return false
	}
	return !strings.HasPrefix(typ, "fixed[")
}

// sortRefused says whether Spark cannot sort by a column of this Iceberg
// type: types Spark has no type to read them as (time, nanosecond
// timestamps, geospatial) or cannot order (variant).
func sortRefused(typ string) bool {
	switch {
	case typ == "time", typ == "timestamp_ns", typ == "timestamptz_ns", typ == "variant",
		strings.HasPrefix(typ, "geometry"), strings.HasPrefix(typ, "geography"):
		return true
	}
	return false
}

// orderable is why Spark cannot order the rows by column (refused says
// which types it refuses), or "": the plan refuses what Spark would refuse
// at apply. A schema that was not observed is not checked.
func orderable(schema []diff.Column, column, what string, refused func(string) bool) string {
	for _, c := range schema {
		if c.Name == column {
			if refused(c.Type) {
				return fmt.Sprintf("column %s is a %s, which Spark's %s cannot order by", column, c.Type, what)
			}
			return ""
		}
	}
	return ""
}

var plainIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reserved are the words Spark's parser takes for keywords where a column
// reference would stand (ANSI mode's reserved list, the part a column is
// likely to be named after).
var reserved = map[string]bool{
	"all": true, "and": true, "any": true, "as": true, "between": true, "both": true, "case": true, "cast": true,
	"check": true, "column": true, "constraint": true, "create": true, "cross": true, "current_date": true,
	"current_time": true, "current_timestamp": true, "current_user": true, "distinct": true, "else": true,
	"end": true, "except": true, "false": true, "fetch": true, "for": true, "foreign": true, "from": true,
	"full": true, "grant": true, "group": true, "having": true, "in": true, "inner": true, "intersect": true,
	"interval": true, "into": true, "is": true, "join": true, "leading": true, "left": true, "like": true,
	"natural": true, "not": true, "null": true, "on": true, "only": true, "or": true, "order": true,
	"outer": true, "overlaps": true, "primary": true, "references": true, "right": true, "select": true,
	"session_user": true, "some": true, "table": true, "then": true, "to": true, "trailing": true,
	"true": true, "union": true, "unique": true, "user": true, "using": true, "when": true, "where": true,
	"with": true, "date": true, "timestamp": true,
}

// ident quotes an identifier with backticks when Spark would not read it
// as written.
func ident(name string) string {
	if plainIdent.MatchString(name) && !reserved[strings.ToLower(name)] {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

func qualified(parts []string) string {
	q := make([]string, len(parts))
	for i, p := range parts {
		q[i] = ident(p)
	}
	return strings.Join(q, ".")
}

// literal is a Spark SQL string literal: backslash escapes are on by
// default (spark.sql.parser.escapedStringLiterals=false), so a backslash
// and a quote are escaped with one.
func literal(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}
