package examples

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/icewright/icewright/internal/testenv"
)

// ciScript is what both pipelines in ci/ call for every shell step.
const ciScript = "ci/icewright-ci.sh"

// planMarker is the first line of `show -format=markdown`
// (cmd/icewright/internal/views.PlanMarker, which this package cannot import);
// the script reads it from the comment body, and this checks it is there.
const planMarker = "<!-- icewright-plan -->"

// ciRun is one run of icewright-ci.sh.
type ciRun struct {
	code           int
	stdout, stderr string
}

type ciEnv struct {
	t      *testing.T
	script string
	dir    string // the job's working directory
	env    []string
}

func newCIEnv(t *testing.T) *ciEnv {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("the CI script needs bash: %v", err)
	}
	script, err := filepath.Abs(ciScript)
	if err != nil {
		t.Fatal(err)
	}
	bin := installedIcewright(t)
	dir := t.TempDir()
	// A job starts without any of the variables the script reads.
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "PATH" || strings.HasPrefix(name, "ICEWRIGHT") || strings.HasPrefix(name, "GITHUB_") || strings.HasPrefix(name, "CI_") {
			continue
		}
		env = append(env, kv)
	}
	// icewright is found on PATH, as the pipelines install it: no ICEWRIGHT.
	env = append(env, "PATH="+filepath.Dir(bin)+string(filepath.ListSeparator)+os.Getenv("PATH"),
		"NO_COLOR=1", "ICEWRIGHT_DIR=lake", "GITHUB_OUTPUT="+filepath.Join(dir, "github-output"))
	demo := exec.Command(bin, "demo", filepath.Join(dir, "lake"))
	demo.Env = env
	if out, err := demo.CombinedOutput(); err != nil {
		t.Fatalf("icewright demo: %v\n%s", err, out)
	}
	return &ciEnv{t: t, script: script, dir: dir, env: env}
}

func (c *ciEnv) run(step string, extraEnv ...string) ciRun {
	c.t.Helper()
	cmd := exec.Command("bash", c.script, step)
	cmd.Dir = c.dir
	cmd.Env = append(append([]string{}, c.env...), extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code, err := testenv.ExitCode(cmd.Run())
	if err != nil {
		c.t.Fatalf("run %s: %v", step, err)
	}
	r := ciRun{code: code, stdout: out.String(), stderr: errb.String()}
	c.t.Logf("icewright-ci.sh %s: exit %d\n--- stdout\n%s--- stderr\n%s", step, r.code, r.stdout, r.stderr)
	return r
}

// mustRun runs a step that has to succeed.
func (c *ciEnv) mustRun(step string, extraEnv ...string) ciRun {
	c.t.Helper()
	r := c.run(step, extraEnv...)
	if r.code != 0 {
		c.t.Fatalf("icewright-ci.sh %s: exit %d, want 0", step, r.code)
	}
	return r
}

func (c *ciEnv) read(name string) string {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, name))
	if err != nil {
		c.t.Fatal(err)
	}
	return string(b)
}

// lastOutput is the last value the script gave the step output name.
func (c *ciEnv) lastOutput(name string) string {
	c.t.Helper()
	v := ""
	for _, line := range strings.Split(c.read("github-output"), "\n") {
		if k, val, ok := strings.Cut(line, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// TestCIScript runs the pipelines' shell steps, as the jobs run them, on the
// demo lakehouse: check, plan (exit 2 of -detailed-exitcode is success), the
// comment written to a file without a token, apply of the saved plan, and
// the next plan empty (exit 0 of -detailed-exitcode is success too).
func TestCIScript(t *testing.T) {
	c := newCIEnv(t)
	c.mustRun("check")

	c.mustRun("plan")
	if got := c.lastOutput("changes"); got != "true" {
		t.Errorf("changes = %q after a plan with changes, want true", got)
	}
	md := c.read("icewright-plan.md")
	if !strings.HasPrefix(md, planMarker+"\n") || strings.Count(md, planMarker) != 1 {
		t.Errorf("the comment does not start with the marker, once:\n%s", md)
	}
	for _, want := range []string{
		"| Table | Actions | Destructive | To rewrite | To delete |",
		"| `demo.analytics.events` |",
		"| `demo.analytics.clicks` |",
		"<details>",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the comment has no %q:\n%s", want, md)
		}
	}
	if _, err := os.Stat(filepath.Join(c.dir, "icewright.plan")); err != nil {
		t.Fatalf("no plan file for the artifact: %v", err)
	}

	r := c.run("comment")
	if r.code != 0 || !strings.Contains(r.stdout, "no token; the comment body is in icewright-plan.md") {
		t.Errorf("comment without a token: exit %d, stdout %q", r.code, r.stdout)
	}
	if c.read("icewright-plan.md") != md {
		t.Error("comment without a token changed the comment body")
	}

	c.mustRun("apply")
	c.mustRun("plan")
	if got := c.lastOutput("changes"); got != "false" {
		t.Errorf("changes = %q after apply, want false", got)
	}
	if md := c.read("icewright-plan.md"); !strings.HasPrefix(md, planMarker+"\n") || !strings.Contains(md, "No changes.") {
		t.Errorf("the comment after apply does not say there is nothing to do:\n%s", md)
	}
	if r := c.run("apply", "ICEWRIGHT_APPLY_MODE=replan"); r.code != 0 || !strings.Contains(r.stdout, "nothing to apply") {
		t.Errorf("replan on tables in policy: exit %d, stdout %q", r.code, r.stdout)
	}

	// Exit 1 of -detailed-exitcode fails the job: the catalog is gone.
	if err := os.Remove(filepath.Join(c.dir, "lake", "lakehouse", "catalog.db")); err != nil {
		t.Fatal(err)
	}
	if r := c.run("plan"); r.code != 1 || !strings.Contains(r.stderr, "plan failed (exit 1)") {
		t.Errorf("plan without a catalog: exit %d, want 1 and a message", r.code)
	}
	// The comment now says the plan failed, instead of the last "No
	// changes" (issue 43).
	md = c.read("icewright-plan.md")
	if !strings.HasPrefix(md, planMarker+"\n") || strings.Contains(md, "No changes.") ||
		!strings.Contains(md, "could not be planned") || !strings.Contains(md, "catalog.db") {
		t.Errorf("the comment after a failed plan:\n%s", md)
	}
	// A configuration error too.
	if err := os.WriteFile(filepath.Join(c.dir, "lake", "typo.icewright.hcl"), []byte("policy \"x\" {\n  bad = 1\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := c.run("plan"); r.code != 1 {
		t.Errorf("plan with a configuration error: exit %d, want 1", r.code)
	}
	md = c.read("icewright-plan.md")
	if !strings.HasPrefix(md, planMarker+"\n") || !strings.Contains(md, "the configuration has errors") ||
		!strings.Contains(md, `An argument named "bad" is not expected here.`) {
		t.Errorf("the comment after a configuration error:\n%s", md)
	}
}

// TestCIScriptReplan: after merge without the artifact, apply plans again
// and applies that plan.
func TestCIScriptReplan(t *testing.T) {
	c := newCIEnv(t)
	if r := c.run("apply"); r.code != 1 || !strings.Contains(r.stderr, "no plan file") {
		t.Errorf("artifact apply without the artifact: exit %d, want 1 and a message", r.code)
	}
	if r := c.run("apply", "ICEWRIGHT_APPLY_MODE=replan"); r.code != 0 || !strings.Contains(r.stdout, "Apply complete!") {
		t.Fatalf("replan apply: exit %d", r.code)
	}
	if r := c.run("plan"); r.code != 0 || c.lastOutput("changes") != "false" {
		t.Errorf("plan after a replan apply: exit %d, changes %q", r.code, c.lastOutput("changes"))
	}
}

// fakeGitHub serves the three issue-comment calls the script makes.
type fakeGitHub struct {
	mu       sync.Mutex
	token    string
	comments []map[string]any
	calls    []string
	badAuth  int
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		f.badAuth++
		http.Error(w, "bad credentials", http.StatusUnauthorized)
		return
	}
	var in struct{ Body string }
	if r.Method != http.MethodGet {
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/repos/acme/lake/issues/7/comments":
		if r.URL.Query().Get("page") != "1" {
			_ = json.NewEncoder(w).Encode([]any{})
			return
		}
		_ = json.NewEncoder(w).Encode(f.comments)
	case r.Method == http.MethodPost && r.URL.Path == "/repos/acme/lake/issues/7/comments":
		c := map[string]any{"id": 100 + len(f.comments), "body": in.Body}
		f.comments = append(f.comments, c)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(c)
	case r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/repos/acme/lake/issues/comments/"):
		for _, c := range f.comments {
			if r.URL.Path == "/repos/acme/lake/issues/comments/"+jsonNumber(c["id"]) {
				c["body"] = in.Body
				_ = json.NewEncoder(w).Encode(c)
				return
			}
		}
		http.NotFound(w, r)
	default:
		http.NotFound(w, r)
	}
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestCIScriptComment: the comment step posts one comment with the marker
// and edits that same comment on the next push, leaving other comments
// alone; the token goes in the Authorization header and is never printed.
func TestCIScriptComment(t *testing.T) {
	c := newCIEnv(t)
	c.mustRun("plan")
	const token = "ghs_exampleTokenThatMustNotLeak"
	gh := &fakeGitHub{token: token, comments: []map[string]any{{"id": 1, "body": "LGTM"}}}
	srv := httptest.NewServer(gh)
	defer srv.Close()
	env := []string{"GITHUB_TOKEN=" + token, "GITHUB_REPOSITORY=acme/lake", "ICEWRIGHT_PR=7", "GITHUB_API_URL=" + srv.URL}

	for i, want := range []string{"commented on #7", "updated comment 101 on #7"} {
		r := c.run("comment", env...)
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("comment %d: exit %d, stdout %q, want %q", i+1, r.code, r.stdout, want)
		}
		if strings.Contains(r.stdout+r.stderr, token) {
			t.Errorf("comment %d printed the token", i+1)
		}
	}
	gh.mu.Lock()
	defer gh.mu.Unlock()
	if gh.badAuth != 0 {
		t.Errorf("%d calls without the token in the Authorization header", gh.badAuth)
	}
	md := c.read("icewright-plan.md")
	if len(gh.comments) != 2 || gh.comments[0]["body"] != "LGTM" || gh.comments[1]["body"] != md {
		t.Errorf("comments = %v, want the other comment untouched and one icewright comment with the plan (calls %v)", gh.comments, gh.calls)
	}
	gh.mu.Unlock()

	// A plan too long for a GitHub comment keeps what comes before the
	// per-table details.
	long := planMarker + "\n### icewright plan\n\nPlan: 1 table to change.\n\n<details><summary>t</summary>\n\n" +
		strings.Repeat("x", 70000) + "\n</details>\n"
	if err := os.WriteFile(filepath.Join(c.dir, "long.md"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := c.run("comment", append(env, "ICEWRIGHT_COMMENT=long.md")...); r.code != 0 {
		t.Errorf("long comment: exit %d", r.code)
	}
	gh.mu.Lock()
	if body, _ := gh.comments[len(gh.comments)-1]["body"].(string); len(gh.comments) != 2 || !strings.HasPrefix(body, planMarker+"\n") ||
		!strings.Contains(body, "Plan: 1 table to change.") || strings.Contains(body, "<details>") || len(body) > 1000 {
		t.Errorf("the long plan was posted as %d comments, the last %d characters:\n%.300s", len(gh.comments), len(body), body)
	}
}
