package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain registers the icewright binary for the scripts: `exec icewright ...`
// runs main in a child process, exactly as a user runs it.
//
// The child runs on the clock ICEWRIGHT_TEST_NOW (RFC 3339) when it is set, so
// that a golden built from the demo (partition dates, ages, byte counts)
// holds on any day. The clock still advances from there, so durations and
// heartbeats stay real. Only this test binary reads the variable.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"icewright": func() {
			now, err := scriptClock(os.Getenv(testNowEnv))
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			os.Exit(mainRun(now))
		},
	})
}

const testNowEnv = "ICEWRIGHT_TEST_NOW"

// scriptNow is the day every script runs on unless it sets its own: in the
// past whatever the wall clock says, so that files the wall clock stamps
// (iceberg-go's own writes) are never older than the demo's history.
const scriptNow = "2026-06-15T12:00:00Z"

func scriptClock(v string) (func() time.Time, error) {
	if v == "" {
		return time.Now, nil
	}
	at, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", testNowEnv, err)
	}
	start := time.Now()
	return func() time.Time { return at.Add(time.Since(start)) }, nil
}

// TestScript runs testdata/script/*.txtar. ICEWRIGHT_UPDATE_GOLDEN=1 rewrites
// the expected stdout/stderr in the scripts from the actual output.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       os.Getenv("ICEWRIGHT_UPDATE_GOLDEN") == "1",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			// Scripts must not inherit colour or extra flags from the
			// developer's shell.
			env.Setenv("NO_COLOR", "")
			env.Setenv("ICEWRIGHT_CLI_ARGS", "")
			env.Setenv(testNowEnv, scriptNow)
			// The repository's examples, for scripts that check them as
			// a user would run them.
			examples, err := filepath.Abs("../../examples")
			if err != nil {
				return err
			}
			env.Setenv("EXAMPLES", examples)
			return nil
		},
		Cmds: scriptCmds(),
	})
}
