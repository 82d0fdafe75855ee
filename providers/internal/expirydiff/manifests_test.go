package expirydiff

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/providers/testkit"
)

// TestRewriteManifestsMatchesIcebergGo stages iceberg-go's RewriteManifests
// on a real table at many target sizes and requires diff's rewrite_manifests
// to predict the manifest count it leaves, and to plan nothing exactly when
// iceberg-go would report "already optimal".
func TestRewriteManifestsMatchesIcebergGo(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := l.CreateTable(t, "db.events", testkit.TableOptions{Partitioned: true})
	// One manifest per append, of 1 to 40 entries, so lengths differ and
	// the packer's order and lookback matter.
	gen := rand.New(rand.NewPCG(5, 6))
	for i := range 16 {
		spread := []int{1, 1, 2, 12, 40}[gen.IntN(5)]
		var err error
		tbl, err = lakehouse.AppendEvents(ctx, tbl, int64(i*100), 2*spread, testkit.Day0, spread, nil)
		if err != nil {
			t.Fatal(err)
		}
	}

	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mans, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	st := &diff.TableState{CurrentSnapshotID: &tbl.CurrentSnapshot().SnapshotID}
	var total, smallest int64
	for _, m := range mans {
		st.Manifests.Files = append(st.Manifests.Files, diff.ManifestInfo{
			SpecID: int(m.PartitionSpecID()), Data: m.ManifestContent() == iceberg.ManifestContentData, Length: m.Length(),
		})
		st.Manifests.Bytes += m.Length()
		total += m.Length()
		if smallest == 0 || m.Length() < smallest {
			smallest = m.Length()
		}
	}
	st.Manifests.Count = len(mans)
	t.Logf("manifest lengths: %v", st.Manifests.Files)
	if len(mans) < 10 {
		t.Fatalf("only %d manifests; the fixture should have one per append", len(mans))
	}

	r := rand.New(rand.NewPCG(5, 5))
	var noops, merges int
	for c := range 60 {
		target := smallest/2 + r.Int64N(total)
		if c == 0 {
			target = smallest / 2 // nothing fits together: already optimal
		}
		pol := &config.Effective{}
		pol.Manifests = config.ManifestPolicy{
			Declared:   true,
			MaxCount:   config.Setting[int]{Value: 1, Set: true},
			TargetSize: config.Setting[int64]{Value: target, Set: true},
		}
		var planned *diff.ManifestsAction
		for _, a := range diff.PlanTable(pol, st, testTime()).Actions {
			if a.Type == diff.RewriteManifests {
				planned = a.Manifests
			}
		}

		txn := tbl.NewTransaction()
		res, err := txn.RewriteManifests(ctx, table.WithManifestTargetSize(target))
		if err != nil {
			t.Fatalf("target %d: RewriteManifests: %v", target, err)
		}
		if res.IsNoOp() {
			noops++
			if planned != nil {
				t.Fatalf("target %d: iceberg-go is a no-op (%s), diff plans %+v", target, res.NoOpReason, planned)
			}
			continue
		}
		merges++
		staged, err := txn.StagedTable()
		if err != nil {
			t.Fatal(err)
		}
		after, err := staged.CurrentSnapshot().Manifests(fs)
		if err != nil {
			t.Fatal(err)
		}
		if planned == nil || planned.EstimatedManifestsAfter != len(after) {
			t.Fatalf("target %d: iceberg-go leaves %d manifests, diff plans %+v", target, len(after), planned)
		}
	}
	t.Logf("%d manifests; %d targets merge, %d are no-ops", len(mans), merges, noops)
	if merges < 10 || noops < 1 {
		t.Fatalf("coverage too thin: %d merges, %d no-ops", merges, noops)
	}
}
