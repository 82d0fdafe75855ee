package objdel

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"unicode/utf8"

	iceio "github.com/apache/iceberg-go/io"
)

// viaIO deletes, through the table's own iceberg-go IO, the locations whose
// keys gocloud (under iceberg-go's GCS and Azure IO) escapes before it
// sends them: gocloud writes the key "a?b" as the blob "a__0x3f__b" on
// Azure, so a Store sending "a?b" itself would miss the object, or reach
// another one. Rather than copy gocloud's escaping, such a location goes
// through the IO that wrote it. The IO is opened on first use only, with
// the same properties.
type viaIO struct {
	props map[string]string
	root  string

	once sync.Once
	fsys iceio.IO
	err  error
}

func (v *viaIO) remove(ctx context.Context, loc string) error {
	// The IO keeps the context it is opened with for all its requests: not
	// the first caller's, which may end before later callers are done.
	v.once.Do(func() { v.fsys, v.err = iceio.LoadFS(context.WithoutCancel(ctx), v.props, v.root) })
	if v.err != nil {
		return fmt.Errorf("delete %s: open the table's IO: %w", loc, v.err)
	}
	if err := v.fsys.Remove(loc); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", loc, err)
	}
	return nil
}

// gocloudEscapes reports whether gocloud v0.46.0's escapeKey may change
// key for the store (gcsblob or azureblob): conservative, since a key sent
// through the IO by mistake is only slower. Invalid UTF-8 always goes
// through the IO (gocloud rewrites it when it escapes anything).
func gocloudEscapes(key string, azure bool) bool {
	if !utf8.ValidString(key) || strings.Contains(key, "../") {
		return true
	}
	if !azure {
		return strings.ContainsAny(key, "\n\r")
	}
	if strings.HasSuffix(key, "/") {
		return true
	}
	return strings.IndexFunc(key, func(r rune) bool {
		return r < 32 || r == 127 || strings.ContainsRune(`"#%?\`, r)
	}) >= 0
}
