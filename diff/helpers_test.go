package diff

import (
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/config"
)

// at is an attribute range on a line of main.icewright.hcl.
func at(line int) hcl.Range {
	return hcl.Range{Filename: "/cfg/main.icewright.hcl", Start: hcl.Pos{Line: line, Column: 3}, End: hcl.Pos{Line: line, Column: 20}}
}

func set[T any](v T, line int) config.Setting[T] {
	return config.Setting[T]{Value: v, Set: true, Origin: at(line), Block: `policy "base"`}
}

func def[T any](v T) config.Setting[T] {
	return config.Setting[T]{Value: v}
}

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

// ago is a timestamp d before testNow.
func ago(d time.Duration) int64 { return testNow.Add(-d).UnixMilli() }

func ptr[T any](v T) *T { return &v }

// emptyPolicy declares nothing: a table under it is always in policy.
func emptyPolicy() *config.Effective {
	return &config.Effective{Address: "lake.db.t", PolicyName: "base", MatchRange: at(1)}
}

// fullPolicy declares every block with values that main.icewright.hcl sets on
// known lines, so reasons can be checked.
func fullPolicy() *config.Effective {
	p := emptyPolicy()
	p.TargetFileSize = set(int64(100), 3)
	p.Compaction = config.CompactionPolicy{
		Declared: true, DeclRange: at(5),
		Strategy:            def("binpack"),
		MinInputFiles:       set(2, 6),
		MinFileSize:         def(int64(75)),
		MaxFileSize:         def(int64(180)),
		DeleteFileThreshold: def(5),
	}
	p.SnapshotRetention = config.RetentionPolicy{
		Declared: true, DeclRange: at(10),
		MaxAge:       set(2*day, 11),
		MinSnapshots: set(1, 12),
	}
	p.OrphanFiles = config.OrphanPolicy{
		Declared: true, DeclRange: at(20),
		OlderThan:        set(3*day, 21),
		MaxOrphanRatio:   set(0.25, 22),
		MinFilesForRatio: def(0),
		PrefixMismatch:   def("error"),
	}
	p.Manifests = config.ManifestPolicy{
		Declared: true, DeclRange: at(30),
		MaxCount:   set(3, 31),
		TargetSize: def(int64(8 << 20)),
	}
	return p
}

// snap builds a snapshot with the given parent (0 = none) and age.
func snap(id, parent int64, age time.Duration) Snapshot {
	s := Snapshot{ID: id, SequenceNumber: id, TimestampMs: ago(age), Operation: "append"}
	if parent != 0 {
		s.ParentID = ptr(parent)
	}
	return s
}

func branch(name string, id int64) Ref { return Ref{Name: name, Type: "branch", SnapshotID: id} }
func tag(name string, id int64) Ref    { return Ref{Name: name, Type: "tag", SnapshotID: id} }

// linear is a table whose main branch has one snapshot per age, oldest
// first, ids 1..n.
func linear(ages ...time.Duration) *TableState {
	st := &TableState{Address: "lake.db.t", UUID: "u-1", Properties: map[string]string{}}
	for i, a := range ages {
		st.Snapshots = append(st.Snapshots, snap(int64(i+1), int64(i), a))
	}
	if n := len(ages); n > 0 {
		st.CurrentSnapshotID = ptr(int64(n))
		st.Refs = []Ref{branch("main", int64(n))}
	}
	return st
}
