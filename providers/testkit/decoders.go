package testkit

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/internal/manifestread"
	"github.com/icewright/icewright/providers/internal/reach"
)

// SameOnBothDecoders walks every snapshot of tbl (DELETED entries too)
// once with iceberg-go's reader and once with the plan's fast decoder
// (reach.DecodeFast) and fails t unless every file comes in the same
// order with the same fields and, for an entry, the same value of every
// field the walk's consumers read (manifestread.Differences). It fails
// too when the fast walk handed a manifest back to iceberg-go's reader
// (a fallback would hide a difference). It returns the entries compared.
func SameOnBothDecoders(t testing.TB, tbl *table.Table) int {
	t.Helper()
	ctx := context.Background()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	md := tbl.Metadata()
	walk := func(dec reach.Decoder, counts *reach.DecodeCounts) []reach.File {
		var out []reach.File
		err := reach.Walk(reach.CountDecodes(ctx, counts), reach.Spec{Meta: md, FS: fsys, Snapshots: reach.AllSnapshots(md), Decoder: dec,
			Consumers: []reach.Consumer{{WithDeleted: true, File: func(f reach.File) error {
				out = append(out, f)
				return nil
			}}}})
		if err != nil {
			t.Fatalf("walk (decoder %d): %v", dec, err)
		}
		return out
	}
	var slow, fast reach.DecodeCounts
	want, got := walk(reach.DecodeVerified, &slow), walk(reach.DecodeFast, &fast)
	if fast.Fallback.Load() != 0 || fast.Verified.Load() != 0 || fast.Fast.Load() != slow.Verified.Load() || slow.FastLists.Load() != 0 {
		t.Fatalf("the fast walk decoded %d manifests fast, %d with iceberg-go (%d fallen back); iceberg-go's walk %d",
			fast.Fast.Load(), fast.Verified.Load(), fast.Fallback.Load(), slow.Verified.Load())
	}
	if len(got) != len(want) {
		t.Fatalf("the fast walk reached %d files, iceberg-go's %d", len(got), len(want))
	}
	entries := 0
	for i, w := range want {
		g := got[i]
		gf, wf := g, w
		gf.Entry, wf.Entry = nil, nil
		if gf != wf {
			t.Fatalf("file %d: fast %+v, iceberg-go %+v", i, gf, wf)
		}
		if (w.Entry == nil) != (g.Entry == nil) {
			t.Fatalf("file %d (%s): entry %v, iceberg-go's %v", i, w.Path, g.Entry, w.Entry)
		}
		if w.Entry != nil {
			entries++
			if d := manifestread.Differences(w.Entry, g.Entry); len(d) > 0 {
				t.Fatalf("%s", fmt.Sprintf("file %d (%s): %s", i, w.Path, strings.Join(d, "; ")))
			}
		}
	}
	return entries
}
