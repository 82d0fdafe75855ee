package ociimage

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/icewright/icewright/internal/testenv"
)

// TestImage builds the image around a real icewright binary, checks it
// against the OCI spec (go-containerregistry's validate), checks that a
// second build and a second archive are byte for byte the same, unpacks the
// image of this machine's platform as a container runtime would (its layers
// flattened) and runs the binary in it: `version`, then `demo` and
// `validate` of the demo's configuration.
func TestImage(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the image is linux; its binary runs only there")
	}
	tmp := t.TempDir()
	bin, err := testenv.BuildIcewright(tmp)
	if err != nil {
		t.Fatal(err)
	}
	meta := &Meta{Revision: "0123456789abcdef0123456789abcdef01234567", Time: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), Source: "https://github.com/icewright/icewright"}
	// Both platforms carry this machine's binary: what is checked here is
	// the builder (scripts/release.sh gives each its own).
	o := Options{Version: "9.9.9", Ref: "example.test/icewright:9.9.9", Meta: meta, Platforms: []Platform{
		{OS: "linux", Arch: "amd64", Binary: bin},
		{OS: "linux", Arch: "arm64", Binary: bin},
	}}
	idx, _, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(idx); err != nil {
		t.Fatalf("validate: %v", err)
	}
	again, _, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := idx.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Fatalf("two builds of one input: %s and %s", d1, d2)
	}
	o2 := o
	o2.Meta = &Meta{Revision: meta.Revision, Time: meta.Time.Add(time.Second), Source: meta.Source}
	if other, _, _ := Build(o2); other != nil {
		if d3, _ := other.Digest(); d3 == d1 {
			t.Fatal("another commit time gave the same digest: the time is not in the image")
		}
	}

	dir := filepath.Join(tmp, "layout")
	if err := WriteLayout(dir, idx, o.Ref); err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(dir, idx, o.Ref); err == nil {
		t.Error("WriteLayout over a written layout did not refuse")
	}
	a1, a2 := filepath.Join(tmp, "1.tar"), filepath.Join(tmp, "2.tar")
	for _, a := range []string{a1, a2} {
		if err := WriteArchive(a, dir, meta.Time); err != nil {
			t.Fatal(err)
		}
	}
	b1, _ := os.ReadFile(a1)
	b2, _ := os.ReadFile(a2)
	if !bytes.Equal(b1, b2) || len(b1) == 0 {
		t.Fatal("two archives of one layout differ")
	}
	if names := tarNames(t, bytes.NewReader(b1)); !slices.Contains(names, "index.json") || !slices.Contains(names, "oci-layout") {
		t.Errorf("archive entries %v: want the layout's index.json and oci-layout", names)
	}

	// Read back as a pusher would: index.json names the index by ref.
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	tm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Manifests) != 1 || tm.Manifests[0].Digest != d1 || tm.Manifests[0].Annotations[RefName] != o.Ref {
		t.Fatalf("index.json %+v: want one index %s named %s", tm.Manifests, d1, o.Ref)
	}
	read, err := top.ImageIndex(d1)
	if err != nil {
		t.Fatal(err)
	}
	im, err := read.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 2 || im.Manifests[0].Platform.Architecture != "amd64" || im.Manifests[1].Platform.Architecture != "arm64" {
		t.Fatalf("index manifests %+v", im.Manifests)
	}
	if im.Annotations[LabelRevision] != meta.Revision || im.Annotations[LabelVersion] != "9.9.9" {
		t.Errorf("index annotations %v", im.Annotations)
	}
	var img v1.Image
	for _, m := range im.Manifests {
		if m.Platform.Architecture == runtime.GOARCH {
			img, err = read.Image(m.Digest)
		}
	}
	if img == nil || err != nil {
		t.Fatalf("no image for linux/%s: %v", runtime.GOARCH, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if c.User != User || !slices.Equal(c.Entrypoint, []string{BinaryPath}) || len(c.Cmd) != 0 {
		t.Errorf("config user %q entrypoint %q cmd %q", c.User, c.Entrypoint, c.Cmd)
	}
	want := map[string]string{LabelVersion: "9.9.9", LabelRevision: meta.Revision, LabelSource: meta.Source, LabelCreated: "2026-12-01T12:00:00Z"}
	for k, v := range want {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	if !cf.Created.Time.Equal(meta.Time) {
		t.Errorf("created %v, want the commit's time %v", cf.Created, meta.Time)
	}
	layers, _ := img.Layers()
	if len(layers) != 2 {
		t.Fatalf("%d layers, want base and binary", len(layers))
	}

	// Unpack the flattened filesystem.
	root := filepath.Join(tmp, "rootfs")
	files, heads := unpack(t, mutate.Extract(img), root, meta.Time)
	for name, want := range map[string]struct {
		mode int64
		uid  int
	}{"tmp": {0o1777, 0}, "usr/local/bin/icewright": {0o755, 0}, "home/nonroot": {0o700, UID}, "etc/ssl/certs/ca-certificates.crt": {0o644, 0}} {
		if h := heads[name]; h == nil || h.Mode&0o7777 != want.mode || h.Uid != want.uid {
			t.Errorf("%s: %+v, want mode %o owner %d", name, h, want.mode, want.uid)
		}
	}
	wantFiles := []string{"etc", "etc/group", "etc/passwd", "etc/ssl", "etc/ssl/certs", "etc/ssl/certs/ca-certificates.crt", "home", "home/nonroot", "tmp", "usr", "usr/local", "usr/local/bin", "usr/local/bin/icewright"}
	slices.Sort(files)
	if !slices.Equal(files, wantFiles) {
		t.Errorf("image files %v, want %v (no shell, nothing else)", files, wantFiles)
	}
	passwd, _ := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if !strings.Contains(string(passwd), "nonroot:x:65532:65532:") || strings.Contains(string(passwd), "/bin/sh") {
		t.Errorf("/etc/passwd: %s", passwd)
	}
	pemData, _ := os.ReadFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
	n := 0
	for rest := pemData; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			t.Fatalf("CA bundle certificate %d: %v", n, err)
		}
		n++
	}
	if n < 100 {
		t.Errorf("the CA bundle holds %d certificates", n)
	}

	ice := filepath.Join(root, "usr/local/bin/icewright")
	out, err := exec.Command(ice, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "icewright version ") {
		t.Fatalf("icewright version: %v\n%s", err, out)
	}
	work := filepath.Join(tmp, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ice, "demo")
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("icewright demo: %v\n%s", err, out)
	}
	cmd = exec.Command(ice, "-chdir=icewright-demo", "validate")
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "valid") {
		t.Fatalf("icewright validate of the demo: %v\n%s", err, out)
	}
}

// TestBuildRefuses: an image needs a version and platforms, and its
// platforms one commit.
func TestBuildRefuses(t *testing.T) {
	if _, _, err := Build(Options{Platforms: []Platform{{OS: "linux", Arch: "amd64", Binary: "x"}}}); err == nil {
		t.Error("no version: no error")
	}
	if _, _, err := Build(Options{Version: "1"}); err == nil {
		t.Error("no platform: no error")
	}
	if _, err := ReadMeta(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("ReadMeta of a missing binary: no error")
	}
}

func tarNames(t *testing.T, r io.Reader) []string {
	t.Helper()
	var names []string
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

// unpack writes the flattened image rc under root and returns the entry
// names and headers, checking that every entry carries the commit's time and an owner
// of root or nonroot.
func unpack(t *testing.T, rc io.ReadCloser, root string, mtime time.Time) ([]string, map[string]*tar.Header) {
	t.Helper()
	defer rc.Close()
	var names []string
	heads := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names, heads
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		heads[h.Name] = h
		if !h.ModTime.Equal(mtime) {
			t.Errorf("%s: time %v, want the commit's %v", h.Name, h.ModTime, mtime)
		}
		if h.Uid != 0 && h.Uid != UID {
			t.Errorf("%s: uid %d", h.Name, h.Uid)
		}
		dst := filepath.Join(root, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, data, os.FileMode(h.Mode)&0o777); err != nil {
				t.Fatal(err)
			}
		default:
			t.Errorf("%s: unexpected entry type %c (links, devices)", h.Name, h.Typeflag)
		}
	}
}
