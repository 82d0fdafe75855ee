package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/icewright/icewright/providers/testkit"
)

// TestReconcileProcess: `icewright reconcile -interval=5s` on the demo, as a
// process: /status shows every table back in policy, /metrics counts the
// actions done, a writer's commits put a table out of policy and the
// reconciler brings it back on its own (no trigger), and SIGTERM exits 0.
func TestReconcileProcess(t *testing.T) {
	bin := buildIcewright(t)
	dir := filepath.Join(t.TempDir(), "lake")
	lake := demoLake(t, bin, dir)

	base, cmd, exited := startReconcile(t, bin, dir, "-interval=5s", "-watch=200ms")

	inPolicy := func() bool {
		var st struct {
			Ready  bool
			Tables []struct{ Address, Result string }
		}
		if err := json.Unmarshal([]byte(get(t, base+"/status")), &st); err != nil {
			t.Fatal(err)
		}
		if !st.Ready || len(st.Tables) != 3 {
			return false
		}
		for _, tb := range st.Tables {
			if tb.Result != "in_policy" && tb.Result != "applied" {
				return false
			}
		}
		return true
	}
	waitUntil(t, "every table back in policy", inPolicy)
	compactions := func() int {
		m := get(t, base+"/metrics")
		v := regexp.MustCompile(`(?m)^icewright_actions_total\{action="compact",outcome="done",reason=""\} (\d+)$`).FindStringSubmatch(m)
		if v == nil {
			return 0
		}
		n, _ := strconv.Atoi(v[1])
		return n
	}
	done := compactions()
	if done == 0 {
		t.Fatalf("no compaction counted in /metrics:\n%s", grepLines(get(t, base+"/metrics"), "icewright_"))
	}

	// A writer adds small files to one table: the reconciler finds it out
	// of policy at its next due time and applies again.
	for i := range int64(6) { // the demo policy compacts from 5 files
		appendRetrying(t, lake, 1_000_000+i*10, 10)
	}
	rows := testkit.ScanIDs(t, lake.Reload(t, concurrentTable))
	waitUntil(t, "the writer's files compacted", func() bool { return compactions() > done && planIsEmpty(t, bin, dir) })
	if got := testkit.ScanIDs(t, lake.Reload(t, concurrentTable)); !maps.Equal(got, rows) {
		t.Fatal("rows changed")
	}

	// An edit of the configuration's files is reloaded without a signal
	// (-watch).
	loads := func() string {
		m := regexp.MustCompile(`(?m)^icewright_config_loads_total\{outcome="ok"\} (\d+)$`).FindStringSubmatch(get(t, base+"/metrics"))
		if m == nil {
			return ""
		}
		return m[1]
	}
	if got := loads(); got != "1" {
		t.Fatalf("configuration loads before the edit: %q, want 1", got)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.icewright.hcl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no configuration file in %s: %v", dir, err)
	}
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\n# edited while reconcile runs\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the edited configuration reloaded", func() bool { return loads() == "2" })

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("after SIGTERM: %v (want exit 0)", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("reconcile did not exit after SIGTERM")
	}
}

// startReconcile starts `icewright reconcile -listen=127.0.0.1:0 args...` on
// the configuration in dir and returns the base URL it serves, the process
// and a channel of its exit.
func startReconcile(t *testing.T, bin, dir string, args ...string) (string, *exec.Cmd, chan error) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-chdir=" + dir, "reconcile", "-listen=127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	serving := regexp.MustCompile(`serving .* on (http://\S+)$`)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("reconcile exited before serving")
			}
			if m := serving.FindStringSubmatch(l); m != nil {
				go func() {
					for range lines { // keep the pipe drained
					}
				}()
				return m[1], cmd, exited
			}
		case <-time.After(60 * time.Second):
			t.Fatal("reconcile did not start serving")
		}
	}
}

// TestReconcilersProcessesShareAndTakeOver: three reconcilers on the demo
// while a writer commits; one is killed (SIGKILL, its leases left behind).
// Every table returns to policy, no row is lost or doubled, no compaction
// failed, and the two left exit 0 on SIGTERM.
func TestReconcilersProcessesShareAndTakeOver(t *testing.T) {
	bin := buildIcewright(t)
	dir := filepath.Join(t.TempDir(), "lake")
	lake := demoLake(t, bin, dir)
	want := testkit.ScanIDs(t, lake.Reload(t, concurrentTable))

	type proc struct {
		base   string
		cmd    *exec.Cmd
		exited chan error
	}
	var ps []proc
	for range 3 {
		base, cmd, exited := startReconcile(t, bin, dir, "-interval=2s", "-lease-ttl=4s")
		ps = append(ps, proc{base, cmd, exited})
	}
	for i := range int64(12) {
		start := 2_000_000 + i*10
		appendRetrying(t, lake, start, 10)
		for id := start; id < start+10; id++ {
			want[id]++
		}
		if i == 5 {
			if err := ps[0].cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-ps[0].exited
		}
		time.Sleep(500 * time.Millisecond)
	}
	waitUntil(t, "every table back in policy", func() bool { return planIsEmpty(t, bin, dir) })
	if got := testkit.ScanIDs(t, lake.Reload(t, concurrentTable)); !maps.Equal(got, want) {
		t.Fatalf("rows: %d ids after, want %d", len(got), len(want))
	}
	done := 0
	for _, p := range ps[1:] {
		m := get(t, p.base+"/metrics")
		if regexp.MustCompile(`(?m)^icewright_actions_total\{action="compact",outcome="failed",reason=""\} [1-9]`).MatchString(m) {
			t.Errorf("a compaction failed:\n%s", grepLines(m, "icewright_actions_total"))
		}
		if v := regexp.MustCompile(`(?m)^icewright_actions_total\{action="compact",outcome="done",reason=""\} (\d+)$`).FindStringSubmatch(m); v != nil {
			n, _ := strconv.Atoi(v[1])
			done += n
		}
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	if done == 0 {
		t.Error("the reconcilers left alive compacted nothing")
	}
	for _, p := range ps[1:] {
		select {
		case err := <-p.exited:
			if err != nil {
				t.Errorf("after SIGTERM: %v (want exit 0)", err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("reconcile did not exit after SIGTERM")
		}
	}
}

// appendRetrying is a writer beside the reconcilers: its append is
// refused when a reconciler committed since it loaded the table (iceberg-go
// checks that main has not moved), and like any writer it loads the table
// again and retries. A refused append committed nothing.
func appendRetrying(t *testing.T, lake *testkit.Lakehouse, start int64, n int) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		err := writerAppend(context.Background(), lake.Reload(t, concurrentTable), start, n)
		if err == nil {
			return
		}
		if msg := err.Error(); attempt == 20 || !strings.Contains(msg, "has changed") && !strings.Contains(msg, "refresh and try again") {
			t.Fatalf("writer append: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func planIsEmpty(t *testing.T, bin, dir string) bool {
	code, _ := runIcewright(t, bin, dir, "plan", "-detailed-exitcode")
	return code == 0
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
