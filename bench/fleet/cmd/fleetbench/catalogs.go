package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/bench/plan/benchlake"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers/catalogs"
)

// openConfigured opens the one catalog of the configuration in dir as
// icewright does: the catalog, its block, and its database handle for a SQL
// catalog (nil otherwise). The returned func closes both.
func openConfigured(ctx context.Context, dir string) (catalog.Catalog, *config.Catalog, *sql.DB, func(), error) {
	cfg, diags := config.Load(dir, config.LoadOptions{Env: os.Environ()})
	if diags.HasErrors() {
		return nil, nil, nil, nil, fmt.Errorf("configuration %s: %s", dir, diags.Error())
	}
	if len(cfg.Catalogs) != 1 {
		return nil, nil, nil, nil, fmt.Errorf("configuration %s: want one catalog, has %d", dir, len(cfg.Catalogs))
	}
	c := cfg.Catalogs[0]
	cat, db, err := catalogs.Open(ctx, cfg.Dir, c)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("open catalog %s: %w", c.Name, err)
	}
	return cat, c, db, func() {
		if cl, ok := cat.(io.Closer); ok {
			_ = cl.Close()
		}
		if db != nil {
			_ = db.Close()
		}
	}, nil
}

// register copies every table row and namespace of the sqlite fleet in dir
// into the SQL catalog of the configuration in cfgDir, under that
// catalog's name, replacing what the name held: the same metadata files,
// reached through another database.
func register(ctx context.Context, dir, cfgDir string) error {
	if cfgDir == "" {
		return fmt.Errorf("-config is required")
	}
	lake, err := benchlake.Open(dir)
	if err != nil {
		return err
	}
	defer lake.Close()
	// Opening creates the catalog's tables in a fresh database.
	_, c, db, closeCat, err := openConfigured(ctx, cfgDir)
	if err != nil {
		return err
	}
	defer closeCat()
	if db == nil {
		return fmt.Errorf("configuration %s: want a sql catalog, has %s", cfgDir, c.Type)
	}

	rows, err := lake.DB.QueryContext(ctx, `SELECT table_namespace, table_name, metadata_location FROM iceberg_tables WHERE catalog_name = ?`, benchlake.CatalogName)
	if err != nil {
		return err
	}
	type row struct{ ns, name, loc string }
	var all []row
	nss := map[string]bool{}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.ns, &r.name, &r.loc); err != nil {
			return err
		}
		all = append(all, r)
		nss[r.ns] = true
	}
	if err := rows.Close(); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for _, q := range []string{`DELETE FROM iceberg_tables WHERE catalog_name = $1`, `DELETE FROM iceberg_namespace_properties WHERE catalog_name = $1`} {
		if _, err := tx.ExecContext(ctx, q, c.Name); err != nil {
			return err
		}
	}
	for ns := range nss {
		if _, err := tx.ExecContext(ctx, `INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value) VALUES ($1, $2, 'exists', 'true')`, c.Name, ns); err != nil {
			return err
		}
	}
	// Rows in statements of 500: one round trip each, not one per table.
	const per = 500
	for start := 0; start < len(all); start += per {
		chunk := all[start:min(start+per, len(all))]
		var sb strings.Builder
		sb.WriteString(`INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, iceberg_type, metadata_location, previous_metadata_location) VALUES `)
		args := make([]any, 0, 4*len(chunk))
		for i, r := range chunk {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "($%d, $%d, $%d, 'TABLE', $%d, NULL)", 4*i+1, 4*i+2, 4*i+3, 4*i+4)
			args = append(args, c.Name, r.ns, r.name, r.loc)
		}
		if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d tables in %d namespaces registered in catalog %s\n", len(all), len(nss), c.Name)
	return nil
}

// setupCatalog builds the fleet in the catalog of the configuration in
// cfgDir (namespaces PREFIXns0000...) by real appends, par tables at once
// (each table's appends in order); tables that exist are kept, so an
// interrupted setup resumes.
func setupCatalog(ctx context.Context, cfgDir, prefix string, n, appends, parts, perNS, par int) error {
	if cfgDir == "" {
		return fmt.Errorf("-config is required")
	}
	cat, _, _, closeCat, err := openConfigured(ctx, cfgDir)
	if err != nil {
		return err
	}
	defer closeCat()
	t0 := time.Now()
	var (
		done atomic.Int64
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		next = make(chan int)
	)
	build := func(i int) error {
		ns := fmt.Sprintf("%sns%04d", prefix, i/perNS)
		name := fmt.Sprintf("t%06d", i)
		id := table.Identifier{ns, name}
		if ok, err := cat.CheckTableExists(ctx, id); err == nil && ok {
			return nil
		}
		tbl, err := benchlake.CreateIn(ctx, cat, ns, name, iceberg.Properties{
			"write.target-file-size-bytes": fmt.Sprint(128 << 20),
		})
		if err != nil {
			return err
		}
		for a := range appends {
			if tbl, err = benchlake.Append(ctx, tbl, int64(a*100), 100, parts); err != nil {
				return fmt.Errorf("%s.%s: %w", ns, name, err)
			}
		}
		return nil
	}
	for range max(1, par) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := build(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
				if d := done.Add(1); d%100 == 0 {
					fmt.Fprintf(os.Stderr, "%d tables (%s)\n", d, time.Since(t0).Round(time.Second))
				}
			}
		}()
	}
	for i := range n {
		mu.Lock()
		failed := len(errs) > 0
		mu.Unlock()
		if failed {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// delayProxy forwards TCP connections from listen to upstream, holding
// each chunk the client sends for d first: a request or query then waits
// one added round trip, as across a network. Answers are not held (the
// round trip is added once, on the way in). It prints its address and
// serves until killed.
func delayProxy(listen, upstream string, d time.Duration) error {
	if upstream == "" {
		return errors.New("-upstream is required")
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	// The connections and client chunks (requests, queries) passed, on
	// stderr every second they change: what a side costs in round trips.
	var conns, chunks atomic.Int64
	go func() {
		var last int64 = -1
		for range time.Tick(time.Second) {
			if n := chunks.Load(); n != last {
				last = n
				fmt.Fprintf(os.Stderr, "%d connections, %d requests\n", conns.Load(), n)
			}
		}
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		conns.Add(1)
		go func() {
			defer c.Close()
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				return
			}
			defer u.Close()
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						chunks.Add(1)
						time.Sleep(d)
						if _, werr := u.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				_ = u.(*net.TCPConn).CloseWrite()
			}()
			go func() {
				defer wg.Done()
				_, _ = io.Copy(c, u)
				_ = c.(*net.TCPConn).CloseWrite()
			}()
			wg.Wait()
		}()
	}
}
