package objdel

import "context"

// openGCS opens the batched deleter of a GCS bucket. Not built yet: GCS
// deletes go one object at a time through the table's IO.
func openGCS(context.Context, map[string]string, string) (Store, error) {
	return nil, ErrNoBatchAPI
}
