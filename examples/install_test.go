package examples

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/icewright/icewright/internal/testenv"
)

const modulePath = "github.com/icewright/icewright"

// TestGoInstallFromModule tries docs/install.md's first path as a user
// would, from outside any module: `go install
// github.com/icewright/icewright/cmd/icewright@VERSION`. The module is this
// checkout's HEAD commit, zipped by the Go module rules (golang.org/x/mod/zip,
// what the module proxy serves) into a file proxy under a pseudo-version,
// so the test catches a wrong module path, a replace directive (which go
// install refuses), a file the module zip leaves out that a package needs,
// and a go.sum that does not verify. Dependencies come through the usual
// GOPROXY (the module cache, when it holds them).
func TestGoInstallFromModule(t *testing.T) {
	root := testenv.RepoRoot(t)
	rev, err := exec.Command("git", "-C", root, "log", "-1", "--format=%H %ct").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): the module is zipped from a commit", err)
	}
	hash, unix, _ := strings.Cut(strings.TrimSpace(string(rev)), " ")
	secs, err := strconv.ParseInt(unix, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	version := module.PseudoVersion("v0", "", time.Unix(secs, 0), hash[:12])
	mv := module.Version{Path: modulePath, Version: version}

	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy", modulePath, "@v")
	if err := os.MkdirAll(proxy, 0o755); err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(proxy, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	// The commit's tree (git archive: a git worktree too, which
	// modzip.CreateFromVCS does not recognise), zipped by the module rules.
	src := filepath.Join(tmp, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.Command("sh", "-c", `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, "sh", root, hash, src)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", hash, err, out)
	}
	if err := modzip.CreateFromDir(zf, mv, src); err != nil {
		t.Fatalf("zip the module at %s: %v", hash, err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
	gomod, err := exec.Command("git", "-C", root, "show", hash+":go.mod").Output()
	if err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"Version": version, "Time": time.Unix(secs, 0).UTC()})
	for name, data := range map[string][]byte{"list": []byte(version + "\n"), version + ".mod": gomod, version + ".info": info} {
		if err := os.WriteFile(filepath.Join(proxy, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	goproxy, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		t.Fatal(err)
	}
	work, gobin := filepath.Join(tmp, "work"), filepath.Join(tmp, "bin")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// -n: resolved, downloaded, verified and planned, not compiled (the
	// same tree's compilation is every other test's; a full build from a
	// fresh module directory would compile the whole module again, minutes
	// of CI). The commit a pseudo-version names is what `icewright version`
	// prints: TestVersionFromModule (cmd/icewright).
	install := exec.CommandContext(ctx, "go", "install", "-n", modulePath+"/cmd/icewright@"+version)
	install.Dir = work
	install.Env = append(os.Environ(),
		"GOBIN="+gobin, "GOWORK=off", "GOFLAGS=-modcacherw", "CGO_ENABLED=0",
		"GOPROXY=file://"+filepath.Join(tmp, "proxy")+","+strings.TrimSpace(string(goproxy)),
		// The commit is not public: no checksum database knows it.
		"GONOSUMDB="+modulePath,
	)
	t.Cleanup(func() {
		// The module cache is shared: take this pseudo-version out of it.
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			return
		}
		mc := strings.TrimSpace(string(out))
		_ = os.RemoveAll(filepath.Join(mc, modulePath+"@"+version))
		dl := filepath.Join(mc, "cache", "download", modulePath, "@v")
		for _, ext := range []string{".zip", ".ziphash", ".mod", ".info", ".lock"} {
			_ = os.Remove(filepath.Join(dl, version+ext))
		}
		// The list of versions and the directories, if nothing else is
		// left in them (os.Remove does not remove a directory with files).
		if rest, _ := os.ReadDir(dl); len(rest) == 1 && rest[0].Name() == "list" {
			_ = os.Remove(filepath.Join(dl, "list"))
		}
		for _, d := range []string{dl, filepath.Dir(dl), filepath.Dir(filepath.Dir(dl)), filepath.Join(mc, filepath.Dir(modulePath))} {
			_ = os.Remove(d)
		}
	})
	out, err := install.CombinedOutput()
	if err != nil {
		t.Fatalf("go install -n %s/cmd/icewright@%s: %v\n%s", modulePath, version, err, out)
	}
	// The plan compiles the command from the module as the proxy served it
	// and installs it into GOBIN.
	if !strings.Contains(string(out), modulePath+"@"+version) || !strings.Contains(string(out), filepath.Join(gobin, "icewright")) {
		t.Errorf("go install -n did not plan to build %s@%s into %s:\n%.2000s", modulePath, version, gobin, out)
	}
}
