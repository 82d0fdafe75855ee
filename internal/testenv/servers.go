package testenv

import (
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
)

// Server is a server process private to one test, which the test may stop
// and start again (fault injection). The shared servers of
// scripts/services.sh must never be stopped by a test: other packages' tests
// run against them at the same time.
type Server struct {
	t     testing.TB
	name  string
	bin   string
	args  []string
	env   []string
	log   string
	ready func(context.Context) error

	root string

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	paused bool
}

// Start starts the process and waits until it is ready.
func (s *Server) Start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatalf("%s log: %v", s.name, err)
	}
	cmd := exec.Command(s.bin, s.args...)
	cmd.Env = append(os.Environ(), s.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so Stop reaches every child.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		s.t.Fatalf("start %s: %v", s.name, err)
	}
	done := make(chan struct{})
	var werr error
	go func() {
		werr = cmd.Wait()
		logf.Close()
		close(done)
	}()
	s.cmd, s.done = cmd, done
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		err := s.ready(ctx)
		if err == nil {
			return
		}
		select {
		case <-done:
			s.cmd = nil
			s.t.Fatalf("%s exited while starting (%v); log %s:\n%s", s.name, werr, s.log, tail(s.log))
		case <-ctx.Done():
			s.t.Fatalf("%s not ready after 2m: %v; log %s:\n%s", s.name, err, s.log, tail(s.log))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Stop kills the process group at once, as a crash or a lost host would,
// and waits for the process to exit.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.t.Errorf("%s (pid %d) did not exit after SIGKILL", s.name, s.cmd.Process.Pid)
	}
	s.cmd, s.paused = nil, false
}

// Pause stops the process group with SIGSTOP, as a hung server or host:
// the kernel still accepts connections on its port, and nothing answers.
// Resume (SIGCONT) undoes it; a paused server is resumed when t ends,
// before it is stopped.
func (s *Server) Pause() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	// Errorf, not Fatalf: a fault proxy's hook calls it from its own
	// goroutine.
	if s.cmd == nil {
		s.t.Errorf("%s: pause of a server that is not running", s.name)
		return
	}
	if err := syscall.Kill(-s.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		s.t.Errorf("pause %s: %v", s.name, err)
		return
	}
	if !s.paused {
		s.paused = true
		s.t.Cleanup(s.Resume)
	}
}

// Resume continues a paused server (SIGCONT); it does nothing otherwise.
func (s *Server) Resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || !s.paused {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGCONT)
	s.paused = false
}

// Root is the directory a posix-backed server (versitygw) keeps its
// buckets in, one directory each, or "".
func (s *Server) Root() string { return s.root }

// Log returns the server's log file.
func (s *Server) Log() string { return s.log }

func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// freePorts reserves n distinct free TCP ports on 127.0.0.1, each with
// port+10000 free too (weed derives its gRPC ports that way). They are picked
// below the kernel's ephemeral range (32768 and up on Linux): a port there is
// never handed to another process's "any free port" listener or outgoing
// connection, so while a test has its server stopped nobody else takes the
// port, and the server can start on it again.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	const lo, hi = 10000, 22700 // p and p+10000 both below 32768
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries > 5000 {
			t.Fatalf("could not reserve %d port pairs on 127.0.0.1", n)
		}
		p := lo + mathrand.IntN(hi-lo)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		l2, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+10000))
		if err != nil {
			l.Close()
			continue
		}
		ls = append(ls, l, l2)
		if !reservePort(t, p) {
			continue
		}
		ports = append(ports, p)
	}
	return ports
}

// reservePort claims p (and p+10000) for t across every test process of
// the run, until t ends: a file named after the port, created exclusively
// in a directory all of them share, holding the claimant's pid. A free
// port alone is not enough: while a test has its server stopped, its port
// is free, and a test of another package (go test runs packages in
// parallel processes) could start its own server there, which the first
// test's clients then reach instead of a refused connection (seen in CI:
// "file does not exist" from another versitygw with the same bucket and
// keys). A claim whose process is gone is stale and taken over.
func reservePort(t testing.TB, p int) bool {
	t.Helper()
	dir := filepath.Join(os.TempDir(), "icewright-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatalf("port reservations: %v", err)
	}
	var claimed []string
	release := func() {
		for _, f := range claimed {
			os.Remove(f)
		}
	}
	for _, port := range []int{p, p + 10000} {
		f := filepath.Join(dir, strconv.Itoa(port))
		if !claimFile(f) {
			release()
			return false
		}
		claimed = append(claimed, f)
	}
	t.Cleanup(release)
	return true
}

// claimFile creates f with this process's pid, or takes it over when the
// pid it holds is no longer a running process. The pid is written to a
// file of this process's own first and linked to f, so f never exists
// without its pid (link fails when f exists, as O_EXCL would).
func claimFile(f string) bool {
	tmp := fmt.Sprintf("%s.%d.tmp", f, os.Getpid())
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return false
	}
	defer os.Remove(tmp)
	for range 2 {
		err := os.Link(tmp, f)
		if err == nil {
			return true
		}
		if !os.IsExist(err) {
			return false
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return false
		}
		holder, err := strconv.Atoi(string(b))
		if err == nil && holder > 0 && running(holder) {
			return false // held by a live process (ours included)
		}
		// Stale: take it over. Another process may race to do the same;
		// the link decides.
		os.Remove(f)
	}
	return false
}

// running reports whether pid is a process (signal 0 reaches it, or it
// exists and is another user's).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func binary(t testing.TB, env, what string) string {
	t.Helper()
	bin := os.Getenv(env)
	if bin == "" {
		missing(t, "needs "+what+" ("+env+" is not set): run scripts/tools.sh, then "+startHint)
		return ""
	}
	if _, err := os.Stat(bin); err != nil {
		missing(t, fmt.Sprintf("needs %s: %s=%s: %v", what, env, bin, err))
		return ""
	}
	return bin
}

func portOpen(ctx context.Context, addr string) error {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// StartS3 starts a versitygw S3 server private to t on a free port, with a
// bucket, and returns its environment and the server (for Stop/Start).
// Stopped when t ends.
func StartS3(t testing.TB) (S3Env, *Server) {
	t.Helper()
	bin := binary(t, "ICEWRIGHT_TEST_VERSITYGW_BIN", "versitygw")
	dir := t.TempDir()
	env := S3Env{
		Endpoint: "", AccessKey: "privatekey", SecretKey: "privatesecret",
		Region: "us-east-1", Bucket: "private", Prefix: UniqueName(t, ""),
		OtherBucket: "other",
	}
	root := filepath.Join(dir, "root")
	for _, b := range []string{env.Bucket, env.OtherBucket} {
		if err := os.MkdirAll(filepath.Join(root, b), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	port := freePorts(t, 1)[0]
	addr := "127.0.0.1:" + strconv.Itoa(port)
	env.Endpoint = "http://" + addr
	s := &Server{
		t: t, name: "versitygw", bin: bin,
		args: []string{"--port", addr, "posix", root},
		env:  []string{"ROOT_ACCESS_KEY=" + env.AccessKey, "ROOT_SECRET_KEY=" + env.SecretKey},
		log:  filepath.Join(dir, "versitygw.log"),
		root: root,
		ready: func(ctx context.Context) error {
			return portOpen(ctx, addr)
		},
	}
	s.Start()
	t.Cleanup(s.Stop)
	return env, s
}

// StartREST starts a SeaweedFS `weed mini` (Iceberg REST catalog and S3)
// private to t on free ports, with a table bucket, and returns its
// environment and the server (for Stop/Start). Stopped when t ends.
func StartREST(t testing.TB) (RESTEnv, *Server) {
	t.Helper()
	bin := binary(t, "ICEWRIGHT_TEST_WEED_BIN", "SeaweedFS weed")
	dir := t.TempDir()
	p := freePorts(t, 6)
	master, volume, filer, s3, iceberg, admin := p[0], p[1], p[2], p[3], p[4], p[5]
	env := RESTEnv{
		URI:       fmt.Sprintf("http://127.0.0.1:%d", iceberg),
		Warehouse: "s3://private",
		S3: S3Env{
			Endpoint: fmt.Sprintf("http://127.0.0.1:%d", s3), AccessKey: "privatekey", SecretKey: "privatesecret",
			Region: "us-east-1", Bucket: "private", Prefix: UniqueName(t, ""),
		},
	}
	args := []string{"mini", "-dir=" + filepath.Join(dir, "data"), "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-webdav=false", "-admin.port.legacy=0", "-master.telemetry=false", "-s3.port.lance=0",
		"-master.port=" + strconv.Itoa(master), "-volume.port=" + strconv.Itoa(volume),
		"-filer.port=" + strconv.Itoa(filer), "-s3.port=" + strconv.Itoa(s3),
		"-s3.port.iceberg=" + strconv.Itoa(iceberg), "-admin.port=" + strconv.Itoa(admin),
		"-filer.localSocket=" + filepath.Join(dir, "filer.sock"), "-s3.localSocket=" + filepath.Join(dir, "s3.sock"),
		"-tableBucket=" + env.S3.Bucket,
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Server{
		t: t, name: "weed mini", bin: bin, args: args,
		env: []string{"AWS_ACCESS_KEY_ID=" + env.S3.AccessKey, "AWS_SECRET_ACCESS_KEY=" + env.S3.SecretKey},
		log: filepath.Join(dir, "weed.log"),
		ready: func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.URI+"/v1/config", nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("GET /v1/config: %s", resp.Status)
			}
			if err := portOpen(ctx, fmt.Sprintf("127.0.0.1:%d", s3)); err != nil {
				return err
			}
			// weed creates the table bucket after its servers are up; the
			// catalog is ready once the bucket answers a listing.
			cat, err := rest.NewCatalog(ctx, "ready", env.URI,
				rest.WithCredential(env.Credential()), rest.WithWarehouseLocation(env.Warehouse))
			if err != nil {
				return err
			}
			_, err = cat.ListNamespaces(ctx, nil)
			return err
		},
	}
	s.Start()
	t.Cleanup(s.Stop)
	return env, s
}
