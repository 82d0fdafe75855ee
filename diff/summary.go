package diff

// Summarize fills p.Summary, p.Refusals and each table's Estimate from the tables and errors. Tables counts every
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
	for i := range p.Tables {
		t := &p.Tables[i]
		// The table's total is derived like the summary (a plan read from
		// a file gets it again from its actions).
		t.Estimate = nil
		if u, n, _ := Estimated(t.Actions); n > 0 {
			t.Estimate = &u
			s.Estimate.Add(u)
			s.EstimatedActions += n
			if m, ok := Price(u, t.Pricing); ok {
				s.Cost.Add(m)
				s.PricedTables++
			} else {
				s.UnpricedTables++
			}
		}
		seen[t.Address] = struct{}{}
		for _, a := range t.Actions {
			s.Actions++
			if a.Destructive {
				s.DestructiveActions++
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
	// The run's read of other tables' references: once, at the plan
	// level, priced at each table's prices.
	for _, r := range OtherTablesReferences(p.Tables) {
		s.OtherTablesReferences.Add(r.Usage)
		s.OtherTablesRead++
		if m, ok := Price(r.Usage, p.Tables[r.Table].Pricing); ok {
			s.OtherTablesCost.Add(m)
		}
	}
	s.Estimate.Add(s.OtherTablesReferences)
	s.Cost.Add(s.OtherTablesCost)
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
	u, n, _ := Estimated(t.Actions)
	return u, n > 0
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
