package providers

import (
	"context"
	"fmt"

	"github.com/iceops/iceops/providers/expiry"
)

// estimateExpiry counts the files (and their bytes) that expiring
// expireIDs of the table at address frees (expiry.Estimate on the table as
// it is now).
func (s *Session) estimateExpiry(ctx context.Context, address string, expireIDs []int64, compactInputs func(path string) bool) (files, bytes int64, err error) {
	tbl, err := s.loadTable(ctx, address)
	if err != nil {
		return 0, 0, fmt.Errorf("estimate expiry of %s: %w", address, err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("estimate expiry of %s: %w", address, err)
	}
	files, bytes, err = expiry.Estimate(ctx, fsys, tbl.Metadata(), expireIDs, compactInputs)
	if err != nil {
		return 0, 0, fmt.Errorf("estimate expiry of %s: %w", address, err)
	}
	return files, bytes, nil
}
