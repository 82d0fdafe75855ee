package diff

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/icewright/icewright/config"
)

// Kind is what icewright knows about one action kind apart from how to plan it
// (its planner in this package), run it (its executor, providers) and show
// it (its view, cmd/icewright/internal/views): its place in the order, whether
// it is destructive, its payload, its validation, the commit it shares and
// how a fresh plan is bounded by an approved one (docs/design.md §5.1, §5.3).
// kinds below is the one list; the plan file, apply, the executors and the
// views read it, and a test in each fails when a kind lacks its piece.
type Kind struct {
	Type ActionType
	// Destructive kinds delete or move files. The plan marks them, and
	// apply runs them only within what the approved plan listed (bound).
	Destructive bool
	// Batch names a commit that adjacent kinds share: actions of kinds
	// with the same non-empty Batch that follow each other in a plan go to
	// their executor together and land in one commit.
	Batch string

	// plan is the kind's planner: the action a table needs (ok false: none)
	// and the refusals the kind's safety rules make, which count whether
	// or not an action is planned.
	plan func(in *planInput) (a Action, refusals []Refusal, ok bool)
	// commits is how many snapshots a planned action adds on main (nil:
	// none), which the kinds after it count in (expiry, manifests).
	commits func(*Action) int
	// estimate is what a planned action costs and frees, from the
	// metadata the plan read (estimate.go, docs/cost.md); nil Usage: the
	// table state lacks what it needs.
	estimate func(in *planInput, a *Action) *Usage

	payloadType reflect.Type
	payload     func(*Action) any // the payload, nil when the pointer is unset
	alloc       func(*Action) any // sets a fresh payload and returns it
	validate    func(*Action) error
	// bound cuts an approved action down to what the fresh plan still
	// allows; nil: the fresh action runs (the kind recomputes its work on
	// the table as it is, docs/design.md §5.3).
	bound func(approved, fresh Action) Bounded
	// secrets replaces, in a copy of the action, the digests of secret
	// values by the values (docs/design.md §3.4, Secrets); nil: none.
	secrets func(pol *config.Effective, a *Action) error
}

// ActionType values, in the order actions run.
type ActionType string

const (
	UpdateProperties ActionType = "update_properties"
	ReplaceSortOrder ActionType = "replace_sort_order"
	// RemoveDanglingDeletes runs before compact: the rewrite's plan then
	// counts no delete file that applies to nothing.
	RemoveDanglingDeletes ActionType = "remove_dangling_deletes"
	// AgePartitions runs before compact: compaction then plans the table
	// as ageing left it (its executor plans again at apply).
	AgePartitions     ActionType = "age_partitions"
	Compact           ActionType = "compact"
	RewriteManifests  ActionType = "rewrite_manifests"
	ExpireSnapshots   ActionType = "expire_snapshots"
	RemoveOrphanFiles ActionType = "remove_orphan_files"
)

// Action is one step. Exactly one payload pointer is set, matching Type;
// its JSON form is flat (payload fields beside type/destructive/reason).
type Action struct {
	Type        ActionType `json:"type"`
	Destructive bool       `json:"destructive"`
	Reason      string     `json:"reason"` // "snapshot_retention.max_age = \"2d\" (main.icewright.hcl:12)"
	// Estimate is what the action is expected to cost and free (diff.Usage),
	// from the metadata the plan read; nil when not estimated.
	Estimate *Usage `json:"-"`

	Properties      *PropertiesChange `json:"-"`
	SortOrder       *SortOrderChange  `json:"-"`
	DanglingDeletes *DanglingDeletes  `json:"-"`
	PartitionAgeing *PartitionAgeing  `json:"-"`
	Compact         *CompactAction    `json:"-"`
	Manifests       *ManifestsAction  `json:"-"`
	Expire          *ExpireAction     `json:"-"`
	Orphans         *OrphansAction    `json:"-"`
}

// kinds is every action kind, in the order actions run and are planned
// (docs/design.md §5.1). Adding a kind touches this file (its constant and
// payload field above, its entry here with its planner and validation),
// plus its executor in providers and its view; the planner and payload
// type may sit here or in a file of their own, as the existing kinds'
// do. PlanTable runs the planners in this order; tests in diff, providers
// and the views fail when a kind lacks a piece.
var kinds = []Kind{
	kind(UpdateProperties, func(a *Action) **PropertiesChange { return &a.Properties }, rules[PropertiesChange]{
		batch: "metadata", validate: validateProperties, secrets: propertySecrets,
		estimate: func(in *planInput, _ *PropertiesChange) *Usage { return estimateMetadata(in) },
		plan: func(in *planInput) (Action, []Refusal, bool) {
			a, ok := planProperties(in.pol, in.st)
			return a, nil, ok
		}}),
	kind(ReplaceSortOrder, func(a *Action) **SortOrderChange { return &a.SortOrder }, rules[SortOrderChange]{
		batch: "metadata", validate: validateSortOrder,
		estimate: func(in *planInput, _ *SortOrderChange) *Usage { return estimateMetadata(in) },
		plan: func(in *planInput) (Action, []Refusal, bool) {
			return planSortOrder(in.pol, in.st)
		}}),
	kind(RemoveDanglingDeletes, func(a *Action) **DanglingDeletes { return &a.DanglingDeletes }, rules[DanglingDeletes]{
		validate: validateDangling, estimate: estimateDangling,
		plan: func(in *planInput) (Action, []Refusal, bool) {
			return planDangling(in.pol, in.st)
		},
		commits: func(*DanglingDeletes) int { return 1 }}),
	kind(AgePartitions, func(a *Action) **PartitionAgeing { return &a.PartitionAgeing }, rules[PartitionAgeing]{
		validate: validateAgeing, bound: boundAgeing, estimate: estimateAgeing,
		plan: func(in *planInput) (Action, []Refusal, bool) {
			return planAgeing(in.pol, in.st)
		},
		commits: func(*PartitionAgeing) int { return 1 }}),
	kind(Compact, func(a *Action) **CompactAction { return &a.Compact }, rules[CompactAction]{
		validate: validateCompact, bound: boundCompact, estimate: estimateCompact,
		plan: func(in *planInput) (Action, []Refusal, bool) {
			a, _, delegated, ok := planCompactDelegating(in.pol, in.st)
			refusals := append(compactRefusals(in.pol, in.st), delegated...)
			if ok {
				if why := compactBlocked(in.pol, in.st); why != "" {
					return Action{}, append(refusals, Refusal{Action: string(Compact), Reason: why}), false
				}
			}
			return a, refusals, ok
		},
		commits: func(c *CompactAction) int { return c.Commits }}),
	kind(RewriteManifests, func(a *Action) **ManifestsAction { return &a.Manifests }, rules[ManifestsAction]{
		validate: validateManifests, estimate: estimateManifests,
		plan: func(in *planInput) (Action, []Refusal, bool) {
			return planManifests(in.pol, in.st, in.compact, in.addedOnMain)
		},
		commits: func(*ManifestsAction) int { return 1 }}),
	// Expiry and orphans see the properties update_properties leaves
	// (planInput.props).
	kind(ExpireSnapshots, func(a *Action) **ExpireAction { return &a.Expire }, rules[ExpireAction]{
		destructive: true, validate: validateExpire, bound: boundExpire, estimate: estimateExpire,
		plan: func(in *planInput) (Action, []Refusal, bool) {
			return planExpire(in.pol, in.st, in.props, in.addedOnMain, in.now)
		}}),
	kind(RemoveOrphanFiles, func(a *Action) **OrphansAction { return &a.Orphans }, rules[OrphansAction]{
		destructive: true, validate: validateOrphans, bound: boundOrphans, estimate: estimateOrphans,
		plan: func(in *planInput) (Action, []Refusal, bool) {
			return planOrphans(in.pol, in.st, in.props, in.now)
		}}),
}

// planInput is what every planner reads: the policy, the observed table,
// the clock, the properties the plan leaves (update_properties applied)
// and the snapshots the actions planned so far add on main. first says
// that no action planned so far commits: the estimates' loads of the
// metadata file read it as stored (metadataRead).
type planInput struct {
	pol         *config.Effective
	st          *TableState
	now         time.Time
	props       map[string]string
	addedOnMain int
	first       bool
	// compact is the plan's compaction (nil: none), which the manifest
	// rewrite after it sees the manifests of (manifestsAfterCompaction).
	compact *CompactAction
}

// rules are a kind's facts with its payload type P (see Kind).
type rules[P any] struct {
	destructive bool
	batch       string
	validate    func(*P) error                                // required
	plan        func(in *planInput) (Action, []Refusal, bool) // required
	commits     func(*P) int
	estimate    func(in *planInput, p *P) *Usage // required
	bound       func(approved, fresh Action) Bounded
	// secrets returns the payload with the values a plan holds only as
	// digests taken from the configuration; nil: the kind holds none.
	secrets func(pol *config.Effective, p *P) (*P, error)
}

// kind builds a Kind whose payload is the Action field that field points to.
func kind[P any](t ActionType, field func(*Action) **P, r rules[P]) Kind {
	k := Kind{
		Type: t, Destructive: r.destructive, Batch: r.batch,
		payloadType: reflect.TypeFor[P](),
		payload: func(a *Action) any {
			if p := *field(a); p != nil {
				return p
			}
			return nil
		},
		alloc: func(a *Action) any {
			p := new(P)
			*field(a) = p
			return p
		},
		validate: func(a *Action) error { return r.validate(*field(a)) },
		plan:     r.plan,
		bound:    r.bound,
	}
	if r.estimate != nil {
		k.estimate = func(in *planInput, a *Action) *Usage {
			if p := *field(a); p != nil {
				return r.estimate(in, p)
			}
			return nil
		}
	}
	if r.commits != nil {
		k.commits = func(a *Action) int {
			if p := *field(a); p != nil {
				return r.commits(p)
			}
			return 0
		}
	}
	if r.secrets != nil {
		k.secrets = func(pol *config.Effective, a *Action) error {
			p, err := r.secrets(pol, *field(a))
			if err == nil {
				*field(a) = p
			}
			return err
		}
	}
	return k
}

// Kinds lists every action type in docs/design.md §5.1 order.
func Kinds() []ActionType {
	out := make([]ActionType, len(kinds))
	for i, k := range kinds {
		out[i] = k.Type
	}
	return out
}

// KindOf returns the kind of t; ok is false for a type this icewright does not
// know (a plan from a newer one).
func KindOf(t ActionType) (Kind, bool) {
	for _, k := range kinds {
		if k.Type == t {
			return k, true
		}
	}
	return Kind{}, false
}

// Order is t's position in docs/design.md §5.1, from 1; 0 for an unknown type.
func (t ActionType) Order() int {
	for i, k := range kinds {
		if k.Type == t {
			return i + 1
		}
	}
	return 0
}

// Known reports whether this icewright knows the type.
func (t ActionType) Known() bool { return t.Order() > 0 }

// Destructive reports whether actions of type t delete or move files.
func (t ActionType) Destructive() bool {
	k, _ := KindOf(t)
	return k.Destructive
}

// Batch is the commit t shares with adjacent kinds ("" for none).
func (t ActionType) Batch() string {
	k, _ := KindOf(t)
	return k.Batch
}

// PayloadType is the struct type of t's payload, nil for an unknown type.
func (t ActionType) PayloadType() reflect.Type {
	k, _ := KindOf(t)
	return k.payloadType
}

// Payload returns the action's payload (a pointer to its kind's payload
// type), or nil when it is unset or the type is unknown.
func (a *Action) Payload() any {
	if k, ok := KindOf(a.Type); ok {
		return k.payload(a)
	}
	return nil
}

// Validate checks the action's structure: a known type, the payload its
// type names, and that payload's own rules (counts that agree with lists,
// no duplicate ids or paths, the orphan age floor). It does not check the
// destructive flag against the kind; a plan's validation does.
func (a *Action) Validate() error {
	k, ok := KindOf(a.Type)
	if !ok {
		return fmt.Errorf("unknown type %q", a.Type)
	}
	return k.validate(a)
}

// WithSecrets returns the action to execute: a plan holds secret property
// values only as digests (PropertiesChange.Sensitive), so they come from
// the configuration, which must still hold the value the plan was made
// with (else an error: the plan is stale). The action itself is not
// changed.
func (a Action) WithSecrets(pol *config.Effective) (Action, error) {
	k, ok := KindOf(a.Type)
	if !ok || k.secrets == nil || k.payload(&a) == nil {
		return a, nil
	}
	if err := k.secrets(pol, &a); err != nil {
		return Action{}, err
	}
	return a, nil
}

// propertySecrets is WithSecrets for update_properties.
func propertySecrets(pol *config.Effective, ch *PropertiesChange) (*PropertiesChange, error) {
	if len(ch.Sensitive) == 0 {
		return ch, nil
	}
	out := *ch
	out.Set = maps.Clone(ch.Set)
	for _, k := range ch.Sensitive {
		digest, ok := ch.Set[k]
		if !ok {
			continue // only in Before: a removed key
		}
		want, ok := pol.DerivedProperties[k]
		if !ok || config.SecretDigest(want.Value) != digest {
			return nil, fmt.Errorf("the secret value of property %q in the configuration is not the one the plan was made with", k)
		}
		out.Set[k] = want.Value
	}
	return &out, nil
}

// Bounded is an approved action cut down to what a fresh plan of the table
// still allows (docs/design.md §5.3).
type Bounded struct {
	Action Action
	// NotApplied says what the approved action had that no longer runs.
	NotApplied []string
	// Skip, when set, is why nothing of the action runs.
	Skip string
}

// Bound is the action to run for an approved action of a table that changed
// since the plan, given the fresh plan's action of the same type: for a
// destructive kind, only what both list; for the others, the fresh action.
func Bound(approved, fresh Action) Bounded {
	if k, ok := KindOf(approved.Type); ok && k.bound != nil {
		return k.bound(approved, fresh)
	}
	return Bounded{Action: fresh}
}

func validateProperties(pc *PropertiesChange) error {
	if pc == nil || len(pc.Set)+len(pc.Remove) == 0 {
		return errors.New("nothing to set or remove")
	}
	return nil
}

func validateSortOrder(so *SortOrderChange) error {
	if so == nil {
		return errors.New("no sort order payload")
	}
	if len(so.Fields) != len(so.After) {
		return errors.New("fields and after disagree")
	}
	return nil
}

func validateCompact(c *CompactAction) error {
	if c == nil || c.InputFiles <= 0 {
		return errors.New("no input files")
	}
	seen := map[string]bool{}
	for i, g := range c.Groups {
		if len(g.Files) != g.InputFiles {
			return fmt.Errorf("group %d names %d files for %d input files", i+1, len(g.Files), g.InputFiles)
		}
		for _, f := range g.Files {
			if f == "" || seen[f] {
				return fmt.Errorf("group %d: file %q is empty or in two groups", i+1, f)
			}
			seen[f] = true
		}
	}
	return nil
}

func validateManifests(m *ManifestsAction) error {
	if m == nil {
		return errors.New("no manifests payload")
	}
	return nil
}

func validateExpire(e *ExpireAction) error {
	if e == nil || len(e.SnapshotIDs)+len(e.RefsToRemove) == 0 {
		return errors.New("no snapshot ids or refs")
	}
	ids := slices.Clone(e.SnapshotIDs)
	slices.Sort(ids)
	if len(slices.Compact(ids)) != len(e.SnapshotIDs) {
		return errors.New("a snapshot id is listed twice")
	}
	return nil
}

func validateOrphans(o *OrphansAction) error {
	if o == nil || len(o.Paths)+len(o.PurgeRuns) == 0 {
		return errors.New("no paths and no quarantine runs to purge")
	}
	runs := map[string]bool{}
	for _, r := range o.PurgeRuns {
		if r.RunID == "" || r.RunID == "." || r.RunID == ".." || strings.ContainsAny(r.RunID, "/\\") || runs[r.RunID] {
			return fmt.Errorf("purge run id %q is invalid or listed twice", r.RunID)
		}
		runs[r.RunID] = true
		if !strings.HasPrefix(r.ManifestDigest, "sha256:") {
			return fmt.Errorf("purge run %s has no manifest digest", r.RunID)
		}
	}
	if o.Count != len(o.Paths) {
		return fmt.Errorf("count %d but %d paths", o.Count, len(o.Paths))
	}
	if time.Duration(o.OlderThanMs)*time.Millisecond < minOrphanAge {
		return fmt.Errorf("older_than_ms %d is below 24h", o.OlderThanMs)
	}
	ps := slices.Clone(o.Paths)
	slices.Sort(ps)
	if len(slices.Compact(ps)) != len(o.Paths) {
		return errors.New("a path is listed twice")
	}
	for _, p := range o.Paths {
		if !strings.HasPrefix(p, "/") && !strings.Contains(p, "://") {
			return fmt.Errorf("path %q is not absolute", p)
		}
	}
	return nil
}
