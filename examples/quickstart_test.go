package examples

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icewright/icewright/internal/testenv"
)

// TestQuickstartREADME runs the commands of quickstart/README.md's sh
// block as written, from a copy of the repository's examples/quickstart,
// with icewright on PATH: each succeeds, and the plan manages the demo's
// tables without a nothing-matched warning.
func TestQuickstartREADME(t *testing.T) {
	bin := installedIcewright(t)
	root := t.TempDir()
	dst := filepath.Join(root, "examples", "quickstart")
	for _, name := range []string{"README.md", "main.icewright.hcl"} {
		copyFile(t, filepath.Join("quickstart", name), filepath.Join(dst, name))
	}
	readme := mustRead(t, filepath.Join("quickstart", "README.md"))
	_, block, ok := strings.Cut(readme, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || strings.TrimSpace(block) == "" {
		t.Fatal("quickstart/README.md has no sh block")
	}
	var plan string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd := exec.Command("bash", "-c", line)
		cmd.Dir = root
		cmd.Env = []string{"PATH=" + filepath.Dir(bin) + ":" + systemPath, "HOME=" + root, "NO_COLOR=1"}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		code, err := testenv.ExitCode(cmd.Run())
		if err != nil || code != 0 {
			t.Fatalf("%s: exit %d %v\n%s%s", line, code, err, out.String(), errb.String())
		}
		if strings.Contains(errb.String(), "Warning:") {
			t.Errorf("%s warns:\n%s", line, errb.String())
		}
		plan = out.String()
	}
	if !strings.Contains(plan, "Plan: 2 tables to change") || !strings.Contains(plan, `~ table "demo.analytics.events"`) {
		t.Errorf("the quickstart's plan does not manage the demo's tables:\n%s", plan)
	}
	if _, err := os.Stat(filepath.Join(dst, "demo", "lakehouse", "catalog.db")); err != nil {
		t.Errorf("the lakehouse is not where the configuration reads it: %v", err)
	}
}
