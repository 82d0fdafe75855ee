package meter

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	iceio "github.com/apache/iceberg-go/io"
)

// TestS3Classifies: each S3 request is counted by its method and query,
// files and bytes only for what succeeded, a batch delete's files from its
// bodies however the transport splits them.
func TestS3Classifies(t *testing.T) {
	m := New()
	ctx := With(context.Background(), m)
	if Of(ctx) != m || Of(context.Background()) != nil {
		t.Fatal("Of does not return the meter ctx carries")
	}
	send := func(method, url string, hdr map[string]string, body string, status int, answer string) {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		c := m.S3(req)
		// The transport reads the body in pieces of 3 bytes.
		for i := 0; i < len(body); i += 3 {
			c.Sent([]byte(body[i:min(i+3, len(body))]))
		}
		c.Answered(status)
		for i := 0; i < len(answer); i += 4 {
			c.Received([]byte(answer[i:min(i+4, len(answer))]))
		}
		c.Closed()
	}
	b := "http://s3.test/bucket/"
	send("GET", b+"?list-type=2&prefix=t/", nil, "", 200, "<ListBucketResult>...</ListBucketResult>")
	send("GET", b+"t/data/a.parquet", map[string]string{"Range": "bytes=0-9"}, "", 206, "0123456789")
	send("GET", b+"t/data/a.parquet", map[string]string{"Range": "bytes=10-14"}, "", 206, "abcde")
	send("GET", b+"t/data/missing.parquet", nil, "", 404, "<Error>NoSuchKey</Error>")
	send("HEAD", b+"t/data/a.parquet", nil, "", 200, "")
	send("PUT", b+"t/metadata/v2.json", nil, "{\"x\":1}", 200, "")
	send("PUT", b+"t/data/big?partNumber=1&uploadId=u", nil, "part-one", 200, "")
	send("PUT", b+"t/data/big?partNumber=2&uploadId=u", nil, "part-two", 500, "")
	send("POST", b+"t/data/big?uploads", nil, "", 200, "")
	send("POST", b+"t/data/big?uploadId=u", nil, "<Complete/>", 200, "")
	send("PUT", b+"t/q/a.parquet", map[string]string{"X-Amz-Copy-Source": "bucket/t/data/a.parquet"}, "", 200, "")
	send("DELETE", b+"t/data/a.parquet", nil, "", 204, "")
	send("DELETE", b+"t/data/big?uploadId=v", nil, "", 204, "")
	send("POST", b+"?delete", nil, "<Delete><Quiet>true</Quiet><Object><Key>k1</Key></Object><Object><Key>k2</Key></Object><Object><Key>k3</Key></Object></Delete>",
		200, "<DeleteResult><Error><Key>k2</Key><Code>AccessDenied</Code></Error></DeleteResult>")
	send("POST", b+"?delete", nil, "<Delete><Object><Key>k4</Key></Object></Delete>", 503, "<Error><Code>SlowDown</Code></Error>")

	got := m.Counts()
	want := Counts{
		Requests:     [nKinds]int64{List: 1, Get: 3, Head: 1, Put: 6, Delete: 2, BatchDelete: 2},
		BytesRead:    15,                        // the object GETs' bodies, not the listing's or an error's
		BytesWritten: int64(len(`{"x":1}`) + 8), // the PUT and the part that succeeded
		FilesRead:    1,                         // a.parquet, read in two ranges
		FilesWritten: 3,                         // the PUT, the completed upload, the copy
		FilesDeleted: 1 + 2,                     // the DELETE; 3 keys less 1 error
	}
	if got != want {
		t.Fatalf("counts\n got %+v\nwant %+v", got, want)
	}
}

// TestNilMeter: without a meter nothing is counted and nothing fails.
func TestNilMeter(t *testing.T) {
	var m *Meter
	req, _ := http.NewRequest("GET", "http://s3.test/b/k", nil)
	c := m.S3(req)
	c.Sent([]byte("x"))
	c.Answered(200)
	c.Received([]byte("x"))
	c.Closed()
	m.Request(Get)
	m.FileRead("k")
	if m.Counts() != (Counts{}) {
		t.Fatal("a nil meter counted")
	}
}

// TestTokensAcrossPieces: a token split between two reads counts once.
func TestTokensAcrossPieces(t *testing.T) {
	tk := tokens{tok: []byte("<Key>")}
	for _, p := range []string{"<Ke", "y>a</Key><", "K", "ey>b<", "Key><Key>"} {
		tk.scan([]byte(p))
	}
	if tk.n != 4 {
		t.Fatalf("%d tokens, want 4", tk.n)
	}
}

// TestLocalCounts: the local IO counts what the same calls would send to
// S3 through iceberg-go's object-store IO: a GET to open, one per ReadAt
// and per Read after a Seek that moved; a PUT per file written, a DELETE
// per file removed, a HEAD per Stat. Without a meter it is LocalFS.
func TestLocalCounts(t *testing.T) {
	if _, ok := Local(context.Background()).(iceio.LocalFS); !ok {
		t.Fatal("without a meter Local is not iceberg-go's LocalFS")
	}
	m := New()
	fsys := Local(With(context.Background(), m))
	p := filepath.Join(t.TempDir(), "f.parquet")
	w, err := fsys.(iceio.WriteFileIO).Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := fsys.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	_, _ = f.ReadAt(buf, 6)        // a ranged GET: 4 bytes
	_, _ = f.Read(buf)             // the open's own GET: 4 bytes
	_, _ = f.Seek(4, io.SeekStart) // unmoved: no new GET
	_, _ = f.Read(buf[:2])         // 2 bytes
	_, _ = f.Seek(0, io.SeekStart) // moved
	_, _ = f.Read(buf[:1])         // a new GET: 1 byte
	_ = f.Close()
	if _, err := fsys.(iceio.StatIO).Stat(p); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Remove(p); err != nil {
		t.Fatal(err)
	}
	_ = fsys.Remove(p) // gone: a DELETE, no file deleted
	want := Counts{
		Requests:     [nKinds]int64{Get: 3, Head: 1, Put: 1, Delete: 2},
		BytesRead:    11,
		BytesWritten: 10,
		FilesRead:    1,
		FilesWritten: 1,
		FilesDeleted: 1,
	}
	if got := m.Counts(); got != want {
		t.Fatalf("counts\n got %+v\nwant %+v", got, want)
	}
}
