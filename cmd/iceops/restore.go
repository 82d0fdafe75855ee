package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/iceops/iceops/config"
	"github.com/iceops/iceops/providers"
)

const restoreHelp = `Usage: iceops [global options] restore [options] RUN_ID ADDR

  Put back the orphan files that one apply moved to the table's quarantine
  (orphan_files { quarantine = "7d" }). RUN_ID is the quarantine run the
  apply results name ("quarantine run 20261130T120000Z"); the runs are the
  directories under <table location>/.iceops-quarantine/.

  A file is never overwritten: when a file exists at the original path, that
  file is left as it is, its quarantined copy stays, and restore exits 1.

Options:
  -json          Print the result as JSON.
  -var NAME=VAL  Set a variable of the configuration.
  -var-file=F    Read variables from a file.
`

// Restore: `iceops restore [-json] [-var...] RUN_ID ADDR`.
type Restore struct {
	JSON    bool
	Vars    Vars
	RunID   string
	Address string
}

func ParseRestore(args []string) (Restore, error) {
	var a Restore
	fs := newFlagSet("restore")
	fs.BoolVar(&a.JSON, "json", false, "")
	addVarFlags(fs, &a.Vars)
	var noColor bool
	fs.BoolVar(&noColor, "no-color", false, "")
	if err := parseFlags(fs, args); err != nil {
		return a, err
	}
	if err := maxArgs(fs, 2, "RUN_ID ADDR"); err != nil {
		return a, err
	}
	if fs.NArg() != 2 {
		return a, errors.New("restore needs a quarantine run id and a table address: iceops restore RUN_ID CATALOG.NAMESPACE.TABLE")
	}
	a.RunID, a.Address = fs.Arg(0), fs.Arg(1)
	return a, nil
}

// restoreJSON is restore's -json document.
type restoreJSON struct {
	Address  string         `json:"address"`
	RunID    string         `json:"run_id"`
	Restored []restoredJSON `json:"restored"`
	Bytes    int64          `json:"bytes"`
	Refused  []string       `json:"refused"`
	// NotHeld are files the manifest lists that the run never held.
	NotHeld []string `json:"not_held,omitempty"`
	// ManifestKept says why the run's manifest stays (restore then exits 1).
	ManifestKept string `json:"manifest_kept,omitempty"`
}

type restoredJSON struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// restore moves the files of one quarantine run back into the table.
func (c *cli) restore(args []string) int {
	a, err := ParseRestore(args)
	if err != nil {
		if errors.Is(err, errHelp) {
			fmt.Fprint(c.stdout, restoreHelp)
			return exitOK
		}
		return c.usage("restore", err)
	}
	if _, _, _, err := config.SplitAddress(a.Address); err != nil {
		return c.fail(fmt.Errorf("restore %q: %w", a.Address, err))
	}
	cfg, ok := c.loadConfig(a.Vars, false)
	if !ok {
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sess := providers.Open(cfg, providers.Options{Env: c.environ, Now: c.now})
	defer sess.Close()
	res, err := sess.RestoreQuarantine(ctx, a.Address, a.RunID)
	if err != nil {
		return c.fail(fmt.Errorf("restore %s %s: %w", a.RunID, a.Address, err))
	}
	if a.JSON {
		doc := restoreJSON{Address: a.Address, RunID: res.RunID, Bytes: res.Bytes, Restored: []restoredJSON{}, Refused: res.Refused,
			NotHeld: res.NotHeld, ManifestKept: res.ManifestKept}
		if doc.Refused == nil {
			doc.Refused = []string{}
		}
		for _, f := range res.Restored {
			doc.Restored = append(doc.Restored, restoredJSON{Path: f.Original, Size: f.Size})
		}
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return c.fail(err)
		}
	} else {
		fmt.Fprintf(c.stdout, "Restored %d files (%d bytes) of quarantine run %s to %s.\n", len(res.Restored), res.Bytes, res.RunID, a.Address)
		for _, f := range res.Restored {
			fmt.Fprintf(c.stdout, "  + %s\n", f.Original)
		}
		if len(res.Refused) > 0 {
			fmt.Fprintf(c.stdout, "Not restored (%d), still in the quarantine:\n", len(res.Refused))
			for _, r := range res.Refused {
				fmt.Fprintf(c.stdout, "  ! %s\n", r)
			}
		}
		if len(res.NotHeld) > 0 {
			fmt.Fprintf(c.stdout, "Listed but never held by this run (not moved by it, not at their original path), left alone (%d):\n", len(res.NotHeld))
			for _, p := range res.NotHeld {
				fmt.Fprintf(c.stdout, "  ? %s\n", p)
			}
		}
		if res.ManifestKept != "" {
			fmt.Fprintf(c.stdout, "The run's manifest is kept: %s.\n", res.ManifestKept)
		}
	}
	if len(res.Refused) > 0 || res.ManifestKept != "" {
		return exitError
	}
	return exitOK
}
