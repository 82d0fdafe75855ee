package examples

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/icewright/icewright/internal/testenv"
)

// The tests here run the pipelines of ci/ as their YAML is written: every
// `run:` step of github-actions.yml and every before_script/script line of
// gitlab-ci.yml, in order, with the environment the workflow sets, on the
// demo lakehouse. icewright comes from `go install` into a temporary GOBIN and
// is found on PATH (no ICEWRIGHT variable), as after the workflows' install.
//
// What a runner would do itself is stubbed, and each stub says so below:
// `uses:` actions (checkout, setup-go, cache, AWS credentials, artifacts),
// `${{ }}` expressions and `if:`/`rules:` conditions (answered from a table
// per event; an expression the table does not know fails the test, so a
// change to a workflow changes this test too), GitLab's cache and artifacts.

var (
	installOnce sync.Once
	installBin  string
	installErr  error
)

// installedIcewright is icewright installed once per test binary with go install
// into a temporary GOBIN.
func installedIcewright(t *testing.T) string {
	t.Helper()
	installOnce.Do(func() {
		dir, err := os.MkdirTemp("", "icewright-gobin-")
		if err != nil {
			installErr = err
			return
		}
		installBin, installErr = testenv.InstallIcewright(dir)
	})
	if installErr != nil {
		t.Fatal(installErr)
	}
	return installBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if installBin != "" {
		_ = os.RemoveAll(filepath.Dir(installBin))
	}
	os.Exit(code)
}

// runner is one emulated CI runner: a workspace holding the repository
// (examples/ci/icewright-ci.sh) and the configuration in policies/ (the demo's),
// a HOME, and an artifact store shared by the pipeline's jobs.
type runner struct {
	t         *testing.T
	workspace string
	home      string
	artifacts string
	gobin     string // where the test's go install put icewright
	log       bytes.Buffer
}

func newRunner(t *testing.T) *runner {
	t.Helper()
	for _, tool := range []string{"bash", "jq", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the workflows need %s: %v", tool, err)
		}
	}
	bin := installedIcewright(t)
	root := t.TempDir()
	r := &runner{t: t, workspace: filepath.Join(root, "ws"), home: filepath.Join(root, "home"),
		artifacts: filepath.Join(root, "artifacts"), gobin: filepath.Dir(bin)}
	for _, d := range []string{filepath.Join(r.workspace, "examples", "ci"), r.home, r.artifacts} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := os.ReadFile(ciScript)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.workspace, "examples", "ci", "icewright-ci.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	demo := exec.Command(bin, "demo", filepath.Join(r.workspace, "policies"))
	if out, err := demo.CombinedOutput(); err != nil {
		t.Fatalf("icewright demo: %v\n%s", err, out)
	}
	return r
}

// systemPath is a job's PATH before any step: no icewright on it.
const systemPath = "/usr/local/bin:/usr/bin:/bin"

// baseEnv is what a fresh job has: a system PATH without icewright, a HOME,
// the Go toolchain's caches (so an install step could run), no ICEWRIGHT.
func (r *runner) baseEnv() []string {
	env := []string{"PATH=" + systemPath, "HOME=" + r.home, "NO_COLOR=1"}
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT"} {
		if v := os.Getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// cleanJob removes what a previous job left in the workspace (a new job
// starts from a fresh checkout; the lakehouse in policies/ stays, as a real
// lake would).
func (r *runner) cleanJob() {
	for _, name := range []string{"icewright.plan", "icewright-plan.md", "icewright-apply.txt", "github-env"} {
		_ = os.Remove(filepath.Join(r.workspace, name))
	}
}

// shell runs script with bash as a runner does and returns its exit code.
func (r *runner) shell(label, script string, env []string) int {
	r.t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	cmd.Dir = r.workspace
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	code, err := testenv.ExitCode(cmd.Run())
	if err != nil {
		r.t.Fatalf("%s: %v", label, err)
	}
	r.t.Logf("%s: exit %d\n%s", label, code, out.String())
	r.log.WriteString(out.String())
	return code
}

func (r *runner) read(name string) string {
	r.t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		r.t.Fatal(err)
	}
	return string(b)
}

// copyFile copies src to dst, creating dst's directory.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// --- GitHub Actions

type ghStep struct {
	ID   string            `yaml:"id"`
	Name string            `yaml:"name"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
	With map[string]string `yaml:"with"`
}

type ghJob struct {
	If    string            `yaml:"if"`
	Env   map[string]string `yaml:"env"`
	Steps []ghStep          `yaml:"steps"`
}

type ghWorkflow struct {
	On   map[string]any    `yaml:"on"`
	Env  map[string]string `yaml:"env"`
	Jobs map[string]ghJob  `yaml:"jobs"`
}

var ghExpr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// ghEvent answers the expressions and conditions of one event's run.
type ghEvent struct {
	name  string
	exprs map[string]string // ${{ expr }} -> value, and if: expr -> "true"/"false"
}

func (e ghEvent) eval(t *testing.T, expr string) string {
	t.Helper()
	v, ok := e.exprs[expr]
	if !ok {
		t.Fatalf("event %s: the test does not know the expression %q; add it to the event's table", e.name, expr)
	}
	return v
}

func (e ghEvent) subst(t *testing.T, s string) string {
	t.Helper()
	return ghExpr.ReplaceAllStringFunc(s, func(m string) string {
		return e.eval(t, ghExpr.FindStringSubmatch(m)[1])
	})
}

func (e ghEvent) cond(t *testing.T, expr string) bool {
	t.Helper()
	if expr == "" {
		return true
	}
	if m := ghExpr.FindStringSubmatch(expr); m != nil {
		expr = m[1]
	}
	switch v := e.eval(t, expr); v {
	case "true", "false":
		return v == "true"
	default:
		t.Fatalf("condition %q is %q, want true or false", expr, v)
		return false
	}
}

func loadGitHub(t *testing.T) ghWorkflow {
	t.Helper()
	var wf ghWorkflow
	if err := yaml.Unmarshal([]byte(mustRead(t, "ci/github-actions.yml")), &wf); err != nil {
		t.Fatal(err)
	}
	return wf
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runGitHubJob runs one job of the workflow for event ev and returns
// whether it ran and its job summary. It fails the test on a failed step.
// extra (NAME=value) replaces the runner's variables.
func (r *runner) runGitHubJob(wf ghWorkflow, jobName string, ev ghEvent, extra ...string) (ran bool, summary string) {
	t := r.t
	t.Helper()
	job, ok := wf.Jobs[jobName]
	if !ok {
		t.Fatalf("no job %q", jobName)
	}
	if !ev.cond(t, job.If) {
		return false, ""
	}
	r.cleanJob()
	files := t.TempDir()
	output, pathFile, summaryFile := filepath.Join(files, "output"), filepath.Join(files, "path"), filepath.Join(files, "summary")
	env := map[string]string{}
	for _, kv := range append(r.baseEnv(), extra...) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k, v := range map[string]string{
		"GITHUB_OUTPUT": output, "GITHUB_PATH": pathFile, "GITHUB_STEP_SUMMARY": summaryFile,
		"GITHUB_EVENT_NAME": ev.name, "GITHUB_WORKSPACE": r.workspace, "GITHUB_REPOSITORY": "acme/lake",
		"GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567", "CI": "true",
	} {
		env[k] = v
	}
	for _, layer := range []map[string]string{wf.Env, job.Env} {
		for k, v := range layer {
			env[k] = ev.subst(t, v)
		}
	}
	for _, st := range job.Steps {
		label := jobName + ": " + st.Name
		if st.Name == "" {
			label = jobName + ": " + st.Uses
		}
		if !ev.cond(t, st.If) {
			t.Logf("%s: skipped (if: %s)", label, st.If)
			continue
		}
		with := map[string]string{}
		for k, v := range st.With {
			with[k] = ev.subst(t, v)
		}
		if st.Uses != "" {
			r.githubAction(label, st.Uses, with, env)
			continue
		}
		stepEnv := map[string]string{}
		for k, v := range env {
			stepEnv[k] = v
		}
		for k, v := range st.Env {
			stepEnv[k] = ev.subst(t, v)
		}
		// The runner puts GITHUB_PATH's lines in front of PATH for the
		// steps after the one that wrote them.
		if b, err := os.ReadFile(pathFile); err == nil {
			for _, dir := range strings.Fields(string(b)) {
				stepEnv["PATH"] = dir + ":" + stepEnv["PATH"]
			}
		}
		var list []string
		for k, v := range stepEnv {
			list = append(list, k+"="+v)
		}
		if code := r.shell(label, ev.subst(t, st.Run), list); code != 0 {
			t.Fatalf("%s: exit %d", label, code)
		}
	}
	if b, err := os.ReadFile(summaryFile); err == nil {
		summary = string(b)
	}
	return true, summary
}

// githubAction stubs one `uses:` step with what it provides to the steps
// after it.
func (r *runner) githubAction(label, uses string, with, env map[string]string) {
	t := r.t
	t.Helper()
	action, _, _ := strings.Cut(uses, "@")
	switch action {
	case "actions/checkout", "actions/setup-go":
		// The workspace holds the repository already; go is on the
		// test's PATH (and not needed: the cache stub below hits).
	case "actions/cache":
		// A cache hit: the binary the pinned install would have built.
		// The if: table answers steps.cache-icewright.outputs.cache-hit.
		path := strings.Replace(with["path"], "~", r.home, 1)
		copyFile(t, filepath.Join(r.gobin, "icewright"), filepath.Join(path, "icewright"))
	case "aws-actions/configure-aws-credentials":
		// OIDC is the default: a role to assume, no static keys. The demo
		// lakehouse is local, so no credentials are exported here.
		if with["role-to-assume"] == "" || with["aws-access-key-id"] != "" {
			t.Errorf("%s: want role-to-assume and no static keys, got %v", label, with)
		}
	case "actions/upload-artifact":
		src := filepath.Join(r.workspace, with["path"])
		if _, err := os.Stat(src); err != nil {
			t.Fatalf("%s: artifact %s: %v", label, with["name"], err)
		}
		copyFile(t, src, filepath.Join(r.artifacts, with["name"], filepath.Base(src)))
	default:
		t.Fatalf("%s: no stub for the action %s", label, uses)
	}
	t.Logf("%s: stubbed", label)
}

// ghStub is `gh` for the apply job's "Fetch the reviewed plan" step: the
// pull request merged as GITHUB_SHA, its successful plan run, and that
// run's artifact from the store the upload stub filled.
const ghStub = `#!/bin/bash
case "$1 $2" in
"api repos/acme/lake/commits/$GITHUB_SHA/pulls") echo feedface ;;
"run list") echo 4242 ;;
"run download") cp "$ICEWRIGHT_TEST_ARTIFACTS/$5/"* . ;;
*) echo "gh stub: unexpected $*" >&2; exit 1 ;;
esac
`

func ghEvents() (pr, push, schedule ghEvent) {
	common := map[string]string{
		"secrets.ICEBERG_REST_CREDENTIAL":  "",
		"secrets.GITHUB_TOKEN":             "",
		"github.token":                     "",
		"github.workflow":                  "icewright",
		"runner.os":                        "Linux",
		"env.ICEWRIGHT_VERSION":            "v0.1.0",
		"env.ICEWRIGHT_PLAN":               "icewright.plan",
		"env.ICEWRIGHT_APPLY_LOG":          "icewright-apply.txt",
		"vars.AWS_ROLE_ARN":                "arn:aws:iam::123456789012:role/icewright",
		"vars.AWS_REGION":                  "eu-west-1",
		"github.event.pull_request.number": "7",
		// The cache stub always hits.
		"steps.cache-icewright.outputs.cache-hit != 'true'": "false",
		"always()": "true",
		"!cancelled() && steps.plan.outcome != 'skipped'": "true",
	}
	with := func(name string, kv ...string) ghEvent {
		e := ghEvent{name: name, exprs: map[string]string{}}
		for k, v := range common {
			e.exprs[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			e.exprs[kv[i]] = kv[i+1]
		}
		return e
	}
	const (
		fetchIf = "github.event_name == 'push' && vars.ICEWRIGHT_APPLY_MODE != 'replan'"
		modeVal = "github.event_name == 'push' && (vars.ICEWRIGHT_APPLY_MODE || 'artifact') || 'replan'"
	)
	pr = with("pull_request", "github.event_name == 'pull_request'", "true", "github.event_name != 'pull_request'", "false")
	push = with("push", "github.event_name == 'pull_request'", "false", "github.event_name != 'pull_request'", "true",
		fetchIf, "true", modeVal, "artifact")
	schedule = with("schedule", "github.event_name == 'pull_request'", "false", "github.event_name != 'pull_request'", "true",
		fetchIf, "false", modeVal, "replan")
	return pr, push, schedule
}

// TestGitHubWorkflow: a pull request's plan job (check, plan with changes,
// the comment left in a file without a token, the plan artifact), the
// push after merge applying that artifact (results in the job summary and
// an artifact), and the nightly schedule planning again with nothing left.
func TestGitHubWorkflow(t *testing.T) {
	wf := loadGitHub(t)
	if _, ok := wf.On["schedule"]; !ok {
		t.Error("the workflow has no schedule trigger")
	}
	r := newRunner(t)
	pr, push, schedule := ghEvents()

	if ran, _ := r.runGitHubJob(wf, "apply", pr); ran {
		t.Error("a pull request ran the apply job")
	}
	if ran, summary := r.runGitHubJob(wf, "plan", pr); !ran || !strings.Contains(summary, planMarker) {
		t.Fatalf("pull request: plan job ran %v, summary:\n%s", ran, summary)
	}
	if _, err := os.Stat(filepath.Join(r.artifacts, "icewright-plan", "icewright.plan")); err != nil {
		t.Fatalf("no plan artifact: %v", err)
	}

	// The push job's fetch step calls gh; a stub answers from the store.
	stubDir := filepath.Join(r.home, "stub-bin")
	if err := os.MkdirAll(stubDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stubDir, "gh"), []byte(ghStub), 0o755); err != nil {
		t.Fatal(err)
	}
	ranPush, summary := r.runGitHubJob(wf, "apply", push, "PATH="+stubDir+":"+systemPath, "ICEWRIGHT_TEST_ARTIFACTS="+r.artifacts)
	if !ranPush || !strings.Contains(summary, "### icewright apply (exit 0)") || !strings.Contains(summary, "Apply complete!") {
		t.Fatalf("push: apply ran %v, summary:\n%s", ranPush, summary)
	}
	if got := r.read(filepath.Join(r.artifacts, "icewright-apply", "icewright-apply.txt")); !strings.Contains(got, "Apply complete!") {
		t.Errorf("the apply artifact does not hold the results:\n%s", got)
	}

	if ran, _ := r.runGitHubJob(wf, "plan", schedule); ran {
		t.Error("the schedule ran the plan job")
	}
	if ran, summary := r.runGitHubJob(wf, "apply", schedule); !ran || !strings.Contains(r.log.String(), "nothing to apply") {
		t.Errorf("schedule: apply ran %v, summary:\n%s", ran, summary)
	}
}

// --- GitLab CI

type glRule struct {
	If   string `yaml:"if"`
	When string `yaml:"when"`
}

type glJob struct {
	name         string
	Extends      string            `yaml:"extends"`
	Variables    map[string]string `yaml:"variables"`
	BeforeScript []string          `yaml:"before_script"`
	Script       []string          `yaml:"script"`
	Rules        []glRule          `yaml:"rules"`
	Cache        struct {
		Paths []string `yaml:"paths"`
	} `yaml:"cache"`
	Artifacts struct {
		Paths []string `yaml:"paths"`
		When  string   `yaml:"when"`
	} `yaml:"artifacts"`
}

// glPipeline is gitlab-ci.yml: its global variables and its jobs in file
// order, each with what it extends merged in (one level, as the file uses).
type glPipeline struct {
	variables map[string]string
	jobs      []glJob
}

func loadGitLab(t *testing.T) glPipeline {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(mustRead(t, "ci/gitlab-ci.yml")), &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	var p glPipeline
	hidden := map[string]glJob{}
	var jobs []glJob
	for i := 0; i < len(root.Content); i += 2 {
		key, val := root.Content[i].Value, root.Content[i+1]
		if key == "variables" {
			if err := val.Decode(&p.variables); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var j glJob
		if err := val.Decode(&j); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		j.name = key
		if strings.HasPrefix(key, ".") {
			hidden[key] = j
			continue
		}
		jobs = append(jobs, j)
	}
	for _, j := range jobs {
		if j.Extends != "" {
			base, ok := hidden[j.Extends]
			if !ok {
				t.Fatalf("%s extends unknown %s", j.name, j.Extends)
			}
			vars := map[string]string{}
			for k, v := range base.Variables {
				vars[k] = v
			}
			for k, v := range j.Variables {
				vars[k] = v
			}
			j.Variables = vars
			if j.BeforeScript == nil {
				j.BeforeScript = base.BeforeScript
			}
			if j.Cache.Paths == nil {
				j.Cache = base.Cache
			}
		}
		p.jobs = append(p.jobs, j)
	}
	return p
}

// glSource answers a pipeline's rules: if expressions for one pipeline
// source; an expression it does not know fails the test.
type glSource struct {
	name  string
	rules map[string]bool
}

// runGitLabPipeline runs every job whose rules let it run automatically
// (a manual job is left, as GitLab leaves it) and returns their names.
func (r *runner) runGitLabPipeline(p glPipeline, src glSource) []string {
	t := r.t
	t.Helper()
	var ran []string
	for _, j := range p.jobs {
		run := false
		for _, rule := range j.Rules {
			v, ok := src.rules[rule.If]
			if !ok {
				t.Fatalf("pipeline %s: the test does not know the rule %q", src.name, rule.If)
			}
			if v {
				run = rule.When != "manual"
				break
			}
		}
		if !run {
			continue
		}
		r.runGitLabJob(p, j, src)
		ran = append(ran, j.name)
	}
	return ran
}

func (r *runner) runGitLabJob(p glPipeline, j glJob, src glSource) {
	t := r.t
	t.Helper()
	r.cleanJob()
	env := map[string]string{}
	for _, kv := range r.baseEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k, v := range map[string]string{
		"CI": "true", "GITLAB_CI": "true", "CI_PROJECT_DIR": r.workspace, "CI_BUILDS_DIR": filepath.Dir(r.workspace),
		"CI_PIPELINE_SOURCE": src.name, "CI_DEFAULT_BRANCH": "main", "CI_JOB_NAME": j.name,
		// An ID token is only signed on GitLab; without one the job runs
		// with whatever credentials the environment has.
		"AWS_ID_TOKEN": "",
	} {
		env[k] = v
	}
	expand := func(s string) string { return os.Expand(s, func(k string) string { return env[k] }) }
	for _, layer := range []map[string]string{p.variables, j.Variables} {
		for k, v := range layer {
			env[k] = expand(v)
		}
	}
	// The cache stub: the key's cache holds the pinned icewright, as a
	// previous job's install left it.
	for _, path := range j.Cache.Paths {
		if strings.HasPrefix(path, ".icewright-bin") {
			copyFile(t, filepath.Join(r.gobin, "icewright"), filepath.Join(r.workspace, path, env["ICEWRIGHT_VERSION"], "icewright"))
		}
	}
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	// A job's before_script and script run in one shell, line by line,
	// stopping at the first failure.
	script := strings.Join(append(append([]string{}, j.BeforeScript...), j.Script...), "\n")
	code := r.shell(j.name, script, list)
	if code == 0 || j.Artifacts.When == "always" {
		for _, path := range j.Artifacts.Paths {
			src := filepath.Join(r.workspace, expand(path))
			if _, err := os.Stat(src); err != nil {
				t.Errorf("%s: artifact %s: %v", j.name, path, err)
				continue
			}
			copyFile(t, src, filepath.Join(r.artifacts, j.name, filepath.Base(src)))
		}
	}
	if code != 0 {
		t.Fatalf("%s: exit %d", j.name, code)
	}
}

// TestGitLabPipeline: a merge request pipeline (check, plan with the note
// left in a file without a token, the plan artifact), the nightly schedule
// applying (plan again and apply; the results kept as an artifact), and a
// pipeline on the default branch with nothing left to do.
func TestGitLabPipeline(t *testing.T) {
	p := loadGitLab(t)
	r := newRunner(t)
	const (
		mr            = `$CI_PIPELINE_SOURCE == "merge_request_event"`
		sched         = `$CI_PIPELINE_SOURCE == "schedule"`
		defaultBranch = `$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH`
	)
	ran := r.runGitLabPipeline(p, glSource{name: "merge_request_event", rules: map[string]bool{mr: true, sched: false, defaultBranch: false}})
	if strings.Join(ran, " ") != "icewright:check icewright:plan" {
		t.Errorf("merge request pipeline ran %v", ran)
	}
	if md := r.read(filepath.Join(r.artifacts, "icewright:plan", "icewright-plan.md")); !strings.HasPrefix(md, planMarker+"\n") {
		t.Errorf("the plan artifact's comment:\n%s", md)
	}

	ran = r.runGitLabPipeline(p, glSource{name: "schedule", rules: map[string]bool{mr: false, sched: true, defaultBranch: false}})
	if strings.Join(ran, " ") != "icewright:apply" {
		t.Errorf("scheduled pipeline ran %v", ran)
	}
	if got := r.read(filepath.Join(r.artifacts, "icewright:apply", "icewright-apply.txt")); !strings.Contains(got, "Apply complete! tables: 2 changed") {
		t.Errorf("the apply artifact:\n%s", got)
	}

	ran = r.runGitLabPipeline(p, glSource{name: "push", rules: map[string]bool{mr: false, sched: false, defaultBranch: true}})
	if strings.Join(ran, " ") != "icewright:apply" || !strings.Contains(r.log.String(), "nothing to apply") {
		t.Errorf("default branch pipeline ran %v", ran)
	}
}
