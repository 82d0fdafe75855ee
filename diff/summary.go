package diff

// Summarize fills p.Summary and p.Refusals from the tables and errors. Tables counts every
// managed table, planned or failed. A table with refusals is neither changed
// nor in policy: it counts as an error, because someone must look.
func Summarize(p *Plan) {
	s := Summary{}
	refusals := []AddressedRefusal{}
	seen := make(map[string]struct{})
	failed := make(map[string]struct{})
	for _, e := range p.Errors {
		seen[e.Address] = struct{}{}
		failed[e.Address] = struct{}{}
	}
	for _, t := range p.Tables {
		seen[t.Address] = struct{}{}
		for _, a := range t.Actions {
			s.Actions++
			if a.Destructive {
				s.DestructiveActions++
			}
		}
		if u, ok := t.Total(); ok {
			s.Estimate.Add(u)
			if m, ok := Price(u, t.Pricing); ok {
				s.Cost.Add(m)
				s.PricedTables++
			} else {
				s.UnpricedTables++
			}
		}
		if len(t.Refusals) > 0 {
			failed[t.Address] = struct{}{}
		}
		for _, r := range t.Refusals {
			refusals = append(refusals, AddressedRefusal{Address: t.Address, Refusal: r})
		}
		switch {
		case len(t.Actions) > 0:
			s.TablesChanged++
		case t.Empty():
			s.TablesInPolicy++
		}
	}
	s.Tables = len(seen)
	s.Errors = len(failed)
	p.Summary = s
	p.Refusals = refusals
	if p.Warnings == nil {
		p.Warnings = []Warning{}
	}
}

// Total is the sum of the table's action estimates: what its run costs and
// frees. ok is false when no action has an estimate.
func (t TablePlan) Total() (Usage, bool) {
	var u Usage
	ok := false
	for _, a := range t.Actions {
		if a.Estimate != nil {
			u.Add(*a.Estimate)
			ok = true
		}
	}
	return u, ok
}

// Cost is the money of the table's Total at its prices; false when it has
// no estimate or no prices (views then show quantities only).
func (t TablePlan) Cost() (Money, bool) {
	u, ok := t.Total()
	if !ok {
		return Money{}, false
	}
	return Price(u, t.Pricing)
}
