package providers

import (
	"fmt"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/engine"
)

// policyEngine is the engine a policy's compaction delegates to, nil for
// icewright's own rewrite. It is opened once per session and connects only
// when it runs something, so a plan contacts no engine.
func (s *Session) policyEngine(pol *config.Effective) (engine.Engine, *config.Engine, error) {
	name := pol.Compaction.Engine.Value
	if !pol.Compaction.Declared || name == "" || name == engine.Local {
		return nil, nil, nil
	}
	blk := s.cfg.Engine(name)
	if blk == nil {
		return nil, nil, fmt.Errorf("compaction.engine %q: no engine block declares it", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.engines[name]; ok {
		return e, blk, nil
	}
	e, err := engine.Open(blk)
	if err != nil {
		return nil, nil, err
	}
	if s.engines == nil {
		s.engines = map[string]engine.Engine{}
	}
	s.engines[name] = e
	return e, blk, nil
}

// withEngine gives an observed state the policy's engine, which the plan
// asks for each delegated partition's statement.
func (s *Session) withEngine(pol *config.Effective, st *diff.TableState) error {
	e, _, err := s.policyEngine(pol)
	if err != nil || e == nil {
		return err
	}
	st.Engine = e
	return nil
}
