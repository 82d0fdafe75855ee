package objstore_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/icewright/icewright/internal/testenv"
)

// TestRunSmoke runs run.sh at its smoke size (SMOKE=1: one run of each case
// at a few hundred objects) on the shared S3 server: every contender of
// both cases must run, and each expiry must leave every file the remaining
// snapshot reaches and none of the expired ones (expiry-verify; the script
// fails otherwise). It checks that the benchmark works, not how fast
// anything is.
func TestRunSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tables on S3 and runs every contender: not in -short")
	}
	env := testenv.S3(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cmd := exec.Command("bash", "run.sh")
	cmd.Env = append(os.Environ(), "SMOKE=1", "WORK="+t.TempDir(), fmt.Sprintf("PORT=%d", port),
		"ICEWRIGHT_TEST_S3_ENDPOINT="+env.Endpoint, "ICEWRIGHT_TEST_S3_BUCKET="+env.Bucket,
		"ICEWRIGHT_TEST_S3_ACCESS_KEY="+env.AccessKey, "ICEWRIGHT_TEST_S3_SECRET_KEY="+env.SecretKey)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run.sh: %v\n%s", err, out)
	}
	text := string(out)
	for _, c := range []string{"bare", "icewright", "iceberg", "expiry-icewright", "expiry-iceberg"} {
		if !strings.Contains(text, "\n  "+c+" ") {
			t.Errorf("no figures for %s:\n%s", c, text)
		}
	}
	if n := strings.Count(text, "0 missing, 0 of 400 expired data files left"); n != 2 {
		t.Errorf("%d expiries verified, want 2:\n%s", n, text)
	}
	// Each expiry found its table as setup left it: each deleted the 400
	// expired data files itself (icewright says so, iceberg-go sent a DELETE
	// for each).
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[0], "expiry-") {
			continue
		}
		var counts struct {
			Delete int `json:"delete"`
		}
		if err := json.Unmarshal([]byte(f[5]), &counts); err != nil {
			t.Fatalf("%s: counts %q: %v", f[0], f[5], err)
		}
		var deleted int
		if f[0] == "expiry-icewright" {
			_, after, _ := strings.Cut(line, ", deleted ")
			fmt.Sscan(after, &deleted)
		} else {
			deleted = counts.Delete
		}
		if deleted < 400 {
			t.Errorf("%s deleted %d files, want at least the 400 expired: %s", f[0], deleted, line)
		}
	}
}
