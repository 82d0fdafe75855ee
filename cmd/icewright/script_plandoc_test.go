package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/icewright/icewright/cmd/icewright/internal/views"
)

// checkPlanDoc holds a plan's actions to diff's order and destructiveness
// of kinds: a plan in order passes, actions out of order, a wrong
// destructive flag and an unknown kind each fail.
func TestCheckPlanDocKinds(t *testing.T) {
	doc := func(actions string) any {
		src := `{"format_version":"2.0","icewright_version":"test","created_at":"2026-12-03T00:00:00Z","config_digest":"sha256:00",
"tables":[{"address":"lake.ns.t","observed":{"table_uuid":"u","metadata_location":"m"},"actions":[` + actions + `]}],
"summary":{"actions":2,"destructive_actions":1,"tables_changed":1}}`
		d := json.NewDecoder(strings.NewReader(src))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	props := `{"type":"update_properties","destructive":false,"reason":"r","set":{},"before":{}}`
	expire := `{"type":"expire_snapshots","destructive":true,"reason":"r","snapshot_ids":[],"files_to_delete":0,"bytes_to_delete":0}`
	if err := checkPlanDoc(doc(props + "," + expire)); err != nil {
		t.Fatalf("plan in order: %v", err)
	}
	for name, c := range map[string]struct{ actions, want string }{
		"out of order": {expire + "," + props, "out of order"},
		"destructive":  {props + "," + strings.Replace(expire, `"destructive":true`, `"destructive":false`, 1), "destructive = false"},
		"unknown kind": {props + "," + strings.Replace(expire, "expire_snapshots", "touch_toy", 1), `unknown action type "touch_toy"`},
	} {
		if err := checkPlanDoc(doc(c.actions)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", name, err, c.want)
		}
	}
}

// TestPlanFormatListsEventTypes: docs/plan-format.md's apply -json section
// names every type of the event stream and every field of an event line.
func TestPlanFormatListsEventTypes(t *testing.T) {
	raw, err := os.ReadFile("../../docs/plan-format.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(raw), "\n## apply -json\n")
	section, _, _ = strings.Cut(section, "\n## ")
	for _, typ := range views.EventTypes() {
		if !strings.Contains(section, "`"+typ+"`") {
			t.Errorf("the apply -json section does not name the event type %s", typ)
		}
	}
	for _, f := range views.EventFields() {
		if !strings.Contains(section, "`"+f+"`") {
			t.Errorf("the apply -json section does not document the event field %s", f)
		}
	}
}
