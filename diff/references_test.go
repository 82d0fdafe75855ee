package diff

import "testing"

// The run's read of other tables' references, as the plan counts it: once,
// by the first table (in the plan's order) whose deletion reads them, of
// every other table; those applied before it after their planned commits;
// the asker's own table only when a later deletion asks too; nothing when
// no deletion reads them (a sweep with nothing to delete, an expiry that
// releases no file).
func TestOtherTablesReferences(t *testing.T) {
	refs := func(meta, lists, listBytes, manifests, manifestBytes int64) *ReferenceReads {
		return &ReferenceReads{MetadataBytes: meta, ManifestReads: ManifestReads{Lists: lists, ListBytes: listBytes, Manifests: manifests, ManifestBytes: manifestBytes}}
	}
	expiry := func(files int64) Action {
		return Action{Type: ExpireSnapshots, Destructive: true, Expire: &ExpireAction{FilesToDelete: files}}
	}
	sweep := func(paths ...string) Action {
		return Action{Type: RemoveOrphanFiles, Destructive: true, Orphans: &OrphansAction{Count: len(paths), Paths: paths}}
	}
	compact := Action{Type: Compact, Compact: &CompactAction{Commits: 1}}
	rewrite := Action{Type: RewriteManifests, Manifests: &ManifestsAction{EstimatedManifestsAfter: 1}}
	// a is applied first and commits a compaction and a manifest rewrite:
	// 2 lists (of 100 bytes on average) and 3 manifests (of 400) more.
	a := TablePlan{Address: "a", Actions: []Action{compact, rewrite}, References: refs(1000, 10, 1000, 10, 4000)}
	b := TablePlan{Address: "b", Actions: []Action{expiry(5)}, References: refs(2000, 4, 800, 2, 600)}
	c := TablePlan{Address: "c", Actions: []Action{}, References: refs(500, 1, 100, 1, 300)}
	aAfter := Usage{Requests: Requests{Get: 1 + 12 + 13}, FilesRead: 26, BytesRead: 1000 + 1200 + 5200}
	bRead := Usage{Requests: Requests{Get: 1 + 4 + 2}, FilesRead: 7, BytesRead: 2000 + 800 + 600}
	cRead := Usage{Requests: Requests{Get: 3}, FilesRead: 3, BytesRead: 900}
	sum := func(us ...Usage) Usage {
		var t Usage
		for _, u := range us {
			t.Add(u)
		}
		return t
	}
	cases := []struct {
		name   string
		tables []TablePlan
		want   Usage
		read   int
	}{
		{"b's expiry asks: a after its commits, and c", []TablePlan{a, b, c}, sum(aAfter, cRead), 2},
		{"no deletion reads them", []TablePlan{a, c}, Usage{}, 0},
		{"an expiry that frees no file does not ask", []TablePlan{a, {Address: "b", Actions: []Action{expiry(0)}, References: b.References}, c}, Usage{}, 0},
		{"a sweep with nothing to delete does not ask", []TablePlan{a, {Address: "b", Actions: []Action{{Type: RemoveOrphanFiles, Orphans: &OrphansAction{}}}, References: b.References}, c}, Usage{}, 0},
		{"a quarantine purge asks", []TablePlan{a, {Address: "b", Actions: []Action{{Type: RemoveOrphanFiles, Orphans: &OrphansAction{PurgeRuns: []PurgeRun{{RunID: "r"}}}}}, References: b.References}, c}, sum(aAfter, cRead), 2},
		{"c's sweep asks too: b is read then, after its commits (none)", []TablePlan{a, b, {Address: "c", Actions: []Action{sweep("x")}, References: c.References}}, sum(aAfter, bRead, cRead), 3},
		{"a table observed without reads is not counted", []TablePlan{{Address: "a", Actions: []Action{compact}}, b, c}, cRead, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got Usage
			reads := OtherTablesReferences(tc.tables)
			for _, r := range reads {
				got.Add(r.Usage)
			}
			if got != tc.want || len(reads) != tc.read {
				t.Errorf("got %+v of %d tables, want %+v of %d", got, len(reads), tc.want, tc.read)
			}
			// The summary counts it once, in the plan's total.
			p := &Plan{Tables: tc.tables}
			Summarize(p)
			if p.Summary.OtherTablesReferences != tc.want || p.Summary.OtherTablesRead != tc.read {
				t.Errorf("summary %+v of %d tables, want %+v", p.Summary.OtherTablesReferences, p.Summary.OtherTablesRead, tc.want)
			}
			if p.Summary.Estimate.Requests.Get != tc.want.Requests.Get || p.Summary.Estimate.BytesRead != tc.want.BytesRead {
				t.Errorf("plan total %+v does not count it (%+v)", p.Summary.Estimate, tc.want)
			}
		})
	}
}

// referenceReads takes the orphan scan's walk of every snapshot when it
// recorded one, else every snapshot's list and the current manifests.
func TestReferenceReadsOfState(t *testing.T) {
	walk := &ManifestReads{Lists: 7, ListBytes: 700, Manifests: 9, ManifestBytes: 2700}
	st := &TableState{MetadataBytes: 1234, Snapshots: make([]Snapshot, 7), Manifests: ManifestStats{Count: 3, Bytes: 900}, Orphans: &OrphanScan{Reads: walk}}
	if got := referenceReads(st); *got != (ReferenceReads{MetadataBytes: 1234, ManifestReads: *walk}) {
		t.Errorf("with the scan's walk: %+v", got)
	}
	st.Orphans = nil
	if got := referenceReads(st); *got != (ReferenceReads{MetadataBytes: 1234, ManifestReads: ManifestReads{Lists: 7, Manifests: 3, ManifestBytes: 900}}) {
		t.Errorf("without it: %+v", got)
	}
}
