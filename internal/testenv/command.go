package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildIceops compiles the iceops command into dir and returns the
// binary's path, for tests that run it as a user or a pipeline would.
func BuildIceops(dir string) (string, error) {
	bin := filepath.Join(dir, "iceops")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/iceops/iceops/cmd/iceops").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build iceops: %w\n%s", err, out)
	}
	return bin, nil
}

// ExitCode is the exit status of a finished command from cmd.Run's or
// cmd.Wait's error: 0 for nil, the status for an *exec.ExitError, and -1
// with the error when the command could not run at all.
func ExitCode(err error) (int, error) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		return ee.ExitCode(), nil
	default:
		return -1, err
	}
}

// InstallIceops runs `go install` of the iceops command with GOBIN=gobin,
// as a pipeline's install step does, and returns the binary's path.
func InstallIceops(gobin string) (string, error) {
	cmd := exec.Command("go", "install", "github.com/iceops/iceops/cmd/iceops")
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install iceops: %w\n%s", err, out)
	}
	return filepath.Join(gobin, "iceops"), nil
}
