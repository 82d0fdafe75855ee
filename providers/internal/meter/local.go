package meter

import (
	"context"
	"io"
	"io/fs"
	"net/url"
	"sync"

	iceio "github.com/apache/iceberg-go/io"
)

// RegisterLocal makes iceberg-go open file:// and bare paths with Local:
// an IO opened with a context carrying a Meter counts what it does in it;
// any other is iceberg-go's LocalFS itself. Called once, at init.
func RegisterLocal() {
	for _, scheme := range []string{"file", ""} {
		iceio.Unregister(scheme)
		iceio.Register(scheme, func(ctx context.Context, _ *url.URL, _ map[string]string) (iceio.IO, error) {
			return Local(ctx), nil
		})
	}
}

// Local is the local-disk IO for ctx: iceberg-go's LocalFS, counting in
// ctx's Meter when it carries one. Each Open or ReadFile is a GET (the
// file read, its bytes as read), and so is each ReadAt of an opened file
// (readFile), each Create (on Close) or WriteFile a
// PUT (a file written, its bytes), each Remove a DELETE (a file deleted
// when it existed), each Stat a HEAD, each ReadDir and each directory a
// WalkDir enters a LIST. Renames, directory creations and RemoveAll are
// not counted: they move or make no object bytes.
func Local(ctx context.Context) iceio.IO {
	m := Of(ctx)
	if m == nil {
		return iceio.LocalFS{}
	}
	return localIO{m: m}
}

// localIO is iceberg-go's LocalFS with every IO interface it implements,
// counting in m.
type localIO struct {
	iceio.LocalFS
	m *Meter
}

func (l localIO) Open(name string) (iceio.File, error) {
	l.m.Request(Get)
	f, err := l.LocalFS.Open(name)
	if err != nil {
		return nil, err
	}
	l.m.FileRead(name)
	return &readFile{File: f, m: l.m}, nil
}

func (l localIO) ReadFile(name string) ([]byte, error) {
	l.m.Request(Get)
	b, err := l.LocalFS.ReadFile(name)
	if err == nil {
		l.m.FileRead(name)
		l.m.Read(int64(len(b)))
	}
	return b, err
}

func (l localIO) Create(name string) (iceio.FileWriter, error) {
	w, err := l.LocalFS.Create(name)
	if err != nil {
		return nil, err
	}
	return &writeFile{FileWriter: w, m: l.m}, nil
}

func (l localIO) WriteFile(name string, p []byte) error {
	l.m.Request(Put)
	err := l.LocalFS.WriteFile(name, p)
	if err == nil {
		l.m.FilesWritten(1)
		l.m.Wrote(int64(len(p)))
	}
	return err
}

func (l localIO) Remove(name string) error {
	l.m.Request(Delete)
	err := l.LocalFS.Remove(name)
	if err == nil {
		l.m.FilesDeleted(1)
	}
	return err
}

func (l localIO) Stat(name string) (fs.FileInfo, error) {
	l.m.Request(Head)
	return l.LocalFS.Stat(name)
}

func (l localIO) ReadDir(name string) ([]fs.DirEntry, error) {
	l.m.Request(List)
	return l.LocalFS.ReadDir(name)
}

func (l localIO) WalkDir(root string, fn fs.WalkDirFunc) error {
	return l.LocalFS.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			l.m.Request(List)
		}
		return fn(p, d, err)
	})
}

// readFile counts the bytes read from a file, by Read and ReadAt alike,
// and as GETs each ReadAt and each Read after a Seek that moved: iceberg-go's
// object-store IO sends one ranged GET for each of those besides the one
// its Open starts, so a local read counts the requests the same read would
// send to S3.
type readFile struct {
	iceio.File
	m *Meter
	// pos is the offset of the next Read; moved is set by a Seek that
	// changed it: the object-store reader then sends a new GET on the
	// next Read (gocloud's blob.Reader reopens its range).
	pos   int64
	moved bool
}

func (f *readFile) Read(p []byte) (int, error) {
	if f.moved {
		f.m.Request(Get)
		f.moved = false
	}
	n, err := f.File.Read(p)
	f.pos += int64(n)
	f.m.Read(int64(n))
	return n, err
}

func (f *readFile) Seek(off int64, whence int) (int64, error) {
	n, err := f.File.Seek(off, whence)
	if err == nil && n != f.pos {
		f.pos, f.moved = n, true
	}
	return n, err
}

func (f *readFile) ReadAt(p []byte, off int64) (int, error) {
	f.m.Request(Get)
	n, err := f.File.ReadAt(p, off)
	f.m.Read(int64(n))
	return n, err
}

// ReadDir keeps a directory opened with Open listable (iceio.ReadDirFile).
func (f *readFile) ReadDir(n int) ([]fs.DirEntry, error) {
	d, ok := f.File.(iceio.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Err: fs.ErrInvalid}
	}
	f.m.Request(List)
	return d.ReadDir(n)
}

// writeFile counts a file written when it is closed, with the bytes
// written to it.
type writeFile struct {
	iceio.FileWriter
	m    *Meter
	n    int64
	once sync.Once
}

func (w *writeFile) Write(p []byte) (int, error) {
	n, err := w.FileWriter.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *writeFile) ReadFrom(r io.Reader) (int64, error) {
	// Through Write, so that the bytes are counted however they come.
	return io.Copy(struct{ io.Writer }{w}, r)
}

func (w *writeFile) Close() error {
	err := w.FileWriter.Close()
	w.once.Do(func() {
		w.m.Request(Put)
		if err == nil {
			w.m.FilesWritten(1)
			w.m.Wrote(w.n)
		}
	})
	return err
}
