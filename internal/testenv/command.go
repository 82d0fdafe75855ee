package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildIcewright compiles the icewright command into dir and returns the
// binary's path, for tests that run it as a user or a pipeline would.
func BuildIcewright(dir string) (string, error) {
	bin := filepath.Join(dir, "icewright")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/icewright/icewright/cmd/icewright").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build icewright: %w\n%s", err, out)
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

// InstallIcewright runs `go install` of the icewright command with GOBIN=gobin,
// as a pipeline's install step does, and returns the binary's path.
func InstallIcewright(gobin string) (string, error) {
	cmd := exec.Command("go", "install", "github.com/icewright/icewright/cmd/icewright")
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install icewright: %w\n%s", err, out)
	}
	return filepath.Join(gobin, "icewright"), nil
}
