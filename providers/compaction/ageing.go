package compaction

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/internal/bound"
	"github.com/icewright/icewright/providers/internal/reach"
)

// AgeingRule is a policy's partition_ageing block: partitions of the
// table's default spec whose From window lies in a To window that ended at
// least After before now are rewritten into a spec where that field is To.
type AgeingRule struct {
	From, To iceberg.Transform
	After    time.Duration
	// Default also makes the coarser spec the table's default spec.
	Default bool
}

// AgeingGroup is one partition of the coarser spec and the files of the
// finer partitions that go into it.
type AgeingGroup struct {
	Group
	// Name is the coarser partition ("ts_month=2024-01"), Sources the
	// finer ones it takes, sorted.
	Name    string
	Sources []string
	// Records are the inputs' records (deletes not applied).
	Records int64
}

// Ageing is what partition ageing does to a table: the spec it writes
// (Spec; NewSpec when the commit adds it), and its groups. A table the
// rule cannot apply to has a Refusal and no groups.
type Ageing struct {
	SourceSpecID int
	// Field is the default spec's field of the rule's From transform, on
	// Column.
	Field, Column string
	Spec          iceberg.PartitionSpec
	NewSpec       bool
	// SetsDefault: the rule makes Spec the default spec and it is not yet.
	SetsDefault bool
	// Cutoff is now minus After: a coarser window that ends at or before
	// it is aged, whole (a coarser partition is never split between specs).
	Cutoff  time.Time
	Groups  []AgeingGroup
	Refusal string
}

// PlanAgeing plans partition ageing on tbl's current snapshot at now. The
// coarser spec is the source spec (the default one, see ageingSpec) with
// its one field of the From transform replaced by the To transform of the
// same column, every other field kept with its id and value: an identity,
// bucket or truncate field needs no re-evaluation, because each row's
// value of it does not change. A table where that spec is not unambiguous
// gets a Refusal: a format v1 table (its specs keep removed fields as
// void), a default spec with no field of the From transform or more than
// one (which one dates the partition?), or with another time field on the
// same column; so does a file the rule cannot place or rewrite.
func PlanAgeing(ctx context.Context, tbl *table.Table, rule AgeingRule, now time.Time) (*Ageing, error) {
	a, field := ageingSpec(tbl.Metadata(), rule)
	if a.Refusal != "" {
		return a, nil
	}
	a.Cutoff = now.Add(-rule.After)
	aged, _ := reach.WindowValue(rule.To, a.Cutoff) // windows before this one ended by the cutoff
	src := *tbl.Metadata().PartitionSpecByID(a.SourceSpecID)
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return a, nil
	}
	opts := []table.ScanOption{table.WithSnapshotID(snap.SnapshotID)}
	if f := agedFilter(tbl.Schema(), a.Column, rule.To, aged); f != nil {
		// Only prunes (manifests and files wholly after the aged windows);
		// each file is still decided by its partition below.
		opts = append(opts, table.WithRowFilter(f))
	}
	tasks, err := tbl.Scan(opts...).PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan the table's files: %w", err)
	}
	var newID int // the coarser field's id in the target spec
	for _, f := range a.Spec.Fields() {
		if f.SourceID() == field.SourceID() && reach.TimeRank(f.Transform) == reach.TimeRank(rule.To) {
			newID = f.FieldID
		}
	}
	byKey := map[string]*AgeingGroup{}
	sources := map[string]map[string]bool{}
	for _, t := range wholeFiles(tasks) {
		df := t.File
		if int(df.SpecID()) != a.SourceSpecID || df.Partition()[field.FieldID] == nil {
			continue // another spec, or no time to age by
		}
		part, err := reach.Coarsen(src, a.Spec, df.Partition())
		if err != nil {
			// A value the rule cannot place (before 1970): no group of
			// this table is safe to plan without it.
			return &Ageing{SourceSpecID: a.SourceSpecID, Refusal: fmt.Sprintf("file %s: %v", df.FilePath(), err)}, nil
		}
		if v, ok := reach.TimeOrdinal(part[newID]); !ok || v >= aged {
			continue
		}
		if tbl.Metadata().Version() >= 3 && t.FirstRowID == nil {
			// checkGroup would refuse the run: the rows' ids could not be
			// carried over. Leaving the file out would split its window.
			return &Ageing{SourceSpecID: a.SourceSpecID, Refusal: fmt.Sprintf("format v3 file %s has no first_row_id: rewriting it would not preserve row lineage", df.FilePath())}, nil
		}
		k := partKey(a.Spec.ID(), part)
		g := byKey[k]
		if g == nil {
			g = &AgeingGroup{Group: Group{SpecID: a.SourceSpecID, Target: &reach.Target{SpecID: a.Spec.ID(), Partition: part}},
				Name: specPath(a.Spec, part, tbl.Schema())}
			g.Partition = g.Name
			byKey[k] = g
			sources[k] = map[string]bool{}
		}
		g.Tasks = append(g.Tasks, t)
		g.Records += df.Count()
		sources[k][partitionName(tbl, df)] = true
	}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		g := byKey[k]
		g.Sources = slices.Sorted(maps.Keys(sources[k]))
		a.Groups = append(a.Groups, *g)
	}
	slices.SortFunc(a.Groups, func(x, y AgeingGroup) int { return strings.Compare(x.Name, y.Name) })
	return a, nil
}

// ageingSpec finds the source spec and the coarser spec of rule on md.
// The source is the default spec when it has a field of the From
// transform. A default spec with none may itself be the coarser spec of
// an earlier one, made the default (rule.Default, or by hand): then the
// files still in that earlier spec are aged into it, so a table whose
// default moved to months keeps ageing its remaining days.
func ageingSpec(md table.Metadata, rule AgeingRule) (*Ageing, iceberg.PartitionField) {
	def := md.PartitionSpec()
	if md.Version() < 2 {
		a := &Ageing{SourceSpecID: def.ID()}
		a.Refusal = fmt.Sprintf("format version %d: a v1 table keeps removed partition fields as void ones, which partition ageing does not write", md.Version())
		return a, iceberg.PartitionField{}
	}
	a, field := ageingFrom(md, def, rule)
	if len(fromFields(def, rule)) == 0 {
		specs := md.PartitionSpecs()
		slices.SortFunc(specs, func(x, y iceberg.PartitionSpec) int { return y.ID() - x.ID() })
		for _, s := range specs {
			if s.ID() == def.ID() || len(fromFields(s, rule)) != 1 {
				continue
			}
			if b, f := ageingFrom(md, s, rule); b.Refusal == "" && b.Spec.ID() == def.ID() {
				a, field = b, f
				break
			}
		}
	}
	a.SetsDefault = a.Refusal == "" && rule.Default && a.Spec.ID() != def.ID()
	return a, field
}

// fromFields are the fields of spec with rule's From transform.
func fromFields(spec iceberg.PartitionSpec, rule AgeingRule) []iceberg.PartitionField {
	var out []iceberg.PartitionField
	for _, f := range spec.Fields() {
		if reach.TimeRank(f.Transform) == reach.TimeRank(rule.From) {
			out = append(out, f)
		}
	}
	return out
}

// ageingFrom finds the coarser spec of rule on src: an existing spec of
// the table when one is that spec (the field ids kept, the coarse field of
// the same column and transform), else a new one with the next spec id and
// partition field id.
func ageingFrom(md table.Metadata, src iceberg.PartitionSpec, rule AgeingRule) (*Ageing, iceberg.PartitionField) {
	a := &Ageing{SourceSpecID: src.ID()}
	what := fmt.Sprintf("partition spec %d", src.ID())
	if src.ID() == md.DefaultPartitionSpec() {
		what = "the default " + what
	}
	fine := fromFields(src, rule)
	switch len(fine) {
	case 0:
		a.Refusal = fmt.Sprintf("%s has no %s field", what, rule.From)
		return a, iceberg.PartitionField{}
	case 1:
	default:
		var names []string
		for _, f := range fine {
			names = append(names, f.Name)
		}
		a.Refusal = fmt.Sprintf("%s has %d %s fields (%s): which one dates a partition is ambiguous", what, len(fine), rule.From, strings.Join(names, ", "))
		return a, iceberg.PartitionField{}
	}
	field := fine[0]
	col, ok := md.CurrentSchema().FindColumnName(field.SourceID())
	if !ok {
		a.Refusal = fmt.Sprintf("partition field %s: column %d is not in the schema", field.Name, field.SourceID())
		return a, field
	}
	a.Field, a.Column = field.Name, col
	name := col + "_" + rule.To.String()
	var kept, fields []iceberg.PartitionField
	coarse := iceberg.PartitionField{SourceIDs: []int{field.SourceID()}, Name: name, Transform: rule.To}
	for _, f := range src.Fields() {
		if f.FieldID == field.FieldID {
			fields = append(fields, coarse) // in the finer field's place
			continue
		}
		if f.SourceID() == field.SourceID() && reach.TimeRank(f.Transform) > 0 {
			a.Refusal = fmt.Sprintf("%s has another time field of %s (%s): the coarser spec would have two", what, col, f.Name)
			return a, field
		}
		if f.Name == name {
			a.Refusal = fmt.Sprintf("%s already has a field named %s", what, name)
			return a, field
		}
		kept = append(kept, f)
		fields = append(fields, f)
	}
	for _, s := range md.PartitionSpecs() {
		if isAgeingSpec(s, kept, field.SourceID(), rule.To) {
			a.Spec = s
			return a, field
		}
	}
	if _, clash := md.CurrentSchema().FindFieldByName(name); clash {
		a.Refusal = fmt.Sprintf("the coarser field's name %s is a column of the table", name)
		return a, field
	}
	next := 0
	for _, s := range md.PartitionSpecs() {
		next = max(next, s.ID()+1)
	}
	lastField := iceberg.PartitionDataIDStart - 1
	if p := md.LastPartitionSpecID(); p != nil {
		lastField = *p
	}
	for i := range fields {
		if fields[i].Name == name {
			fields[i].FieldID = lastField + 1
		}
	}
	a.Spec = iceberg.NewPartitionSpecID(next, fields...)
	a.NewSpec = true
	return a, field
}

// isAgeingSpec: s is the kept fields (same ids, columns and transforms)
// and one field of transform to on column source.
func isAgeingSpec(s iceberg.PartitionSpec, kept []iceberg.PartitionField, source int, to iceberg.Transform) bool {
	if s.NumFields() != len(kept)+1 {
		return false
	}
	byID := map[int]iceberg.PartitionField{}
	for _, f := range s.Fields() {
		byID[f.FieldID] = f
	}
	for _, k := range kept {
		f, ok := byID[k.FieldID]
		if !ok || f.SourceID() != k.SourceID() || f.Transform.String() != k.Transform.String() {
			return false
		}
		delete(byID, k.FieldID)
	}
	for _, f := range byID {
		return f.SourceID() == source && f.Transform.String() == to.String()
	}
	return false
}

// agedFilter is col < the start of window aged of transform to, for a
// date or microsecond timestamp column; nil for another type.
func agedFilter(sc *iceberg.Schema, col string, to iceberg.Transform, aged int64) iceberg.BooleanExpression {
	f, ok := sc.FindFieldByName(col)
	start, ok2 := reach.WindowStart(to, aged)
	if !ok || !ok2 {
		return nil
	}
	ref := iceberg.Reference(col)
	switch f.Type.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return iceberg.LessThan(ref, iceberg.Timestamp(start.UnixMicro()))
	case iceberg.DateType:
		return iceberg.LessThan(ref, iceberg.Date(start.Unix()/86400))
	}
	return nil
}

// specPath names a partition of spec as a path ("ts_month=2024-01").
func specPath(spec iceberg.PartitionSpec, part map[int]any, sc *iceberg.Schema) string {
	var rec partitionRecord
	for _, f := range spec.Fields() {
		rec = append(rec, part[f.FieldID])
	}
	return spec.PartitionToPath(rec, sc)
}

// RunAgeing plans partition ageing at now and commits it in ONE commit
// through the commit check: the coarser spec when the table lacks it (the
// default spec only with rule.Default: otherwise writers keep writing the
// finer one) and a replace of every aged group's files by files of the
// coarser partition, each group's rows unchanged (reach.CheckSnapshots
// with the group's Target). Nothing to age commits nothing, except the
// spec change alone when rule.Default asks for it; a refused or failed
// rewrite leaves no spec behind, since the spec rides on the rewrite's own
// commit. The commit is never replayed (opts.NoReplay): a table changed
// since gives an error, and apply plans again.
func RunAgeing(ctx context.Context, tbl *table.Table, rule AgeingRule, now time.Time, opts Options) (*Ageing, *Result, error) {
	a, err := PlanAgeing(ctx, tbl, rule, now)
	if err != nil {
		return nil, nil, err
	}
	if a.Refusal != "" {
		return a, nil, fmt.Errorf("%w: partition ageing: %s", ErrRefused, a.Refusal)
	}
	if len(a.Groups) == 0 && !a.SetsDefault {
		return a, &Result{Table: tbl}, nil
	}
	if (a.NewSpec || a.SetsDefault) && opts.Catalog == nil {
		return a, nil, fmt.Errorf("%w: partition ageing changes the table's specs, which needs the table's catalog", ErrRefused)
	}
	last := iceberg.PartitionDataIDStart - 1
	if p := tbl.Metadata().LastPartitionSpecID(); p != nil {
		last = *p
	}
	add := &addedSpec{lastFieldID: last, setDefault: a.SetsDefault, specID: a.Spec.ID(), defaultWas: tbl.Metadata().DefaultPartitionSpec()}
	if a.NewSpec {
		spec := a.Spec
		add.spec = &spec
	}
	if len(a.Groups) == 0 {
		// Nothing old enough yet: the commit only makes the coarser spec
		// the default (adding it first when the table lacks it).
		next, err := commitSpecs(ctx, tbl, opts.Catalog, add)
		if err != nil {
			return a, nil, fmt.Errorf("partition ageing: %w", err)
		}
		return a, &Result{Table: next}, nil
	}
	work := tbl
	if a.NewSpec {
		b, err := table.MetadataBuilderFromBase(tbl.Metadata(), tbl.MetadataLocation())
		if err != nil {
			return a, nil, fmt.Errorf("stage the coarser spec: %w", err)
		}
		if err := b.AddPartitionSpec(&a.Spec, false); err != nil {
			return a, nil, fmt.Errorf("stage the coarser spec: %w", err)
		}
		md, err := b.Build()
		if err != nil {
			return a, nil, fmt.Errorf("stage the coarser spec: %w", err)
		}
		staged := md.PartitionSpecByID(a.Spec.ID())
		if staged == nil || !slices.Equal(slices.Collect(fieldsOf(*staged)), slices.Collect(fieldsOf(a.Spec))) {
			return a, nil, fmt.Errorf("stage the coarser spec: the metadata made spec %v of %v", staged, a.Spec)
		}
		// The rewrite writes and commits against this copy; the commit
		// sends the spec with its snapshot (commitCatalog.addSpec).
		work = table.New(tbl.Identifier(), md, tbl.MetadataLocation(),
			func(ctx context.Context) (icebergio.IO, error) { return tbl.FS(ctx) }, nil)
	}
	if a.NewSpec || a.SetsDefault {
		opts.addSpec = add
	}
	groups := make([]Group, len(a.Groups))
	for i, g := range a.Groups {
		groups[i] = g.Group
	}
	opts.Strategy, opts.SortOrder, opts.ZOrderColumns = Binpack, nil, nil
	opts.PartialProgress, opts.MaxBytesPerRun, opts.NoReplay = false, 0, true
	res, err := Run(ctx, work, groups, opts)
	if err != nil {
		return a, res, err
	}
	if res.Committed() != len(groups) {
		return a, res, errors.New("partition ageing: not every group was committed")
	}
	return a, res, nil
}

// addedSpec is what partition ageing changes in a commit's specs besides
// its snapshot: spec, when the table lacks it, is added, requiring the
// table's last assigned partition field id as planned (a spec added
// meanwhile fails the commit instead of getting other ids); with
// setDefault spec specID becomes the default, requiring the default to be
// defaultWas still.
type addedSpec struct {
	spec        *iceberg.PartitionSpec
	lastFieldID int
	setDefault  bool
	specID      int
	defaultWas  int
}

// prepend puts the spec updates before a commit's own, and adds their
// requirements.
func (s *addedSpec) prepend(updates []table.Update, reqs []table.Requirement) ([]table.Update, []table.Requirement) {
	var pre []table.Update
	reqs = slices.Clone(reqs)
	if s.spec != nil {
		pre = append(pre, table.NewAddPartitionSpecUpdate(s.spec, false))
		reqs = append(reqs, table.AssertLastAssignedPartitionID(s.lastFieldID))
	}
	if s.setDefault {
		id := s.specID
		if s.spec != nil {
			id = -1 // the spec this commit adds
		}
		pre = append(pre, table.NewSetDefaultSpecUpdate(id))
		reqs = append(reqs, table.AssertDefaultSpecID(s.defaultWas))
	}
	return append(pre, updates...), reqs
}

// commitSpecs commits only the spec changes of s to tbl through cat (no
// snapshot: nothing to check but the requirements).
func commitSpecs(ctx context.Context, tbl *table.Table, cat table.CatalogIO, s *addedSpec) (*table.Table, error) {
	if cc, ok := cat.(*commitCatalog); ok {
		cat = cc.inner
	}
	updates, reqs := s.prepend(nil, []table.Requirement{table.AssertTableUUID(tbl.Metadata().TableUUID())})
	commitCtx, cancel := bound.Call(ctx)
	defer cancel()
	md, loc, err := cat.CommitTable(commitCtx, tbl.Identifier(), reqs, updates)
	if err != nil {
		return nil, fmt.Errorf("commit the default spec: %w", err)
	}
	return table.New(tbl.Identifier(), md, loc, func(ctx context.Context) (icebergio.IO, error) { return tbl.FS(ctx) }, cat), nil
}

func fieldsOf(s iceberg.PartitionSpec) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, f := range s.Fields() {
			if !yield(fmt.Sprintf("%d:%d:%s:%s", f.FieldID, f.SourceID(), f.Name, f.Transform)) {
				return
			}
		}
	}
}
