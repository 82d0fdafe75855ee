package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain registers the iceops binary for the scripts: `exec iceops ...`
// runs main in a child process, exactly as a user runs it.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"iceops": main,
	})
}

// TestScript runs testdata/script/*.txtar. ICEOPS_UPDATE_GOLDEN=1 rewrites
// the expected stdout/stderr in the scripts from the actual output.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       os.Getenv("ICEOPS_UPDATE_GOLDEN") == "1",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			// Scripts must not inherit colour or extra flags from the
			// developer's shell.
			env.Setenv("NO_COLOR", "")
			env.Setenv("ICEOPS_CLI_ARGS", "")
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
