package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/config"
	"github.com/iceops/iceops/internal/testenv"
	"github.com/iceops/iceops/providers"
)

var (
	hclBlock    = regexp.MustCompile("(?s)```hcl\n(.*?)```")
	catalogDecl = regexp.MustCompile(`catalog "([^"]+)"\s*{\s*type\s*=\s*"([a-z]+)"`)
)

// TestDocsCatalogSnippets loads every configuration snippet of
// docs/catalogs.md and plans a table through it on the servers of
// scripts/services.sh, so the documentation cannot rot.
func TestDocsCatalogSnippets(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "docs", "catalogs.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := hclBlock.FindAllStringSubmatch(string(doc), -1)
	if len(blocks) != 3 {
		t.Fatalf("docs/catalogs.md has %d hcl blocks, want 3 (sqlite, postgres, rest)", len(blocks))
	}
	for _, blk := range blocks {
		snippet := blk[1]
		m := catalogDecl.FindStringSubmatch(snippet)
		if m == nil {
			t.Fatalf("snippet without a catalog block:\n%s", snippet)
		}
		name, typ := m[1], m[2]
		t.Run(name, func(t *testing.T) {
			switch {
			case typ == "rest":
				testenv.REST(t)
			case strings.Contains(snippet, "postgres://"):
				testenv.Postgres(t)
				testenv.S3(t)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dir := t.TempDir()
			if strings.Contains(snippet, "sqlite:lake/catalog.db") {
				if err := os.MkdirAll(filepath.Join(dir, "lake", "warehouse"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "lake", "catalog.db"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ns := testenv.UniqueName(t, "docs")
			src := snippet + `
policy "docs" {
  snapshot_retention {
    max_age       = "7d"
    min_snapshots = 1
  }
}

tables "` + name + `.` + ns + `.*" {
  policy = policy.docs
}
`
			if err := os.WriteFile(filepath.Join(dir, "main.iceops.hcl"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, diags := config.Load(dir, config.LoadOptions{Env: os.Environ()})
			if diags.HasErrors() {
				t.Fatalf("snippet does not load:\n%s\n%s", src, diags.Error())
			}
			sess := providers.Open(cfg, providers.Options{Env: os.Environ()})
			defer sess.Close()
			cat, err := sess.Catalog(ctx, name)
			if err != nil {
				t.Fatalf("open catalog %s from the snippet: %v", name, err)
			}
			createNamespace(ctx, t, cat, ns)
			tbl, err := cat.CreateTable(ctx, table.Identifier{ns, "t"}, eventsSchema)
			if err != nil {
				t.Fatalf("create a table through the snippet's catalog: %v", err)
			}
			appendRows(ctx, t, tbl, 0, 10)
			p := planOnly(ctx, t, cfg, time.Now)
			if len(p.Errors) > 0 {
				t.Fatalf("plan errors: %+v", p.Errors)
			}
			findTable(t, p, name+"."+ns+".t")
		})
	}
}

// TestReadmeRepeatsCatalogSnippets keeps the README's "Catalogs and storage"
// section in step with the snippets TestDocsCatalogSnippets runs: each must
// appear there verbatim, so the README shows only tested configuration.
func TestReadmeRepeatsCatalogSnippets(t *testing.T) {
	root := testenv.RepoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "catalogs.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Catalogs and storage")
	if !ok {
		t.Fatal(`README.md has no "## Catalogs and storage" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := hclBlock.FindAllStringSubmatch(string(doc), -1)
	if len(blocks) == 0 {
		t.Fatal("docs/catalogs.md has no hcl blocks")
	}
	for _, blk := range blocks {
		if !strings.Contains(section, "```hcl\n"+blk[1]+"```") {
			t.Errorf("README's Catalogs and storage section lacks this tested snippet:\n%s", blk[1])
		}
	}
}
