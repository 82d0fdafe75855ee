package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recorder captures Skip and Fatal instead of ending the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

type stop struct{}

func (r *recorder) Helper() {}
func (r *recorder) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	panic(stop{})
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(stop{})
}

func run(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(stop); !ok {
					panic(v)
				}
			}
		}()
		f(r)
	}()
	return r
}

func TestMissingServiceSkipsOrFails(t *testing.T) {
	t.Setenv("ICEWRIGHT_TEST_PG_DSN", "")
	t.Setenv(RequireServicesEnv, "")
	r := run(t, func(tb testing.TB) { Postgres(tb) })
	if !strings.Contains(r.skipped, "needs PostgreSQL") || !strings.Contains(r.skipped, "scripts/services.sh start") || r.failed != "" {
		t.Errorf("without %s: skipped=%q failed=%q, want a skip naming the service and the command", RequireServicesEnv, r.skipped, r.failed)
	}
	t.Setenv(RequireServicesEnv, "1")
	r = run(t, func(tb testing.TB) { Postgres(tb) })
	if r.skipped != "" || !strings.Contains(r.failed, "ICEWRIGHT_TEST_PG_DSN") {
		t.Errorf("with %s=1: skipped=%q failed=%q, want a failure naming the variable", RequireServicesEnv, r.skipped, r.failed)
	}
}

func TestPresentService(t *testing.T) {
	t.Setenv("ICEWRIGHT_TEST_S3_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("ICEWRIGHT_TEST_S3_ACCESS_KEY", "k")
	t.Setenv("ICEWRIGHT_TEST_S3_SECRET_KEY", "s")
	t.Setenv("ICEWRIGHT_TEST_S3_BUCKET", "b")
	t.Setenv("ICEWRIGHT_TEST_S3_REGION", "")
	a, b := S3(t), S3(t)
	if a.Prefix == b.Prefix {
		t.Errorf("two S3 envs share prefix %q", a.Prefix)
	}
	if got, want := a.URL("x", "y"), "s3://b/"+a.Prefix+"/x/y"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	p := a.Properties()
	if p["s3.endpoint"] != "http://127.0.0.1:1" || p["s3.region"] != "us-east-1" || p["s3.secret-access-key"] != "s" {
		t.Errorf("properties = %v", p)
	}
}

func TestUniqueName(t *testing.T) {
	n := UniqueName(t, "ns")
	if !strings.HasPrefix(n, "ns_testuniquename_") || strings.ContainsAny(n, "/- .") {
		t.Errorf("UniqueName = %q", n)
	}
	if n == UniqueName(t, "ns") {
		t.Error("UniqueName repeated itself")
	}
}

func TestFixtureInRepository(t *testing.T) {
	root := RepoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "internal", "testenv", "testenv.go")); err != nil {
		t.Errorf("RepoRoot = %q: %v", root, err)
	}
	got := Fixture(t, "glaredb-spark-lineitem-v2-versioned")
	if want := filepath.Join(root, "internal", "testdata", "tables", "glaredb-spark-lineitem-v2-versioned"); got != want {
		t.Errorf("Fixture = %q, want %q", got, want)
	}
}

// TestPrivateS3StopStart checks the fault-injection harness: a stopped
// server refuses connections, a restarted one serves the same data.
func TestPrivateS3StopStart(t *testing.T) {
	env, srv := StartS3(t)
	addr := strings.TrimPrefix(env.Endpoint, "http://")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := portOpen(ctx, addr); err != nil {
		t.Fatalf("after start: %v", err)
	}
	srv.Stop()
	if err := portOpen(ctx, addr); err == nil {
		t.Fatal("port still open after Stop")
	}
	srv.Start()
	if err := portOpen(ctx, addr); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}

func TestExitCode(t *testing.T) {
	if code, err := ExitCode(exec.Command("sh", "-c", "exit 3").Run()); code != 3 || err != nil {
		t.Errorf("exit 3: %d, %v", code, err)
	}
	if code, err := ExitCode(exec.Command("true").Run()); code != 0 || err != nil {
		t.Errorf("true: %d, %v", code, err)
	}
	if code, err := ExitCode(exec.Command(filepath.Join(t.TempDir(), "no-such-binary")).Run()); code != -1 || err == nil {
		t.Errorf("a command that cannot start: %d, %v", code, err)
	}
}

// TestObjectStoreServicesMissing: without their variables the GCS and
// Azure helpers skip, naming the service, and fail under
// ICEWRIGHT_REQUIRE_SERVICES=1, naming the variable.
func TestObjectStoreServicesMissing(t *testing.T) {
	for name, f := range map[string]func(testing.TB){
		"ICEWRIGHT_TEST_GCS_ENDPOINT":   func(tb testing.TB) { GCS(tb) },
		"ICEWRIGHT_TEST_AZURE_ENDPOINT": func(tb testing.TB) { Azure(tb) },
	} {
		t.Setenv(name, "")
		t.Setenv(RequireServicesEnv, "")
		if r := run(t, f); !strings.Contains(r.skipped, "needs a") || r.failed != "" {
			t.Errorf("%s unset: skipped=%q failed=%q, want a skip", name, r.skipped, r.failed)
		}
		t.Setenv(RequireServicesEnv, "1")
		if r := run(t, f); r.skipped != "" || !strings.Contains(r.failed, name) {
			t.Errorf("%s unset, services required: skipped=%q failed=%q, want a failure naming it", name, r.skipped, r.failed)
		}
	}
}
