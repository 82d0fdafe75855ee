package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/diff"
)

// runIn runs the CLI in-process with buffers, so a test can claim that a
// stream is a terminal (testscript's children never have one).
func runIn(t *testing.T, c *cli, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	c.stdout, c.stderr = &out, &errb
	if c.stdin == nil {
		c.stdin = strings.NewReader("")
	}
	if c.env == nil {
		c.env = map[string]string{}
	}
	if c.now == nil {
		c.now = func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }
	}
	code = c.run(args)
	return out.String(), errb.String(), code
}

func writeConfig(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const smallConfig = `
catalog "lake" {
  type = "sql"
  uri  = "sqlite:lake.db"
}

policy "base" {
  target_file_size = "512MiB"
}

table "lake.a.b" {
  policy = policy.base
}
`

func TestColourDecision(t *testing.T) {
	dir := writeConfig(t, smallConfig)
	cases := []struct {
		name string
		c    *cli
		args []string
		want bool
	}{
		{"terminal", &cli{stdoutTTY: true}, nil, true},
		{"not a terminal", &cli{stdoutTTY: false}, nil, false},
		{"NO_COLOR", &cli{stdoutTTY: true, env: map[string]string{"NO_COLOR": "1"}}, nil, false},
		{"empty NO_COLOR is unset", &cli{stdoutTTY: true, env: map[string]string{"NO_COLOR": ""}}, nil, true},
		{"TERM=dumb", &cli{stdoutTTY: true, env: map[string]string{"TERM": "dumb"}}, nil, false},
		{"-no-color", &cli{stdoutTTY: true}, []string{"-no-color"}, false},
		{"-no-color from ICEWRIGHT_CLI_ARGS", &cli{stdoutTTY: true, env: map[string]string{"ICEWRIGHT_CLI_ARGS_explain": "-no-color"}}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-chdir=" + dir, "explain"}, tc.args...)
			out, errOut, code := runIn(t, tc.c, append(args, "lake.a.b")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if got := strings.Contains(out, "\x1b["); got != tc.want {
				t.Errorf("colour = %v, want %v:\n%q", got, tc.want, out)
			}
		})
	}
}

// TestRestoreHonoursNoColor: restore renders through the views like every
// command, so -no-color (and NO_COLOR) turn its colour off; it used to
// accept the flag and ignore it.
func TestRestoreHonoursNoColor(t *testing.T) {
	dir := writeConfig(t, smallConfig)
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want bool
	}{
		{"terminal", nil, nil, true},
		{"-no-color", []string{"-no-color"}, nil, false},
		{"NO_COLOR", nil, map[string]string{"NO_COLOR": "1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"-chdir=" + dir, "restore"}, tc.args...), "20261130T120000Z", "lake.a.b")
			_, errOut, code := runIn(t, &cli{stdoutTTY: true, stderrTTY: true, env: tc.env}, args...)
			if code != exitError || !strings.Contains(errOut, "restore 20261130T120000Z lake.a.b") {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if got := strings.Contains(errOut, "\x1b["); got != tc.want {
				t.Errorf("colour = %v, want %v:\n%q", got, tc.want, errOut)
			}
		})
	}
}

func TestDiagnosticsColourFollowsStderr(t *testing.T) {
	dir := writeConfig(t, `policy "base" { target_file_size = "huge" }`)
	_, errOut, code := runIn(t, &cli{stderrTTY: true}, "-chdir="+dir, "validate")
	if code != exitError {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(errOut, "\x1b[") {
		t.Errorf("no colour on a terminal stderr: %q", errOut)
	}
	_, errOut, _ = runIn(t, &cli{stderrTTY: false}, "-chdir="+dir, "validate")
	if strings.Contains(errOut, "\x1b[") {
		t.Errorf("colour on a non-terminal stderr: %q", errOut)
	}
}

func TestPlanCheckCatchesBrokenDocuments(t *testing.T) {
	snap := int64(7)
	p := diff.Plan{
		FormatVersion: diff.FormatVersion, IcewrightVersion: "0.1.0", CreatedAt: time.Now(), ConfigDigest: "sha256:x",
		Tables: []diff.TablePlan{{
			Address:  "a.b.c",
			Observed: diff.Observed{TableUUID: "u", MetadataLocation: "m", CurrentSnapshotID: &snap},
			Actions: []diff.Action{
				{Type: diff.Compact, Reason: "r", Compact: &diff.CompactAction{Strategy: "binpack"}},
				{Type: diff.ExpireSnapshots, Destructive: true, Reason: "r", Expire: &diff.ExpireAction{SnapshotIDs: []int64{1}}},
			},
		}},
		Errors: []diff.TableError{},
	}
	diff.Summarize(&p)
	doc := func(mut func(m map[string]any)) any {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if mut != nil {
			mut(m)
		}
		return m
	}
	if err := checkPlanDoc(doc(nil)); err != nil {
		t.Fatalf("valid plan rejected: %v", err)
	}
	action := func(m map[string]any, i int) map[string]any {
		return m["tables"].([]any)[0].(map[string]any)["actions"].([]any)[i].(map[string]any)
	}
	bad := map[string]func(m map[string]any){
		"major version":   func(m map[string]any) { m["format_version"] = "1.1" },
		"no digest":       func(m map[string]any) { delete(m, "config_digest") },
		"not destructive": func(m map[string]any) { action(m, 1)["destructive"] = false },
		"no reason":       func(m map[string]any) { action(m, 0)["reason"] = "" },
		"missing payload": func(m map[string]any) { delete(action(m, 1), "snapshot_ids") },
		"out of order": func(m map[string]any) {
			l := m["tables"].([]any)[0].(map[string]any)["actions"].([]any)
			l[0], l[1] = l[1], l[0]
		},
		"summary disagrees": func(m map[string]any) { m["summary"].(map[string]any)["actions"] = json.Number("5") },
		"unknown action":    func(m map[string]any) { action(m, 0)["type"] = "vacuum" },
		"observed uuid gone": func(m map[string]any) {
			delete(m["tables"].([]any)[0].(map[string]any)["observed"].(map[string]any), "table_uuid")
		},
	}
	for name, mut := range bad {
		if err := checkPlanDoc(doc(mut)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestCommandTable: every command has a synopsis, a help that starts with
// its usage line and has examples or options, and is listed by the main
// help; `help NAME` prints it; a near-miss is suggested.
func TestCommandTable(t *testing.T) {
	if len(commands()) == 0 {
		t.Fatal("no commands")
	}
	seen := map[string]bool{}
	for _, c := range commands() {
		if seen[c.name] {
			t.Errorf("command %q twice", c.name)
		}
		seen[c.name] = true
		if c.synopsis == "" || c.run == nil {
			t.Errorf("command %q lacks a synopsis or a runner", c.name)
		}
		if !strings.Contains(c.help, "icewright") || !strings.Contains(c.help, c.name) || !strings.HasPrefix(c.help, "Usage: ") {
			t.Errorf("command %q: help does not start with its usage line: %.60q", c.name, c.help)
		}
		if !strings.Contains(mainHelp(), "\n  "+c.name+" ") {
			t.Errorf("main help does not list %q", c.name)
		}
		var out bytes.Buffer
		if code := run([]string{"help", c.name}, strings.NewReader(""), &out, &out, nil); code != 0 || out.String() != c.help {
			t.Errorf("icewright help %s: exit %d, %.60q", c.name, code, out.String())
		}
		if got := suggest(c.name[:len(c.name)-1]+"x", commandNames()); got != c.name {
			t.Errorf("suggest(%q) = %q, want %q", c.name[:len(c.name)-1]+"x", got, c.name)
		}
	}
	for name := range commandHelp {
		if !seen[name] {
			t.Errorf("help text for %q, which is not in the command table", name)
		}
	}
}

// TestVersionFromModule: a binary from `go install …@version` has no VCS
// stamp; a pseudo-version still names the commit and its time.
func TestVersionFromModule(t *testing.T) {
	for _, tc := range []struct{ v, commit, date string }{
		{"v0.1.1-0.20261201120304-abcdef123456", "abcdef123456", "2026-12-01T12:03:04Z"},
		{"v0.0.0-20261130235959-0123456789ab", "0123456789ab", "2026-11-30T23:59:59Z"},
		{"v0.1.0", "", ""},
		{"(devel)", "", ""},
		{"", "", ""},
	} {
		commit, date := fromModuleVersion(tc.v)
		if commit != tc.commit || date != tc.date {
			t.Errorf("fromModuleVersion(%q) = %q, %q; want %q, %q", tc.v, commit, date, tc.commit, tc.date)
		}
	}
}
