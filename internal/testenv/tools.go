package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ToolsCache is where scripts/tools.sh installs: $ICEWRIGHT_CACHE, else
// ~/.cache/icewright-ci.
func ToolsCache() string {
	if cache := os.Getenv("ICEWRIGHT_CACHE"); cache != "" {
		return cache
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "icewright-ci")
}

// Helm finds the helm binary that scripts/tools.sh helm builds:
// ICEWRIGHT_HELM, else $ICEWRIGHT_CACHE/bin/helm, else helm on PATH. It
// skips (fails under ICEWRIGHT_REQUIRE_SERVICES=1) when there is none.
func Helm(t testing.TB) string {
	t.Helper()
	if h := os.Getenv("ICEWRIGHT_HELM"); h != "" {
		return h
	}
	if h := filepath.Join(ToolsCache(), "bin", "helm"); fileExists(h) {
		return h
	}
	if h, err := exec.LookPath("helm"); err == nil {
		return h
	}
	missing(t, "needs helm (run scripts/tools.sh helm)")
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
