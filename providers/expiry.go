package providers

import (
	"context"
	"fmt"

	"github.com/icewright/icewright/providers/expiry"
)

// estimateExpiry counts the files (and their bytes) that expiring
// expireIDs of the table at address frees (expiry.Estimate on the table as
// it is now).
func (s *Session) estimateExpiry(ctx context.Context, address string, expireIDs []int64, compactInputs func(path string) bool) (expiry.Freed, error) {
	tbl, err := s.loadTable(ctx, address)
	if err != nil {
		return expiry.Freed{}, fmt.Errorf("estimate expiry of %s: %w", address, err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return expiry.Freed{}, fmt.Errorf("estimate expiry of %s: %w", address, err)
	}
	freed, err := expiry.Estimate(ctx, fsys, tbl.Metadata(), expireIDs, compactInputs)
	if err != nil {
		return expiry.Freed{}, fmt.Errorf("estimate expiry of %s: %w", address, err)
	}
	return freed, nil
}
