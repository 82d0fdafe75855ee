package diff

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/icewright/icewright/config"
)

// TestEveryKindIsComplete enumerates the action kinds and checks that each
// has what the plan file and apply need from diff: its place in the
// docs/design.md §5.1 order, its destructiveness, a payload that decodes, a
// validation that refuses a missing payload, and for a destructive kind
// the rule that bounds it by the approved plan. The executor and the view
// of each kind are checked the same way in providers and views.
func TestEveryKindIsComplete(t *testing.T) {
	want := []ActionType{UpdateProperties, ReplaceSortOrder, RemoveDanglingDeletes, AgePartitions, Compact, RewriteManifests, ExpireSnapshots, RemoveOrphanFiles}
	if got := Kinds(); !slices.Equal(got, want) {
		t.Fatalf("kinds %v, docs/design.md §5.1 says %v", got, want)
	}
	destructive := map[ActionType]bool{ExpireSnapshots: true, RemoveOrphanFiles: true}
	for i, typ := range Kinds() {
		t.Run(string(typ), func(t *testing.T) {
			k, ok := KindOf(typ)
			if !ok || !typ.Known() {
				t.Fatal("not known")
			}
			if typ.Order() != i+1 {
				t.Errorf("order %d, want %d", typ.Order(), i+1)
			}
			if typ.Destructive() != destructive[typ] {
				t.Errorf("destructive %v", typ.Destructive())
			}
			if k.plan == nil {
				t.Error("no planner: PlanTable would never plan the kind")
			}
			if k.estimate == nil {
				t.Error("no estimate rule: its actions would carry no estimate (estimate.go)")
			}
			if k.Destructive && k.bound == nil {
				t.Error("destructive without a bound: apply would run the fresh plan's list, not the approved one")
			}
			pt := typ.PayloadType()
			if pt == nil || pt.Kind() != reflect.Struct {
				t.Fatalf("payload type %v", pt)
			}
			a := Action{Type: typ}
			if a.Payload() != nil {
				t.Error("payload set on an empty action")
			}
			if err := a.Validate(); err == nil {
				t.Error("an action without its payload validates")
			}
			p := k.alloc(&a)
			if reflect.TypeOf(p) != reflect.PointerTo(pt) || a.Payload() != p {
				t.Errorf("payload %T is not the allocated *%v", a.Payload(), pt)
			}
			b, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			var back Action
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back.Type != typ || reflect.TypeOf(back.Payload()) != reflect.PointerTo(pt) {
				t.Errorf("decoded %s into %T", b, back.Payload())
			}
		})
	}
	unknown := ActionType("drop_table")
	a := Action{Type: unknown}
	if unknown.Known() || unknown.Order() != 0 || unknown.Destructive() || unknown.PayloadType() != nil || a.Payload() != nil {
		t.Error("an unknown type is described")
	}
	if a.Validate() == nil {
		t.Error("an unknown type validates")
	}
	if _, err := json.Marshal(a); err == nil {
		t.Error("an unknown type marshals")
	}
	if err := json.Unmarshal([]byte(`{"type":"drop_table","destructive":true,"reason":""}`), &a); err == nil {
		t.Error("an unknown type decodes")
	}
}

// TestBoundKeepsOnlyApproved: a destructive kind's bound never adds an
// item the approved action did not list, whatever the fresh plan has.
func TestBoundKeepsOnlyApproved(t *testing.T) {
	approved := Action{Type: ExpireSnapshots, Destructive: true, Expire: &ExpireAction{SnapshotIDs: []int64{1, 2}}}
	fresh := Action{Type: ExpireSnapshots, Destructive: true, Expire: &ExpireAction{SnapshotIDs: []int64{2, 3}}}
	if b := Bound(approved, fresh); !slices.Equal(b.Action.Expire.SnapshotIDs, []int64{2}) || b.Skip != "" {
		t.Errorf("expire bound %+v", b)
	}
	approved = Action{Type: RemoveOrphanFiles, Destructive: true, Orphans: &OrphansAction{Count: 1, Paths: []string{"/t/a"}}}
	fresh = Action{Type: RemoveOrphanFiles, Destructive: true, Orphans: &OrphansAction{Count: 1, Paths: []string{"/t/b"}}}
	if b := Bound(approved, fresh); len(b.Action.Orphans.Paths) != 0 || b.Skip == "" {
		t.Errorf("orphans bound %+v", b)
	}
	// A compaction runs the approved groups whose partition the fresh
	// plan still compacts, never the fresh plan's files: day=2 is no
	// longer planned, and e (arrived since) is in no approved group.
	group := func(part string, files ...string) CompactGroup {
		return CompactGroup{Partition: part, InputFiles: len(files), InputBytes: 10 * int64(len(files)), EstimatedOutputFiles: 1, Files: files}
	}
	approved = Action{Type: Compact, Compact: &CompactAction{InputFiles: 4, InputBytes: 40, Partitions: 2, EstimatedOutputFiles: 2,
		Groups: []CompactGroup{group("day=1", "a", "b"), group("day=2", "c", "d")}}}
	fresh = Action{Type: Compact, Compact: &CompactAction{InputFiles: 5, Partitions: 2,
		Groups: []CompactGroup{group("day=1", "a", "b", "e"), group("day=3", "f", "g")}}}
	b := Bound(approved, fresh)
	if c := b.Action.Compact; b.Skip != "" || len(c.Groups) != 1 || !slices.Equal(c.Groups[0].Files, []string{"a", "b"}) || c.InputFiles != 2 || c.InputBytes != 20 || c.Partitions != 1 ||
		len(b.NotApplied) != 1 || !strings.Contains(b.NotApplied[0], `compaction group 2 (spec 0, partition "day=2", 2 files)`) {
		t.Errorf("compact bound %+v, %+v", b, b.Action.Compact)
	}
	if len(approved.Compact.Groups) != 2 {
		t.Errorf("the approved action changed: %+v", approved.Compact)
	}
	fresh.Compact.Groups = []CompactGroup{group("day=3", "f", "g")}
	if b := Bound(approved, fresh); b.Skip == "" || len(b.NotApplied) != 2 {
		t.Errorf("compact bound with no partition left %+v", b)
	}
}

// TestValidateCompactFiles: a saved plan's compaction group names as many
// files as it counts, each once across the action.
func TestValidateCompactFiles(t *testing.T) {
	for _, c := range []struct {
		groups []CompactGroup
		want   string
	}{
		{[]CompactGroup{{InputFiles: 2, Files: []string{"a", "b"}}, {InputFiles: 1, Files: []string{"c"}}}, ""},
		{[]CompactGroup{{InputFiles: 2, Files: []string{"a"}}}, "group 1 names 1 files for 2 input files"},
		{[]CompactGroup{{InputFiles: 1, Files: []string{"a"}}, {InputFiles: 1, Files: []string{"a"}}}, "in two groups"},
		{[]CompactGroup{{InputFiles: 1, Files: []string{""}}}, "empty"},
	} {
		err := validateCompact(&CompactAction{InputFiles: 3, Groups: c.groups})
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.groups, err, c.want)
		}
	}
}

// TestWithSecrets: a plan holds a secret property value only as its
// digest; the action to execute takes the value from the configuration
// when it is still the one planned, is refused when it is not, and the
// approved action is left as it was.
func TestWithSecrets(t *testing.T) {
	a := Action{Type: UpdateProperties, Properties: &PropertiesChange{
		Set:       map[string]string{"s3.secret-access-key": config.SecretDigest("hunter2"), "k": "v"},
		Before:    map[string]string{},
		Sensitive: []string{"s3.secret-access-key"},
	}}
	pol := &config.Effective{DerivedProperties: map[string]config.Setting[string]{"s3.secret-access-key": {Value: "hunter2"}}}
	got, err := a.WithSecrets(pol)
	if err != nil {
		t.Fatal(err)
	}
	if got.Properties.Set["s3.secret-access-key"] != "hunter2" || got.Properties.Set["k"] != "v" {
		t.Errorf("resolved %v", got.Properties.Set)
	}
	if a.Properties.Set["s3.secret-access-key"] != config.SecretDigest("hunter2") {
		t.Error("the approved action was changed")
	}
	pol.DerivedProperties["s3.secret-access-key"] = config.Setting[string]{Value: "other"}
	if _, err := a.WithSecrets(pol); err == nil {
		t.Error("another secret value in the configuration was accepted")
	}
	// Kinds without secrets pass through.
	c := Action{Type: Compact, Compact: &CompactAction{InputFiles: 2}}
	if got, err := c.WithSecrets(pol); err != nil || got.Compact != c.Compact {
		t.Errorf("compact: %v", err)
	}
}

// TestPlanTableRunsEveryKind adds a toy kind to the list, as a new kind
// would be added (docs/design.md §5.1), and checks that PlanTable plans it
// in its place with no change of its own, that the commits it declares
// reach the kinds after it, and that its refusals show in the plan.
func TestPlanTableRunsEveryKind(t *testing.T) {
	saved := slices.Clone(kinds)
	t.Cleanup(func() { kinds = saved })
	const toy ActionType = "toy_rewrite"
	var seenAdded []int
	// The toy reuses the manifests payload field: a real kind adds its own.
	toyKind := kind(toy, func(a *Action) **ManifestsAction { return &a.Manifests }, rules[ManifestsAction]{
		validate: validateManifests,
		plan: func(in *planInput) (Action, []Refusal, bool) {
			seenAdded = append(seenAdded, in.addedOnMain)
			return Action{Type: toy, Reason: "toy", Manifests: &ManifestsAction{ManifestsBefore: 2}},
				[]Refusal{{Action: string(toy), Reason: "toy refusal"}}, true
		},
		commits: func(*ManifestsAction) int { return 5 },
	})
	probe := kind(ActionType("probe"), func(a *Action) **ManifestsAction { return &a.Manifests }, rules[ManifestsAction]{
		validate: validateManifests,
		plan: func(in *planInput) (Action, []Refusal, bool) {
			seenAdded = append(seenAdded, in.addedOnMain)
			return Action{}, nil, false
		},
	})
	kinds = append(slices.Insert(slices.Clone(saved), 2, toyKind), probe)
	tp := PlanTable(emptyPolicy(), linear(10*day, 9*day), testNow)
	if len(tp.Actions) != 1 || tp.Actions[0].Type != toy {
		t.Fatalf("actions %+v, want the toy kind alone", tp.Actions)
	}
	if toy.Order() != 3 {
		t.Errorf("toy order %d, want 3", toy.Order())
	}
	if len(tp.Refusals) != 1 || tp.Refusals[0].Reason != "toy refusal" {
		t.Errorf("refusals %+v", tp.Refusals)
	}
	if !slices.Equal(seenAdded, []int{0, 5}) {
		t.Errorf("snapshots added on main seen by the toy and the probe after it: %v, want [0 5]", seenAdded)
	}
}
