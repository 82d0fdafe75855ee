package views

import (
	"fmt"
	"io"
	"strings"

	"github.com/icewright/icewright/diff"
)

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

// RestoreJSON writes what `icewright restore -json` put back of one
// quarantine run of address.
func RestoreJSON(w io.Writer, address string, res diff.RestoreResult) error {
	doc := restoreJSON{Address: address, RunID: res.RunID, Bytes: res.Bytes, Restored: []restoredJSON{}, Refused: res.Refused,
		NotHeld: res.NotHeld, ManifestKept: res.ManifestKept}
	if doc.Refused == nil {
		doc.Refused = []string{}
	}
	for _, f := range res.Restored {
		doc.Restored = append(doc.Restored, restoredJSON{Path: f.Original, Size: f.Size})
	}
	return writeJSON(w, doc, "restore result")
}

// Restore renders what `icewright restore` put back: the files restored, those
// left in the quarantine and why, those the run never held, and why the
// run's manifest stays.
func Restore(w io.Writer, address string, res diff.RestoreResult, s *Styles) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Restored %s (%d bytes) of quarantine run %s to %s.\n",
		countOf(len(res.Restored), "file", "files"), res.Bytes, res.RunID, address)
	for _, f := range res.Restored {
		fmt.Fprintf(&b, "  %s %s\n", s.Add("+"), f.Original)
	}
	if len(res.Refused) > 0 {
		fmt.Fprintf(&b, "%s\n", s.Refuse(fmt.Sprintf("Not restored (%d), still in the quarantine:", len(res.Refused))))
		for _, r := range res.Refused {
			fmt.Fprintf(&b, "  %s %s\n", s.Refuse("!"), r)
		}
	}
	if len(res.NotHeld) > 0 {
		fmt.Fprintf(&b, "%s\n", s.Warn(fmt.Sprintf("Listed but never held by this run (not moved by it, not at their original path), left alone (%d):", len(res.NotHeld))))
		for _, p := range res.NotHeld {
			fmt.Fprintf(&b, "  %s %s\n", s.Warn("?"), p)
		}
	}
	if res.ManifestKept != "" {
		fmt.Fprintf(&b, "The run's manifest is kept: %s.\n", res.ManifestKept)
	}
	if len(res.Restored) > 0 {
		// Restored files are still referenced by no snapshot: the next
		// plan finds them again. Say so now, not at the next apply.
		fmt.Fprintf(&b, "\n%s no snapshot of %s references the restored files, so the next plan finds them again as orphan files "+
			"and its apply would quarantine them again. To keep them, add their paths (relative to the table location) to "+
			"orphan_files.exclude, or add them to the table.\n", s.Warn("Note:"), address)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
