package objdel

import "context"

// openAzure opens the batched deleter of an Azure container. Not built yet:
// Azure deletes go one object at a time through the table's IO.
func openAzure(context.Context, map[string]string, string) (Store, error) {
	return nil, ErrNoBatchAPI
}
