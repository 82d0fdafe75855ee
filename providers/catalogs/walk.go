package catalogs

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/internal/bound"
)

// Walk calls fn with every table of cat. Namespaces are walked
// recursively: a SQL catalog lists every level at once, a REST catalog only
// the children of a parent, so it descends from each namespace it sees and
// de-duplicates.
func Walk(ctx context.Context, cat catalog.Catalog, fn func(table.Identifier) error) error {
	seen := map[string]bool{}
	queue := []table.Identifier{nil}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		var children []table.Identifier
		err := bound.Read(ctx, func(ctx context.Context) error {
			var err error
			children, err = cat.ListNamespaces(ctx, parent)
			return err
		})
		if err != nil {
			return fmt.Errorf("list namespaces under %q: %w", strings.Join(parent, "."), err)
		}
		for _, ns := range children {
			key := strings.Join(ns, "\x00")
			if len(ns) == 0 || seen[key] {
				continue
			}
			seen[key] = true
			queue = append(queue, ns)
			// A listing is read whole, page by page, before fn sees it,
			// so that a page that fails repeats the listing, not fn.
			var idents []table.Identifier
			err := bound.Read(ctx, func(ctx context.Context) error {
				idents = idents[:0]
				for ident, err := range cat.ListTables(ctx, ns) {
					if err != nil {
						return err
					}
					idents = append(idents, ident)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("list tables in %q: %w", strings.Join(ns, "."), err)
			}
			for _, ident := range idents {
				if err := fn(ident); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
