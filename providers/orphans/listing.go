package orphans

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// listWorkers is how many directories a local listing reads at once.
// Listing is readdir and lstat system calls, one per file; on a table of
// millions of files they are most of an orphan scan, and they overlap well.
const listWorkers = 4

// localFile is what walkLocal reports for one regular file.
type localFile struct {
	path  string
	size  int64
	mtime int64 // ms
}

// walkLocal lists every regular file under root with listWorkers
// goroutines, with the guarantees filepath.WalkDir gave the scan:
//   - symbolic links are never followed: onSymlink gets each one (file or
//     directory), and nothing under a linked directory is listed;
//   - iceops' own directories (ownDir: the quarantine, the leases) are skipped;
//   - sockets, devices and pipes are ignored (never ours to delete);
//   - a file removed between readdir and lstat is skipped, but any other
//     error, including a directory that cannot be read, fails the whole
//     listing: a partial listing must never be compared with references;
//   - a root that does not exist is an empty listing.
//
// emit and onSymlink are called from one goroutine at a time.
func walkLocal(ctx context.Context, root string, emit func(localFile) error, onSymlink func(p string)) error {
	info, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a configured path with nothing written yet
	}
	if err != nil {
		return err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		onSymlink(root)
		return nil
	}
	if !info.IsDir() {
		if info.Mode().IsRegular() {
			return emit(localFile{root, info.Size(), info.ModTime().UnixMilli()})
		}
		return nil
	}

	// A stack of directories shared by the workers: a worker waits while
	// the stack is empty and others may still push to it; the listing is
	// complete when the stack is empty and no worker is reading.
	var (
		mu      sync.Mutex // guards stack, active, failed; serialises emit and onSymlink
		cond    = sync.NewCond(&mu)
		stack   = []string{root}
		active  int
		failed  error
		workers sync.WaitGroup
	)
	readDir := func(dir string) error {
		f, err := os.Open(dir)
		if err != nil {
			return err
		}
		defer f.Close()
		for {
			entries, err := f.ReadDir(512)
			for _, d := range entries {
				p := filepath.Join(dir, d.Name())
				switch t := d.Type(); {
				case t&fs.ModeSymlink != 0:
					mu.Lock()
					onSymlink(p)
					mu.Unlock()
				case d.IsDir():
					if !ownDir(d.Name()) {
						mu.Lock()
						stack = append(stack, p)
						cond.Signal()
						mu.Unlock()
					}
				case t.IsRegular():
					info, err := d.Info()
					if errors.Is(err, fs.ErrNotExist) {
						continue // removed while we listed
					}
					if err != nil {
						return err
					}
					mu.Lock()
					err = emit(localFile{p, info.Size(), info.ModTime().UnixMilli()})
					mu.Unlock()
					if err != nil {
						return err
					}
				}
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	for range listWorkers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			mu.Lock()
			defer mu.Unlock()
			for {
				for len(stack) == 0 && active > 0 && failed == nil {
					cond.Wait()
				}
				if failed != nil || len(stack) == 0 {
					return // failed, or complete (empty and nobody reading)
				}
				dir := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				active++
				mu.Unlock()
				err := readDir(dir)
				mu.Lock()
				active--
				if err != nil && failed == nil {
					failed = err
				}
				if failed != nil || (active == 0 && len(stack) == 0) {
					cond.Broadcast()
				}
			}
		}()
	}
	workers.Wait()
	return failed
}
