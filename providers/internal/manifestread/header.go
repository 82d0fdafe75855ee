package manifestread

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/avro/ocf"
)

// Bounds on what a manifest's bytes may ask for. A corrupt or hostile
// file is refused before it makes us allocate more than these, and never
// more than the bytes it actually holds beyond eagerAlloc.
const (
	maxMetaEntries  = 1024     // keys in the header's metadata map
	maxMetaKey      = 1 << 10  // bytes of one metadata key
	maxMetaValue    = 64 << 20 // bytes of one metadata value (the Avro and Iceberg schemas of a wide table)
	maxBlockBytes   = 64 << 20 // a block as stored (ocf's default WithMaxBlockBytes)
	maxBlockDecoded = 64 << 20 // a block decompressed (ocf's default WithMaxDecompressedBlockBytes)
	// eagerAlloc is the largest declared length allocated before the
	// bytes are read; a longer one grows with the bytes actually there,
	// so a small file declaring a huge length fails without the
	// allocation.
	eagerAlloc = 1 << 20
	// maxZeroByteRecords bounds a block's record count beyond its length
	// (as ocf does): a manifest entry is never zero bytes, so this only
	// refuses a corrupt count early.
	maxZeroByteRecords = 4 << 10
)

var magic = [4]byte{'O', 'b', 'j', 1}

// header is an Avro object container file's header.
type header struct {
	meta map[string][]byte
	sync [16]byte
}

// readHeader reads the magic, the metadata map and the sync marker.
func readHeader(r *bufio.Reader) (header, error) {
	var h header
	var m [4]byte
	if _, err := io.ReadFull(r, m[:]); err != nil {
		return h, fmt.Errorf("read the Avro magic: %w", noEOF(err))
	}
	if m != magic {
		return h, fmt.Errorf("not an Avro object container file (magic %x)", m)
	}
	meta, err := readMeta(r)
	if err != nil {
		return h, fmt.Errorf("read the Avro header's metadata: %w", noEOF(err))
	}
	h.meta = meta
	if _, err := io.ReadFull(r, h.sync[:]); err != nil {
		return h, fmt.Errorf("read the Avro sync marker: %w", noEOF(err))
	}
	return h, nil
}

// readMeta reads the header's map<bytes>.
func readMeta(r *bufio.Reader) (map[string][]byte, error) {
	meta := map[string][]byte{}
	for {
		count, err := binary.ReadVarint(r)
		if err != nil {
			return nil, err
		}
		if count == 0 {
			return meta, nil
		}
		if count < 0 {
			count = -count
			if count < 0 {
				return nil, errors.New("invalid map block count")
			}
			if _, err := binary.ReadVarint(r); err != nil { // the block's byte size
				return nil, err
			}
		}
		if count > maxMetaEntries-int64(len(meta)) {
			return nil, fmt.Errorf("more than %d metadata keys", maxMetaEntries)
		}
		for range count {
			key, err := readBytes(r, maxMetaKey, "metadata key")
			if err != nil {
				return nil, err
			}
			val, err := readBytes(r, maxMetaValue, "metadata value")
			if err != nil {
				return nil, err
			}
			meta[string(key)] = val
		}
	}
}

// readBytes reads an Avro bytes value of at most limit bytes.
func readBytes(r *bufio.Reader, limit int64, what string) ([]byte, error) {
	n, err := binary.ReadVarint(r)
	if err != nil {
		return nil, err
	}
	if n < 0 || n > limit {
		return nil, fmt.Errorf("%s length %d out of range [0, %d]", what, n, limit)
	}
	return readN(r, n)
}

// readN reads exactly n bytes, allocating up front only up to eagerAlloc.
func readN(r io.Reader, n int64) ([]byte, error) {
	if n <= eagerAlloc {
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, noEOF(err)
		}
		return b, nil
	}
	var buf bytes.Buffer
	if got, err := io.CopyN(&buf, r, n); err != nil {
		return nil, fmt.Errorf("%d of %d bytes: %w", got, n, noEOF(err))
	}
	return buf.Bytes(), nil
}

// noEOF: a file that ends inside a structure is truncated, not ended.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// codec returns the decompressor the header names (twmb/avro's own, each
// bounded), and a function releasing it.
func codec(meta map[string][]byte) (ocf.BoundedDecompressor, func(), error) {
	name := "null"
	if c, ok := meta["avro.codec"]; ok {
		name = string(c)
	}
	var c ocf.Codec
	switch name {
	case "null":
		return nullCodec{}, func() {}, nil
	case "deflate":
		c = ocf.DeflateCodec(-1)
	case "snappy":
		c = ocf.SnappyCodec()
	case "zstandard":
		z, err := ocf.ZstdCodec(nil, nil)
		if err != nil {
			return nil, nil, err
		}
		c = z
	default:
		return nil, nil, fmt.Errorf("unknown Avro codec %.40q", name)
	}
	b, ok := c.(ocf.BoundedDecompressor)
	if !ok {
		c.Close()
		return nil, nil, fmt.Errorf("Avro codec %q has no bounded decompression", name)
	}
	return b, func() { c.Close() }, nil
}

// nullCodec is the uncompressed codec (ocf's is not exported).
type nullCodec struct{}

func (nullCodec) DecompressBounded(src []byte, limit int64) ([]byte, error) {
	if limit > 0 && int64(len(src)) > limit {
		return nil, fmt.Errorf("block of %d bytes exceeds %d", len(src), limit)
	}
	return src, nil
}

// blocks reads the data blocks after the header.
type blocks struct {
	r     *bufio.Reader
	sync  [16]byte
	codec ocf.BoundedDecompressor
}

// next returns the next block's record count and decompressed bytes; io.EOF
// at a clean end (the file ends at a block boundary).
func (b *blocks) next() (int64, []byte, error) {
	for {
		count, err := binary.ReadVarint(b.r)
		if err != nil {
			if err == io.EOF {
				return 0, nil, io.EOF
			}
			return 0, nil, fmt.Errorf("read a block's count: %w", err)
		}
		size, err := binary.ReadVarint(b.r)
		if err != nil {
			return 0, nil, fmt.Errorf("read a block's size: %w", noEOF(err))
		}
		if count < 0 || size < 0 || size > maxBlockBytes {
			return 0, nil, fmt.Errorf("invalid block (count %d, size %d; at most %d bytes)", count, size, maxBlockBytes)
		}
		data, err := readN(b.r, size)
		if err != nil {
			return 0, nil, fmt.Errorf("read a block: %w", err)
		}
		var sync [16]byte
		if _, err := io.ReadFull(b.r, sync[:]); err != nil {
			return 0, nil, fmt.Errorf("read a block's sync marker: %w", noEOF(err))
		}
		if sync != b.sync {
			return 0, nil, errors.New("a block's sync marker does not match the header's")
		}
		if count == 0 {
			continue
		}
		block, err := b.codec.DecompressBounded(data, maxBlockDecoded)
		if err != nil {
			return 0, nil, fmt.Errorf("decompress a block: %w", noEOF(err))
		}
		if count > int64(len(block))+maxZeroByteRecords {
			return 0, nil, fmt.Errorf("a block claims %d records in %d bytes", count, len(block))
		}
		return count, block, nil
	}
}
