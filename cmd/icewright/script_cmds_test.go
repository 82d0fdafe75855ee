package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/icewright/icewright/diff"
)

type scriptCmd = func(ts *testscript.TestScript, neg bool, args []string)

// scriptCmds are the domain commands the scripts use for assertions.
// Assertions compare parsed values, not bytes, where the output has fields
// that legitimately vary (times, ids, paths). Real tables come from the
// product itself: scripts run `icewright demo`, which makes them with real
// iceberg-go commits.
func scriptCmds() map[string]scriptCmd {
	return map[string]scriptCmd{
		"jsoneq":     cmdJSONEq,
		"jsonnorm":   cmdJSONNorm,
		"textnorm":   cmdTextNorm,
		"clocknorm":  cmdClockNorm,
		"plancheck":  cmdPlanCheck,
		"summaryeq":  cmdSummaryEq,
		"jsonlines":  cmdJSONLines,
		"fixtures":   cmdFixtures,
		"restserver": cmdRESTServer,
	}
}

// planLine is the text plan's summary when there are changes: errors
// first ("Error: 2 tables and 1 selector could not be planned; 1 table has
// refused actions."), then the plan's figures.
var planLine = regexp.MustCompile(`(?m)^(?:Error: (?:(\d+) tables?)?(?: and )?(?:(\d+) selectors?)?(?: could not be planned)?(?:; )?(?:(\d+) tables? ha(?:s|ve) refused actions)?\. )?` +
	`Plan: (\d+) tables? to change \((\d+) actions?, (\d+) destructive\), (\d+) tables? in policy\.$`)

// summaryeq TEXT JSON: the Plan: line of the text plan has the figures of
// the JSON plan's summary (what `plan -json | jq .summary` shows).
func cmdSummaryEq(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: summaryeq TEXT JSON")
	}
	m := planLine.FindStringSubmatch(string(readArg(ts, args[0])))
	if m == nil {
		ts.Fatalf("%s has no Plan: line", args[0])
	}
	doc, _ := decodeJSON(ts, args[1]).(map[string]any)
	sum, _ := doc["summary"].(map[string]any)
	errs := 0
	for _, g := range m[1:4] {
		n, _ := strconv.Atoi(g) // "" when the line has no such part
		errs += n
	}
	got := append(m[4:8:8], strconv.Itoa(errs))
	for i, k := range []string{"tables_changed", "actions", "destructive_actions", "tables_in_policy", "errors"} {
		n, _ := sum[k].(json.Number)
		if n.String() != got[i] {
			ts.Fatalf("text says %s %s, JSON summary.%s = %s", k, got[i], k, n)
		}
	}
}

// readArg reads a script file, or the last command's output for the
// names stdout/stderr.
// jsonlines FILE: apply -json's stream. Every line is one JSON object; the
// first is the version line; every line but the last is an event with
// type, timestamp (RFC 3339), level and message; the last is the results
// document (type "results", format_version, tables, summary).
func cmdJSONLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: jsonlines FILE")
	}
	lines := strings.Split(strings.TrimSuffix(string(readArg(ts, args[0])), "\n"), "\n")
	if len(lines) < 2 {
		ts.Fatalf("%s has %d lines; want a version line, events and the results", args[0], len(lines))
	}
	for i, line := range lines {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			ts.Fatalf("%s line %d is not a JSON object: %v\n%s", args[0], i+1, err, line)
		}
		if i == len(lines)-1 {
			if obj["type"] != "results" {
				ts.Fatalf("%s: the last line has type %v, want \"results\":\n%s", args[0], obj["type"], line)
			}
			for _, k := range []string{"format_version", "tables", "summary"} {
				if _, ok := obj[k]; !ok {
					ts.Fatalf("%s: the last line is not the results document (no %q):\n%s", args[0], k, line)
				}
			}
			continue
		}
		for _, k := range []string{"type", "timestamp", "level", "message"} {
			if v, _ := obj[k].(string); v == "" {
				ts.Fatalf("%s line %d has no %q:\n%s", args[0], i+1, k, line)
			}
		}
		if _, err := time.Parse(time.RFC3339Nano, obj["timestamp"].(string)); err != nil {
			ts.Fatalf("%s line %d: timestamp: %v", args[0], i+1, err)
		}
		if i == 0 && obj["type"] != "version" {
			ts.Fatalf("%s: the first line is %q, not the version line", args[0], obj["type"])
		}
	}
}

func readArg(ts *testscript.TestScript, name string) []byte {
	return []byte(ts.ReadFile(name))
}

func decodeJSON(ts *testscript.TestScript, name string) any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(readArg(ts, name)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		ts.Fatalf("%s is not one JSON document: %v", name, err)
	}
	if dec.More() {
		ts.Fatalf("%s holds more than one JSON document", name)
	}
	return v
}

// jsoneq A B [-ignore=key,key]: A and B are equal JSON values once the
// named keys are removed at every depth.
func cmdJSONEq(ts *testscript.TestScript, neg bool, args []string) {
	var ignore []string
	var files []string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "-ignore="); ok {
			ignore = strings.Split(v, ",")
			continue
		}
		files = append(files, a)
	}
	if len(files) != 2 {
		ts.Fatalf("usage: jsoneq [-ignore=k1,k2] A B")
	}
	a, b := dropKeys(decodeJSON(ts, files[0]), ignore), dropKeys(decodeJSON(ts, files[1]), ignore)
	eq := reflect.DeepEqual(a, b)
	if eq && neg {
		ts.Fatalf("%s and %s are equal", files[0], files[1])
	}
	if !eq && !neg {
		ja, _ := json.MarshalIndent(a, "", "  ")
		jb, _ := json.MarshalIndent(b, "", "  ")
		ts.Logf("%s:\n%s\n%s:\n%s", files[0], ja, files[1], jb)
		ts.Fatalf("%s and %s differ", files[0], files[1])
	}
}

func dropKeys(v any, keys []string) any {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range keys {
			delete(x, k)
		}
		for k, e := range x {
			x[k] = dropKeys(e, keys)
		}
	case []any:
		for i, e := range x {
			x[i] = dropKeys(e, keys)
		}
	}
	return v
}

// volatileKeys vary from run to run; jsonnorm replaces their values so a
// golden can hold the rest of the document exactly.
var volatileKeys = map[string]string{
	"created_at":                   "<time>",
	"checksum":                     "<checksum>",
	"config_digest":                "<digest>",
	"policy_digest":                "<policy-digest>",
	"table_uuid":                   "<uuid>",
	"metadata_location":            "<metadata>",
	"current_snapshot_id":          "<snapshot-id>",
	"snapshot_id":                  "<snapshot-id>",
	"oldest_snapshot_timestamp_ms": "<timestamp>",
	"bytes_to_delete":              "<bytes>",
	"duration_ms":                  "<duration>",
	"started_at":                   "<time>",
	"finished_at":                  "<time>",
}

// jsonnorm IN OUT: rewrite IN into OUT with volatile values replaced,
// snapshot id lists replaced by their length, and $WORK in strings
// replaced, then printed with sorted keys.
func cmdJSONNorm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonnorm IN OUT")
	}
	v := normJSON(decodeJSON(ts, args[0]), ts.Getenv("WORK"))
	out, err := json.MarshalIndent(v, "", "  ")
	ts.Check(err)
	ts.Check(writeFile(ts, args[1], append(out, '\n')))
}

func normJSON(v any, work string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch {
			case volatileKeys[k] != "" && e != nil:
				x[k] = volatileKeys[k]
			case strings.HasSuffix(k, "_usd") && e != nil:
				// Money follows the estimate's bytes, which vary by a few
				// (above); the text view's amounts are rounded to cents.
				x[k] = "<usd>"
			case k == "estimate":
				// An estimate's bytes count the table's manifests and the
				// files expiry frees, whose sizes vary by a few bytes as
				// bytes_to_delete's do; its counts and memory come from the
				// data files and hold. Its CPU-seconds count the metadata
				// files' bytes too (MetadataCPUPerByte, and their stored
				// size varies by a few bytes from run to run): they are
				// compared at the text view's two decimals.
				if m, ok := e.(map[string]any); ok {
					for _, b := range []string{"bytes_read", "bytes_written", "bytes_freed"} {
						if _, ok := m[b]; ok {
							m[b] = "<bytes>"
						}
					}
					if n, ok := m["cpu_seconds"].(json.Number); ok {
						if c, err := n.Float64(); err == nil {
							m["cpu_seconds"] = math.Round(c*100) / 100
						}
					}
				}
				x[k] = normJSON(e, work)
			case k == "snapshot_ids":
				if list, ok := e.([]any); ok {
					x[k] = fmt.Sprintf("<%d ids>", len(list))
				}
			case k == "files":
				// A compaction group's files: their order is the packer's
				// and their sizes follow the clock by a few bytes
				// (demo_clocks); plancheck holds the count to input_files.
				if list, ok := e.([]any); ok {
					x[k] = fmt.Sprintf("<%d files>", len(list))
				} else {
					x[k] = normJSON(e, work)
				}
			case k == "paths" || k == "non_iceberg_paths":
				if list, ok := e.([]any); ok {
					x[k] = sortedStrings(normJSON(list, work).([]any))
				}
			default:
				x[k] = normJSON(e, work)
			}
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normJSON(e, work)
		}
		return x
	case string:
		return normText(x, work)
	}
	return v
}

func sortedStrings(list []any) []any {
	sort.Slice(list, func(i, j int) bool { return fmt.Sprint(list[i]) < fmt.Sprint(list[j]) })
	return list
}

var (
	longID   = regexp.MustCompile(`\b\d{12,20}\b`)
	uuidRe   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	durSecs  = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s|µs)\b`)
	metaFile = regexp.MustCompile(`\d{5}-[^/\s"]+\.metadata\.json`)
)

func normText(s, work string) string {
	if work != "" {
		s = strings.ReplaceAll(s, work, "$WORK")
	}
	s = uuidRe.ReplaceAllString(s, "<uuid>")
	s = metaFile.ReplaceAllString(s, "<n>-<uuid>.metadata.json")
	return longID.ReplaceAllString(s, "<id>")
}

var (
	spaces  = regexp.MustCompile(`  +`)
	sizes   = regexp.MustCompile(`\b\d+(\.\d+)? (B|KiB|MiB|GiB)\b`)
	freesRe = regexp.MustCompile(`frees (\S+ files?) \([^)]*\)`)
)

// textnorm [-table] IN OUT: IN with $WORK, uuids, snapshot ids, timings
// and the bytes of expired metadata (manifest lists and manifests embed
// ids and times, so their sizes vary by a few bytes) replaced. -table also
// replaces every size and squeezes the column padding of result tables,
// whose widths depend on the timings.
func cmdTextNorm(ts *testscript.TestScript, neg bool, args []string) {
	table := len(args) > 0 && args[0] == "-table"
	if table {
		args = args[1:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: textnorm [-table] IN OUT")
	}
	s := normText(string(readArg(ts, args[0])), ts.Getenv("WORK"))
	s = durSecs.ReplaceAllString(s, "<t>")
	s = freesRe.ReplaceAllString(s, "frees $1 (<bytes>)")
	s = normCostLines(s)
	if table {
		lines := strings.Split(s, "\n")
		inTable := false
		for i, l := range lines {
			inTable = inTable || strings.HasPrefix(l, "TABLE ")
			if inTable {
				lines[i] = spaces.ReplaceAllString(sizes.ReplaceAllString(l, "<size>"), "  ")
			}
		}
		s = strings.Join(lines, "\n")
	}
	ts.Check(writeFile(ts, args[1], []byte(s)))
}

var (
	costLine  = regexp.MustCompile(`^(\s+(cost|total):|Cost:|\*\*Cost:\*\*)`)
	freedCell = regexp.MustCompile(`\| \d+(\.\d+)? (B|KiB|MiB|GiB) freed \|`)
)

// normCostLines replaces the sizes on the plan's cost lines (the text's
// cost:, total: and Cost:, Markdown's Cost:) and squeezes their column
// padding, and the bytes of Markdown's Saves cells. Those bytes count manifests and manifest
// lists, which embed random snapshot ids, so they vary by a few bytes from
// one demo to the next; requests and CPU-seconds do not (CPU-seconds come
// from the bytes of the data files and the fixed rate table in diff).
func normCostLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if !costLine.MatchString(l) {
			lines[i] = freedCell.ReplaceAllString(l, "| <size> freed |")
			continue
		}
		l = sizes.ReplaceAllString(l, "<size>")
		lead := len(l) - len(strings.TrimLeft(l, " "))
		lines[i] = l[:lead] + spaces.ReplaceAllString(l[lead:], " ")
	}
	return strings.Join(lines, "\n")
}

var (
	dateRe      = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`)
	jsonBytesRe = regexp.MustCompile(`("\w*bytes\w*"): \d+`)
	// An estimate's CPU-seconds follow its input bytes.
	jsonCPURe = regexp.MustCompile(`("cpu_seconds"): [0-9.e+-]+`)
	// Money follows the bytes and CPU-seconds.
	jsonUSDRe = regexp.MustCompile(`("\w*_usd"): [0-9.e+-]+`)
)

// clocknorm FILE: FILE with every YYYY-MM-DD, every size ("54.6 KiB") and
// every JSON bytes figure ("input_bytes", "bytes_read") and CPU-seconds (an
// estimate's, from the data's bytes) replaced, in place. It compares demos built
// at different clocks: their data's timestamps differ, so do the
// compressed sizes, by a few bytes; everything else must be equal.
func cmdClockNorm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: clocknorm FILE")
	}
	s := dateRe.ReplaceAllString(string(readArg(ts, args[0])), "<date>")
	s = sizes.ReplaceAllString(s, "<size>")
	s = jsonBytesRe.ReplaceAllString(s, "$1: <bytes>")
	s = jsonCPURe.ReplaceAllString(s, "$1: <cpu>")
	s = jsonUSDRe.ReplaceAllString(s, "$1: <usd>")
	ts.Check(writeFile(ts, args[0], []byte(s)))
}

func writeFile(ts *testscript.TestScript, name string, data []byte) error {
	return os.WriteFile(ts.MkAbs(name), data, 0o644)
}

// plancheck FILE: FILE is a plan document of docs/design.md §5.2: every required
// key with the right JSON type, every action with its payload, actions in
// the docs/design.md §5.1 order, and a summary that agrees with the tables.
func cmdPlanCheck(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: plancheck FILE")
	}
	err := checkPlanDoc(decodeJSON(ts, args[0]))
	if err != nil && !neg {
		ts.Fatalf("%s: %v", args[0], err)
	}
	if err == nil && neg {
		ts.Fatalf("%s: plan document is valid", args[0])
	}
}

// actionFields are the fields docs/plan-format.md promises for each kind
// (a kind without a row promises none beyond the common ones); the order
// and destructiveness of kinds are diff's (diff.ActionType.Order,
// Destructive), so a new kind needs no row here.
var actionFields = map[string][]string{
	"update_properties":   {"set", "before"},
	"replace_sort_order":  {"before", "after"},
	"compact":             {"strategy", "input_files", "input_bytes", "partitions", "estimated_output_files"},
	"rewrite_manifests":   {"manifests_before", "estimated_manifests_after"},
	"expire_snapshots":    {"snapshot_ids", "files_to_delete", "bytes_to_delete"},
	"remove_orphan_files": {"count", "bytes", "paths"},
}

// checkGroupFiles: each compaction group names as many files as it counts
// (format 2.0).
func checkGroupFiles(action map[string]any) error {
	groups, _ := action["groups"].([]any)
	for i, g := range groups {
		gm, _ := g.(map[string]any)
		files, ok := gm["files"].([]any)
		n, _ := gm["input_files"].(json.Number)
		want, err := n.Int64()
		if !ok || err != nil || int64(len(files)) != want {
			return fmt.Errorf("group %d names %d files for input_files %v", i+1, len(files), gm["input_files"])
		}
	}
	return nil
}

func checkPlanDoc(v any) error {
	doc, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("not an object")
	}
	fv, _ := doc["format_version"].(string)
	major, _, _ := strings.Cut(diff.FormatVersion, ".")
	if !strings.HasPrefix(fv, major+".") {
		return fmt.Errorf("format_version %q, want %s.x", doc["format_version"], major)
	}
	for _, k := range []string{"icewright_version", "created_at", "config_digest"} {
		if s, _ := doc[k].(string); s == "" {
			return fmt.Errorf("%s missing or not a string", k)
		}
	}
	if d := doc["config_digest"].(string); !strings.HasPrefix(d, "sha256:") {
		return fmt.Errorf("config_digest %q is not sha256:...", d)
	}
	tables, ok := doc["tables"].([]any)
	if !ok {
		return fmt.Errorf("tables is not an array")
	}
	if _, ok := doc["errors"].([]any); !ok && doc["errors"] != nil {
		return fmt.Errorf("errors is not an array")
	}
	var actions, destructive, changed int
	for _, t := range tables {
		tm, ok := t.(map[string]any)
		if !ok {
			return fmt.Errorf("table is not an object")
		}
		addr, _ := tm["address"].(string)
		if addr == "" {
			return fmt.Errorf("table without address")
		}
		obs, ok := tm["observed"].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: observed missing", addr)
		}
		for _, k := range []string{"table_uuid", "metadata_location"} {
			if s, _ := obs[k].(string); s == "" {
				return fmt.Errorf("%s: observed.%s missing", addr, k)
			}
		}
		list, ok := tm["actions"].([]any)
		if !ok && tm["actions"] != nil {
			return fmt.Errorf("%s: actions is not an array", addr)
		}
		if len(list) > 0 {
			changed++
		}
		last := 0
		for _, a := range list {
			am, _ := a.(map[string]any)
			typ, _ := am["type"].(string)
			pos := diff.ActionType(typ).Order()
			if pos == 0 {
				return fmt.Errorf("%s: unknown action type %q", addr, typ)
			}
			if pos <= last {
				return fmt.Errorf("%s: %s out of order", addr, typ)
			}
			last = pos
			d, ok := am["destructive"].(bool)
			if !ok {
				return fmt.Errorf("%s: %s.destructive missing", addr, typ)
			}
			if want := diff.ActionType(typ).Destructive(); d != want {
				return fmt.Errorf("%s: %s.destructive = %v", addr, typ, d)
			}
			if r, _ := am["reason"].(string); r == "" {
				return fmt.Errorf("%s: %s has no reason", addr, typ)
			}
			for _, f := range actionFields[typ] {
				if _, ok := am[f]; !ok {
					return fmt.Errorf("%s: %s.%s missing", addr, typ, f)
				}
			}
			if err := checkGroupFiles(am); typ == string(diff.Compact) && err != nil {
				return fmt.Errorf("%s: %s: %w", addr, typ, err)
			}
			actions++
			if d {
				destructive++
			}
		}
	}
	sum, ok := doc["summary"].(map[string]any)
	if !ok {
		return fmt.Errorf("summary missing")
	}
	for k, want := range map[string]int{"actions": actions, "destructive_actions": destructive, "tables_changed": changed} {
		n, _ := sum[k].(json.Number)
		got, err := n.Int64()
		if err != nil || int(got) != want {
			return fmt.Errorf("summary.%s = %v, tables say %d", k, sum[k], want)
		}
	}
	return nil
}
