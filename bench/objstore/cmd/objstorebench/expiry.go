package main

// The expiry case (issue #30, part 3): a table whose expired snapshots own
// N data files the current snapshot does not reach, expired by icewright and
// by iceberg-go v0.7.0 on identical copies, each checked afterwards.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/icewright/icewright/bench/plan/benchlake"
	"github.com/icewright/icewright/config"
)

var expiryIdent = table.Identifier{"bench", "expiry"}

// expiryCommits is how many snapshots add the files that expire.
const expiryCommits = 20

func (e env) expiryPrefix() string { return e.Prefix + "/expiry" }

// expiryKey is the key of the i-th data file; kept files (the current
// snapshot's) are named apart.
func expiryKey(e env, i int, kept bool) string {
	name := benchlake.FileName(i)
	if kept {
		name = "kept-" + name
	}
	return fmt.Sprintf("%s/data/event_day=%s/%s", e.expiryPrefix(), benchlake.Day0.AddDate(0, 0, i/e.PerDir).Format("2006-01-02"), name)
}

func expiryFiles(e env, lo, hi int, kept bool) ([]string, []benchlake.SyntheticFile) {
	var keys []string
	var files []benchlake.SyntheticFile
	for i := lo; i < hi; i++ {
		k := expiryKey(e, i, kept)
		keys = append(keys, k)
		files = append(files, benchlake.SyntheticFile{Path: "s3://" + e.Bucket + "/" + k, Day: i / e.PerDir, Size: 4 << 20, Rows: 10000})
	}
	return keys, files
}

// expirySetup builds the table: expiryCommits appends of Expired empty
// objects in all, then one commit replacing them all with Kept others, so
// every snapshot but the current one is expired by a one-day retention and
// its files are reached by no snapshot left. It saves the pristine state
// (the catalog file and every metadata object) for expiryReset.
func expirySetup(ctx context.Context, dir string, e env) error {
	// The policy's retention as table properties, so that the plan has
	// no property change to commit first.
	tbl, done, err := createTable(ctx, dir, e, expiryIdent, "s3://"+e.Bucket+"/"+e.expiryPrefix(),
		iceberg.Properties{config.PropMaxSnapshotAge: "86400000", config.PropMinSnapshots: "1"})
	if err != nil {
		return err
	}
	defer done()
	start := time.Now()
	var expired []iceberg.DataFile
	per := (e.Expired + expiryCommits - 1) / expiryCommits
	for lo := 0; lo < e.Expired; lo += per {
		keys, files := expiryFiles(e, lo, min(lo+per, e.Expired), false)
		if err := put(ctx, e, keys); err != nil {
			return err
		}
		dfs, err := benchlake.DataFiles(tbl.Spec(), files)
		if err != nil {
			return err
		}
		if tbl, err = benchlake.AddDataFiles(ctx, tbl, dfs); err != nil {
			return err
		}
		expired = append(expired, dfs...)
		fmt.Fprintf(os.Stderr, "%d/%d to expire (%s)\n", len(expired), e.Expired, time.Since(start).Round(time.Second))
	}
	keys, files := expiryFiles(e, 0, e.Kept, true)
	if err := put(ctx, e, keys); err != nil {
		return err
	}
	kept, err := benchlake.DataFiles(tbl.Spec(), files)
	if err != nil {
		return err
	}
	txn := tbl.NewTransaction()
	if err := txn.ReplaceDataFilesWithDataFiles(ctx, expired, kept, nil); err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		return fmt.Errorf("commit replace: %w", err)
	}
	done()
	if err := copyFile(filepath.Join(dir, "catalog.db"), filepath.Join(dir, "pristine.db")); err != nil {
		return err
	}
	// Every metadata object, to put back before each contender.
	c := client(e, e.Endpoint)
	return listKeys(ctx, c, e, e.expiryPrefix()+"/metadata/", func(k string) error {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(e.Bucket), Key: aws.String(k)})
		if err != nil {
			return err
		}
		defer out.Body.Close()
		b, err := io.ReadAll(out.Body)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, "pristine", strings.TrimPrefix(k, e.expiryPrefix()+"/"))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, b, 0o644)
	})
}

// expiryReset puts the table back as setup left it (not measured): the
// catalog file, the metadata objects (and none other), every data file.
func expiryReset(ctx context.Context, dir string, e env) error {
	db := filepath.Join(dir, "catalog.db")
	for _, p := range []string{db + "-wal", db + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := copyFile(filepath.Join(dir, "pristine.db"), db); err != nil {
		return err
	}
	c := client(e, e.Endpoint)
	pristine := filepath.Join(dir, "pristine")
	if err := listKeys(ctx, c, e, e.expiryPrefix()+"/metadata/", func(k string) error {
		if _, err := os.Stat(filepath.Join(pristine, strings.TrimPrefix(k, e.expiryPrefix()+"/"))); err == nil {
			return nil
		}
		_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(e.Bucket), Key: aws.String(k)})
		return err
	}); err != nil {
		return err
	}
	if err := filepath.WalkDir(pristine, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(pristine, p)
		_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(e.Bucket), Key: aws.String(e.expiryPrefix() + "/" + filepath.ToSlash(rel)), Body: strings.NewReader(string(b))})
		return err
	}); err != nil {
		return err
	}
	keys, _ := expiryFiles(e, 0, e.Expired, false)
	kept, _ := expiryFiles(e, 0, e.Kept, true)
	return put(ctx, e, append(keys, kept...))
}

// runIcewrightExpiry plans and applies the retention policy in process, with
// the clock 10 days ahead.
func runIcewrightExpiry(ctx context.Context, dir string, e env, endpoint string) error {
	r, err := planApply(ctx, dir, e, endpoint, `policy "retain" {
  snapshot_retention {
    max_age       = "1d"
    min_snapshots = 1
  }
}

tables "bench.bench.expiry" {
  policy = policy.retain
}
`)
	if err != nil {
		return err
	}
	fmt.Printf("icewright: plan %.2fs, apply (commit + delete) %.2fs, of which deleting %.2fs, snapshots expired %d, deleted %d, delete errors %d, failed %v\n",
		r.planned.Seconds(), r.applied.Seconds(), r.deleting.Seconds(), r.expired, r.deleted, r.errors, r.failed)
	return nil
}

// runIcebergExpiry is iceberg-go v0.7.0's expiry on the same table:
// Transaction.ExpireSnapshots keeping the last snapshot, whose commit
// deletes what the expired snapshots alone reached (its post-commit step:
// the IO's DeleteFiles, else one Remove per file).
func runIcebergExpiry(ctx context.Context, dir string, e env, endpoint string) error {
	tbl, done, err := loadTable(ctx, dir, e, endpoint, expiryIdent)
	if err != nil {
		return err
	}
	defer done()
	before := len(tbl.Metadata().Snapshots())
	t0 := time.Now()
	txn := tbl.NewTransaction()
	if err := txn.ExpireSnapshots(table.WithOlderThan(0), table.WithRetainLast(1)); err != nil {
		return err
	}
	out, err := txn.Commit(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("iceberg-go: expire (commit + delete) %.2fs, snapshots expired %d\n", time.Since(t0).Seconds(), before-len(out.Metadata().Snapshots()))
	return nil
}

// expiryVerify checks the table after a contender, reading the bucket
// directly: one snapshot left, every file it reaches (manifest list,
// manifests, live data files) present, every expired data file gone. It
// also counts the metadata objects of setup now gone.
func expiryVerify(ctx context.Context, dir string, e env) error {
	tbl, done, err := loadTable(ctx, dir, e, e.Endpoint, expiryIdent)
	if err != nil {
		return err
	}
	defer done()
	c := client(e, e.Endpoint)
	there := map[string]bool{}
	if err := listKeys(ctx, c, e, e.expiryPrefix()+"/", func(k string) error {
		there["s3://"+e.Bucket+"/"+k] = true
		return nil
	}); err != nil {
		return err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	var missing []string
	reached := map[string]bool{}
	need := func(p string) {
		if reached[p] {
			return
		}
		reached[p] = true
		if !there[p] {
			missing = append(missing, p)
		}
	}
	need(tbl.MetadataLocation())
	snaps := tbl.Metadata().Snapshots()
	for _, s := range snaps {
		need(s.ManifestList)
		mans, err := s.Manifests(fsys)
		if err != nil {
			return err
		}
		for _, m := range mans {
			need(m.FilePath())
			for entry, err := range m.Entries(fsys, true) {
				if err != nil {
					return err
				}
				need(entry.DataFile().FilePath())
			}
		}
	}
	var left int
	keys, _ := expiryFiles(e, 0, e.Expired, false)
	for _, k := range keys {
		if there["s3://"+e.Bucket+"/"+k] {
			left++
		}
	}
	var metaGone int
	_ = filepath.WalkDir(filepath.Join(dir, "pristine"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(filepath.Join(dir, "pristine"), p)
			if !there["s3://"+e.Bucket+"/"+e.expiryPrefix()+"/"+filepath.ToSlash(rel)] {
				metaGone++
			}
		}
		return nil
	})
	fmt.Printf("verify: %d snapshots left, %d reachable files present, %d missing, %d of %d expired data files left, %d metadata files of setup gone\n",
		len(snaps), len(reached)-len(missing), len(missing), left, e.Expired, metaGone)
	switch {
	case len(snaps) != 1:
		return fmt.Errorf("%d snapshots left, want 1", len(snaps))
	case len(missing) > 0:
		return fmt.Errorf("%d reachable files missing, such as %s", len(missing), missing[0])
	case left > 0:
		return fmt.Errorf("%d expired data files left", left)
	}
	return nil
}

// listKeys calls fn for each key under prefix (a paginated listing).
func listKeys(ctx context.Context, c *s3.Client, e env, prefix string, fn func(key string) error) error {
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(e.Bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, o := range page.Contents {
			if err := fn(aws.ToString(o.Key)); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
