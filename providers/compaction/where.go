package compaction

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// ParseWhere turns a policy's `compaction.where` text into an unbound
// iceberg-go expression. The language is the predicate part of SQL that
// Iceberg expressions can say:
//
//	col = 'x'  col != 1  col <> 1  col < 1.5  col <= …  col > …  col >= …
//	col IS NULL  col IS NOT NULL  col IN ('a', 'b')  col NOT IN (1, 2)
//	NOT …  … AND …  … OR …  ( … )  TRUE  FALSE
//
// Literals are 'single-quoted' strings (” is a quote), numbers and
// true/false; iceberg-go converts them to the column's type when the
// expression is bound ('2026-11-03' for a date, '2026-11-03T00:00:00Z' for
// a timestamptz, '2026-11-03T00:00:00' for a timestamp). Column names are
// bare (dotted for nested fields) or "double-quoted". Only the parsing is
// ours: binding, projection and evaluation are iceberg-go's.
//
// A literal may also be relative to now, so that a scheduled policy can say
// "recent partitions only":
//
//	current_date  current_timestamp  now()
//	current_date - interval '7' day   now() + interval '90 minutes'   … - interval 2 weeks
//
// (units second, minute, hour, day, week, month, year, singular or
// plural; a month or year moves the calendar and keeps the day of the
// month, clamped to the month's last day as PostgreSQL and Spark do:
// 2026-03-31 - interval '1' month is 2026-02-28). current_date
// is midnight UTC of now's date; each is a timestamp literal in
// microseconds, which iceberg-go binds to a date column as its date, and to
// a timestamp, timestamptz or nanosecond column as that instant.
func ParseWhere(text string, now time.Time) (_ iceberg.BooleanExpression, err error) {
	defer func() {
		// iceberg-go's constructors panic on arguments they refuse; a
		// policy's text must never crash a plan.
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	toks, err := lexWhere(text)
	if err != nil {
		return nil, err
	}
	p := &whereParser{toks: toks, now: now.UTC()}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, fmt.Errorf("unexpected %s at offset %d", t, t.pos)
	}
	return e, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokString
	tokNumber
	tokOp    // = != <> < <= > >=
	tokPunct // ( ) ,
)

type whereTok struct {
	kind  tokKind
	text  string // identifiers as written (keywords compared case-insensitively)
	pos   int
	quote bool // a "quoted" identifier is never a keyword
}

func (t whereTok) String() string {
	switch t.kind {
	case tokEOF:
		return "end of text"
	case tokString:
		return strconv.Quote(t.text)
	}
	return "'" + t.text + "'"
}

func (t whereTok) keyword(kw string) bool {
	return t.kind == tokIdent && !t.quote && strings.EqualFold(t.text, kw)
}

func lexWhere(s string) ([]whereTok, error) {
	var out []whereTok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == ',':
			out = append(out, whereTok{kind: tokPunct, text: string(c), pos: i})
			i++
		case c == '=' || c == '<' || c == '>' || c == '!':
			j := i + 1
			if j < len(s) && (s[j] == '=' || (c == '<' && s[j] == '>')) {
				j++
			}
			op := s[i:j]
			if op == "!" {
				return nil, fmt.Errorf("unexpected '!' at offset %d", i)
			}
			out = append(out, whereTok{kind: tokOp, text: op, pos: i})
			i = j
		case c == '\'':
			var sb strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return nil, fmt.Errorf("unterminated string at offset %d", i)
				}
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						sb.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				sb.WriteByte(s[j])
				j++
			}
			out = append(out, whereTok{kind: tokString, text: sb.String(), pos: i})
			i = j + 1
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return nil, fmt.Errorf("unterminated quoted name at offset %d", i)
			}
			out = append(out, whereTok{kind: tokIdent, text: s[i+1 : i+1+j], pos: i, quote: true})
			i += j + 2
		case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(s) && (s[j] == '.' || s[j] == 'e' || s[j] == 'E' || (s[j] >= '0' && s[j] <= '9') ||
				((s[j] == '-' || s[j] == '+') && (s[j-1] == 'e' || s[j-1] == 'E'))) {
				j++
			}
			out = append(out, whereTok{kind: tokNumber, text: s[i:j], pos: i})
			i = j
		case c == '_' || unicode.IsLetter(rune(c)):
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] == '.' || unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j]))) {
				j++
			}
			out = append(out, whereTok{kind: tokIdent, text: s[i:j], pos: i})
			i = j
		default:
			return nil, fmt.Errorf("unexpected %q at offset %d", c, i)
		}
	}
	return append(out, whereTok{kind: tokEOF, pos: len(s)}), nil
}

type whereParser struct {
	toks []whereTok
	i    int
	now  time.Time // UTC
}

func (p *whereParser) peek() whereTok { return p.toks[p.i] }

func (p *whereParser) next() whereTok {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *whereParser) expect(text string) error {
	if t := p.next(); t.kind != tokPunct || t.text != text {
		return fmt.Errorf("expected '%s' at offset %d, found %s", text, t.pos, t)
	}
	return nil
}

func (p *whereParser) or() (iceberg.BooleanExpression, error) {
	return p.chain("or", p.and, func(l, r iceberg.BooleanExpression) iceberg.BooleanExpression { return iceberg.NewOr(l, r) })
}

func (p *whereParser) and() (iceberg.BooleanExpression, error) {
	return p.chain("and", p.not, func(l, r iceberg.BooleanExpression) iceberg.BooleanExpression { return iceberg.NewAnd(l, r) })
}

// chain parses operand (kw operand)*, combining left to right.
func (p *whereParser) chain(kw string, operand func() (iceberg.BooleanExpression, error), combine func(l, r iceberg.BooleanExpression) iceberg.BooleanExpression) (iceberg.BooleanExpression, error) {
	left, err := operand()
	for err == nil && p.peek().keyword(kw) {
		p.next()
		var right iceberg.BooleanExpression
		if right, err = operand(); err == nil {
			left = combine(left, right)
		}
	}
	return left, err
}

func (p *whereParser) not() (iceberg.BooleanExpression, error) {
	if p.peek().keyword("not") {
		p.next()
		e, err := p.not()
		if err != nil {
			return nil, err
		}
		return iceberg.NewNot(e), nil
	}
	return p.primary()
}

func (p *whereParser) primary() (iceberg.BooleanExpression, error) {
	t := p.next()
	switch {
	case t.kind == tokPunct && t.text == "(":
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		return e, p.expect(")")
	case t.keyword("true"):
		return iceberg.AlwaysTrue{}, nil
	case t.keyword("false"):
		return iceberg.AlwaysFalse{}, nil
	case t.kind == tokIdent:
		return p.predicate(iceberg.Reference(t.text))
	}
	return nil, fmt.Errorf("expected a column name at offset %d, found %s", t.pos, t)
}

func (p *whereParser) predicate(ref iceberg.UnboundTerm) (iceberg.BooleanExpression, error) {
	t := p.next()
	switch {
	case t.kind == tokOp:
		lit, err := p.literal()
		if err != nil {
			return nil, err
		}
		op, ok := map[string]iceberg.Operation{
			"=": iceberg.OpEQ, "!=": iceberg.OpNEQ, "<>": iceberg.OpNEQ,
			"<": iceberg.OpLT, "<=": iceberg.OpLTEQ, ">": iceberg.OpGT, ">=": iceberg.OpGTEQ,
		}[t.text]
		if !ok {
			return nil, fmt.Errorf("unknown operator %s at offset %d", t, t.pos)
		}
		return iceberg.LiteralPredicate(op, ref, lit), nil
	case t.keyword("is"):
		negate := p.peek().keyword("not")
		if negate {
			p.next()
		}
		if n := p.next(); !n.keyword("null") {
			return nil, fmt.Errorf("expected NULL at offset %d, found %s", n.pos, n)
		}
		if negate {
			return iceberg.NotNull(ref), nil
		}
		return iceberg.IsNull(ref), nil
	case t.keyword("in"), t.keyword("not") && p.peek().keyword("in"):
		negate := t.keyword("not")
		if negate {
			p.next()
		}
		if err := p.expect("("); err != nil {
			return nil, err
		}
		var lits []iceberg.Literal
		for {
			lit, err := p.literal()
			if err != nil {
				return nil, err
			}
			lits = append(lits, lit)
			if p.peek().kind == tokPunct && p.peek().text == "," {
				p.next()
				continue
			}
			break
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		if negate {
			return iceberg.SetPredicate(iceberg.OpNotIn, ref, lits), nil
		}
		return iceberg.SetPredicate(iceberg.OpIn, ref, lits), nil
	}
	return nil, fmt.Errorf("expected a comparison, IS [NOT] NULL or [NOT] IN at offset %d, found %s", t.pos, t)
}

func (p *whereParser) literal() (iceberg.Literal, error) {
	t := p.next()
	switch {
	case t.kind == tokString:
		return iceberg.NewLiteral(t.text), nil
	case t.kind == tokNumber:
		if n, err := strconv.ParseInt(t.text, 10, 64); err == nil {
			return iceberg.NewLiteral(n), nil
		}
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %s at offset %d", t, t.pos)
		}
		return iceberg.NewLiteral(f), nil
	case t.keyword("true"):
		return iceberg.NewLiteral(true), nil
	case t.keyword("false"):
		return iceberg.NewLiteral(false), nil
	case t.keyword("current_date"), t.keyword("current_timestamp"), t.keyword("now"):
		return p.clock(t)
	}
	return nil, fmt.Errorf("expected a literal ('text', a number, true, false, current_date, current_timestamp or now()) at offset %d, found %s", t.pos, t)
}

// clock reads the rest of a literal relative to now (t is current_date,
// current_timestamp or now): the parentheses of now(), then any number of
// `+ interval …` or `- interval …`.
func (p *whereParser) clock(t whereTok) (iceberg.Literal, error) {
	at := p.now
	switch {
	case t.keyword("now"):
		if err := p.expect("("); err != nil {
			return nil, err
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
	case t.keyword("current_date"):
		at = time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	}
	for {
		sign := p.peek()
		if sign.kind != tokNumber || (sign.text != "+" && sign.text != "-") {
			break
		}
		p.next()
		iv, err := p.interval(sign)
		if err != nil {
			return nil, err
		}
		if sign.text == "-" {
			iv.months, iv.d = -iv.months, -iv.d
		}
		at = addMonths(at, iv.months).Add(iv.d)
	}
	return iceberg.NewLiteral(iceberg.Timestamp(at.UnixMicro())), nil
}

// addMonths moves t by n calendar months, keeping the time of day and the
// day of the month, or the month's last day when it has fewer days
// (time.AddDate would roll 2026-03-31 - 1 month over to 2026-03-03).
func addMonths(t time.Time, n int) time.Time {
	if n == 0 {
		return t
	}
	first := time.Date(t.Year(), t.Month(), 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location()).AddDate(0, n, 0)
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(t.Day(), last)-1)
}

// whereInterval is one `interval …`: calendar months (month, year) and a
// fixed duration (second to week).
type whereInterval struct {
	months int
	d      time.Duration
}

var intervalUnits = map[string]time.Duration{
	"second": time.Second, "minute": time.Minute, "hour": time.Hour,
	"day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
}

// monthUnits are the calendar units, in months.
var monthUnits = map[string]int{"month": 1, "year": 12}

// interval reads `interval 'N' unit`, `interval 'N unit'` or
// `interval N unit` after the sign.
func (p *whereParser) interval(sign whereTok) (whereInterval, error) {
	if kw := p.next(); !kw.keyword("interval") {
		return whereInterval{}, fmt.Errorf("expected INTERVAL after '%s' at offset %d, found %s", sign.text, kw.pos, kw)
	}
	n := p.next()
	if n.kind != tokString && n.kind != tokNumber {
		return whereInterval{}, fmt.Errorf("expected an interval count ('7', '7 days' or 7) at offset %d, found %s", n.pos, n)
	}
	count, unit := n.text, ""
	if f := strings.Fields(n.text); n.kind == tokString && len(f) == 2 {
		count, unit = f[0], f[1]
	}
	num, err := strconv.ParseInt(strings.TrimSpace(count), 10, 64)
	if err != nil {
		return whereInterval{}, fmt.Errorf("bad interval count %s at offset %d: want a whole number", n, n.pos)
	}
	if unit == "" {
		u := p.next()
		if u.kind != tokIdent || u.quote {
			return whereInterval{}, fmt.Errorf("expected an interval unit (second, minute, hour, day, week, month or year) at offset %d, found %s", u.pos, u)
		}
		unit = u.text
	}
	// A timestamp literal is microseconds since 1970: anything beyond a
	// century or so either way is a typo, not a maintenance window.
	tooLong := fmt.Errorf("interval %s %s at offset %d is longer than 100 years", count, unit, n.pos)
	name := strings.TrimSuffix(strings.ToLower(unit), "s")
	if m, ok := monthUnits[name]; ok {
		if num > int64(1200/m) || num < -int64(1200/m) {
			return whereInterval{}, tooLong
		}
		return whereInterval{months: int(num) * m}, nil
	}
	per, ok := intervalUnits[name]
	if !ok {
		return whereInterval{}, fmt.Errorf("unknown interval unit %q at offset %d: want second, minute, hour, day, week, month or year", unit, n.pos)
	}
	const limit = 100 * 366 * 24 * time.Hour
	if num > int64(limit/per) || num < -int64(limit/per) {
		return whereInterval{}, tooLong
	}
	return whereInterval{d: time.Duration(num) * per}, nil
}

// WhereFilter decides, from a data file's partition alone, whether the file
// may hold rows matching a `where`: iceberg-go's inclusive projection of the
// filter onto the file's partition spec, evaluated by iceberg-go's
// expression evaluator on the partition tuple (what scan planning's
// partition evaluator does). It is the one rule for both the plan's
// observation (providers) and the rewrite's planning (PlanPartitions), so
// the plan shows the files apply rewrites. Column statistics are not
// consulted: the plan's manifest walk does not read them, and a partition
// is compacted whole or not at all.
type WhereFilter struct {
	schema *iceberg.Schema
	expr   iceberg.BooleanExpression
	specs  map[int]*specFilter
}

type specFilter struct {
	partType *iceberg.StructType
	eval     func(iceberg.StructLike) (bool, error)
}

// NewWhereFilter binds where to the table's current schema and projects it
// onto every partition spec of md. An unknown column, a literal that does
// not convert to its column's type, or a projection error is returned here,
// before any file is looked at.
func NewWhereFilter(md table.Metadata, where iceberg.BooleanExpression) (*WhereFilter, error) {
	f := &WhereFilter{schema: md.CurrentSchema(), expr: where, specs: map[int]*specFilter{}}
	rewritten, err := iceberg.RewriteNotExpr(where)
	if err != nil {
		return nil, err
	}
	bound, err := iceberg.BindExpr(f.schema, rewritten, true)
	if err != nil {
		return nil, err
	}
	for _, spec := range md.PartitionSpecs() {
		projected, err := iceberg.VisitExpr(bound, &inclusiveProjection{spec: spec})
		if err != nil {
			return nil, fmt.Errorf("project onto partition spec %d: %w", spec.ID(), err)
		}
		partType := spec.PartitionType(f.schema)
		eval, err := iceberg.ExpressionEvaluator(iceberg.NewSchema(0, partType.FieldList...), projected, true)
		if err != nil {
			return nil, fmt.Errorf("partition spec %d: %w", spec.ID(), err)
		}
		f.specs[spec.ID()] = &specFilter{partType: partType, eval: eval}
	}
	return f, nil
}

// MayMatch reports whether files of spec specID with this partition tuple
// (DataFile.Partition) may hold matching rows.
func (f *WhereFilter) MayMatch(specID int, partition map[int]any) (bool, error) {
	s, ok := f.specs[specID]
	if !ok {
		return false, fmt.Errorf("partition spec %d is not in the table metadata", specID)
	}
	return s.eval(partitionTuple{part: partition, typ: s.partType})
}

// partitionTuple reads a partition map in partition-field order (the
// StructLike the expression evaluator expects).
type partitionTuple struct {
	part map[int]any
	typ  *iceberg.StructType
}

func (r partitionTuple) Size() int       { return len(r.typ.FieldList) }
func (r partitionTuple) Get(pos int) any { return r.part[r.typ.FieldList[pos].ID] }
func (r partitionTuple) Set(int, any)    { panic("partition record is read-only") }

// inclusiveProjection is iceberg-go's table.inclusiveProjection (not
// exported): each bound predicate becomes the AND of the projections of
// the partition fields sourced from its column (each transform's own
// Project), AlwaysTrue when no field is; NOT is rewritten away first.
type inclusiveProjection struct{ spec iceberg.PartitionSpec }

func (*inclusiveProjection) VisitTrue() iceberg.BooleanExpression  { return iceberg.AlwaysTrue{} }
func (*inclusiveProjection) VisitFalse() iceberg.BooleanExpression { return iceberg.AlwaysFalse{} }
func (*inclusiveProjection) VisitNot(child iceberg.BooleanExpression) iceberg.BooleanExpression {
	panic(fmt.Errorf("%w: NOT should have been rewritten: %s", iceberg.ErrInvalidArgument, child))
}

func (*inclusiveProjection) VisitAnd(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewAnd(l, r)
}

func (*inclusiveProjection) VisitOr(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewOr(l, r)
}

func (*inclusiveProjection) VisitUnbound(pred iceberg.UnboundPredicate) iceberg.BooleanExpression {
	panic(fmt.Errorf("%w: cannot project unbound predicate %s", iceberg.ErrInvalidArgument, pred))
}

func (p *inclusiveProjection) VisitBound(pred iceberg.BoundPredicate) iceberg.BooleanExpression {
	var out iceberg.BooleanExpression = iceberg.AlwaysTrue{}
	for _, part := range p.spec.FieldsBySourceID(pred.Term().Ref().Field().ID) {
		proj, err := part.Transform.Project(part.Name, pred)
		if err != nil {
			panic(err)
		}
		if proj != nil {
			out = iceberg.NewAnd(out, proj)
		}
	}
	return out
}

// mayMatch is MayMatch, true for a nil filter (no `where`).
func (f *WhereFilter) mayMatch(specID int, partition map[int]any) (bool, error) {
	if f == nil {
		return true, nil
	}
	ok, err := f.MayMatch(specID, partition)
	if err != nil {
		return false, fmt.Errorf("where: %w", err)
	}
	return ok, nil
}

// keep drops the tasks whose file's partition cannot match.
func (f *WhereFilter) keep(tasks []table.FileScanTask) ([]table.FileScanTask, error) {
	if f == nil {
		return tasks, nil
	}
	kept := tasks[:0]
	for _, t := range tasks {
		ok, err := f.mayMatch(int(t.File.SpecID()), t.File.Partition())
		if err != nil {
			return nil, err
		}
		if ok {
			kept = append(kept, t)
		}
	}
	return kept, nil
}
