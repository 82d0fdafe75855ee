package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A claim holds against every claimant while its process runs (this one
// included), is taken over once its process is gone, and is released when
// the test that reserved the port ends.
func TestClaimFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "12345")
	if !claimFile(f) {
		t.Fatal("first claim refused")
	}
	if claimFile(f) {
		t.Fatal("a second claim while the holder runs succeeded")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte(strconv.Itoa(dead.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	if !claimFile(f) {
		t.Fatal("a stale claim (its process exited) was not taken over")
	}
	if b, _ := os.ReadFile(f); string(b) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("claim holds %q, want this pid", b)
	}
}

func TestReservePortReleasedWithTest(t *testing.T) {
	var p int
	t.Run("holder", func(t *testing.T) {
		p = freePorts(t, 1)[0]
		if claimFile(filepath.Join(os.TempDir(), "icewright-test-ports", strconv.Itoa(p+10000))) {
			t.Fatalf("port %d+10000 is not reserved", p)
		}
	})
	for _, port := range []int{p, p + 10000} {
		if _, err := os.Stat(filepath.Join(os.TempDir(), "icewright-test-ports", strconv.Itoa(port))); !os.IsNotExist(err) {
			t.Errorf("reservation of %d left after the test: %v", port, err)
		}
	}
}
