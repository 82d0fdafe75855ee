package meter

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
)

// S3Call is one S3 request attempt being counted. Its methods do nothing
// on a nil S3Call (no Meter in the request's context).
type S3Call struct {
	m         *Meter
	mu        sync.Mutex // the transport may read the request body while the answer is read
	object    string     // host/path of an object GET
	writes    bool       // a success writes a file (PUT, copy, multipart completion)
	deletes   bool       // a success deletes a file (DELETE of an object)
	sendBody  bool       // request body bytes are object bytes written
	readBody  bool       // answer body bytes are object bytes read
	batch     bool       // a DeleteObjects: files deleted come from the bodies
	ok        bool       // the answer was a success (2xx)
	keys      tokens     // <Key> in a batch delete's request
	errs      tokens     // <Error> in its answer (the request is Quiet)
	countedOK bool
	length    int64 // object bytes the request body carries; -1: count them as sent
	sent      int64
}

// S3 counts req, an attempt of an S3 request, by its method and query,
// and returns the call whose bodies and answer complete the count (nil
// when m is nil):
//   - GET with list-type (ListObjectsV2), uploads or uploadId (listing
//     multipart uploads and parts): a LIST page; any other GET: a GET of
//     an object, its answer's body bytes read, the object read once;
//   - HEAD: a HEAD;
//   - PUT: a PUT; an object PUT or a part (partNumber) that succeeds
//     wrote its object bytes (not the aws-chunked framing, nor a failed
//     attempt's); a copy (x-amz-copy-source) sends none; an object PUT or a
//     copy writes a file;
//   - POST ?delete: a batch delete, whose files deleted are the keys it
//     sent less the errors its answer lists; POST ?uploads (a multipart
//     start) and POST ?uploadId (its completion, which writes the file):
//     a PUT each;
//   - DELETE: a DELETE; of an object, a file deleted (not of an uploadId:
//     an abandoned multipart upload).
func (m *Meter) S3(req *http.Request) *S3Call {
	if m == nil {
		return nil
	}
	q := req.URL.Query()
	has := func(k string) bool { _, ok := q[k]; return ok }
	c := &S3Call{m: m}
	switch req.Method {
	case http.MethodGet:
		if has("list-type") || has("uploads") || has("uploadId") {
			m.Request(List)
			break
		}
		m.Request(Get)
		c.object, c.readBody = req.URL.Host+req.URL.Path, true
	case http.MethodHead:
		m.Request(Head)
	case http.MethodPut:
		m.Request(Put)
		switch {
		case has("partNumber"):
			c.sendBody = true
		case req.Header.Get("X-Amz-Copy-Source") != "":
			c.writes = true
		default:
			c.sendBody, c.writes = true, true
		}
		c.length = objectLength(req)
	case http.MethodPost:
		switch {
		case has("delete"):
			m.Request(BatchDelete)
			c.batch = true
			c.keys.tok, c.errs.tok = []byte("<Key>"), []byte("<Error>")
		case has("uploadId"):
			m.Request(Put)
			c.writes = true
		default:
			m.Request(Put)
		}
	case http.MethodDelete:
		m.Request(Delete)
		c.deletes = !has("uploadId")
	}
	return c
}

// Sent counts p, bytes of the request body the transport read.
func (c *S3Call) Sent(p []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent += int64(len(p))
	if c.batch {
		c.keys.scan(p)
	}
}

// Answered counts the answer's status: a success writes or deletes what
// the request said.
func (c *S3Call) Answered(status int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ok = status >= 200 && status < 300
	if !c.ok {
		return
	}
	if c.sendBody {
		if c.length >= 0 {
			c.m.Wrote(c.length)
		} else {
			c.m.Wrote(c.sent)
		}
	}
	if c.writes {
		c.m.FilesWritten(1)
	}
	if c.deletes {
		c.m.FilesDeleted(1)
	}
	if c.object != "" {
		c.m.FileRead(c.object)
	}
}

// Received counts p, bytes of the answer's body read.
func (c *S3Call) Received(p []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok {
		return
	}
	if c.readBody {
		c.m.Read(int64(len(p)))
	}
	if c.batch {
		c.errs.scan(p)
	}
}

// Closed ends the call once its answer's body is closed: a batch delete's
// files deleted are known then.
func (c *S3Call) Closed() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok || !c.batch || c.countedOK {
		return
	}
	c.countedOK = true
	c.m.FilesDeleted(c.keys.n - c.errs.n)
}

// objectLength is the object bytes a PUT's body carries: its decoded
// length when the SDK sends it aws-chunked (with a trailing checksum), else
// its Content-Length; -1 when neither is known (the bytes sent count).
func objectLength(req *http.Request) int64 {
	if v := req.Header.Get("X-Amz-Decoded-Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	if req.ContentLength > 0 || (req.ContentLength == 0 && (req.Body == nil || req.Body == http.NoBody)) {
		return req.ContentLength
	}
	return -1
}

// tokens counts the occurrences of tok in a stream read in pieces.
type tokens struct {
	tok  []byte
	tail []byte // the last len(tok)-1 bytes seen, for a token split across pieces
	n    int64
}

func (t *tokens) scan(p []byte) {
	if len(t.tok) == 0 || len(p) == 0 {
		return
	}
	buf := append(t.tail, p...)
	t.n += int64(bytes.Count(buf, t.tok))
	keep := min(len(t.tok)-1, len(buf))
	t.tail = append([]byte(nil), buf[len(buf)-keep:]...)
}
