package doctor

import (
	"context"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/engine"
)

// doctorEngines probes each declared engine block's endpoint (docs/engines.md,
// doctor): a plan never connects to one, so without this a wrong remote
// shows first at apply. The probe of one engine has the deadline of a
// catalog call (the longest of the catalogs'); cats are the checked
// catalogs, whose labels name the engine's catalogs when its block names
// none.
func (s *checker) doctorEngines(ctx context.Context, cats []*config.Catalog, rep *diff.Doctor) {
	labels := make([]string, len(cats))
	for i, c := range cats {
		labels[i] = c.Name
	}
	for _, blk := range s.Config().Engines {
		e, err := engine.Open(blk)
		if err != nil {
			rep.Add(diff.DoctorFinding{Engine: blk.Name, Check: "reachable", Status: diff.DoctorFail, Message: err.Error()})
			continue
		}
		limit := s.CallBound()
		pctx, cancel := context.WithTimeout(ctx, limit)
		for _, f := range e.Doctor(pctx, labels) {
			rep.Add(f)
		}
		cancel()
		_ = e.Close()
	}
}
