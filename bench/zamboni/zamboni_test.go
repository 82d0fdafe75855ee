package zamboni_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/icewright/icewright/internal/testenv"
)

// TestRunSmoke runs run.sh at its smoke size (SMOKE=1: tables of a few
// hundred rows, one pair per case) against the pinned Zamboni: every case
// must run both tools, read back the same rows afterwards (the script fails
// otherwise) and end in the same state. It checks that the benchmark works,
// not how fast anything is.
func TestRunSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tables and runs both tools: not in -short")
	}
	testenv.Python(t) // the suite's venv, where scripts/tools.sh installs Zamboni
	cmd := exec.Command("bash", "run.sh")
	cmd.Env = append(os.Environ(), "SMOKE=1", "WORK="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run.sh: %v\n%s", err, out)
	}
	text := string(out)
	for _, c := range []string{"compaction-binpack", "compaction-sort", "compaction-zorder", "maintenance", "orphans"} {
		for _, tool := range []string{"icewright", "zamboni"} {
			if !strings.Contains(text, "| "+c+" | "+tool+" | ") {
				t.Errorf("no %s figures for %s in the summary:\n%s", tool, c, text)
			}
		}
	}
	if strings.Contains(text, "different end states") {
		t.Errorf("the tools ended in different states:\n%s", text)
	}
}
