// Package ociimage builds icewright's container image without a Docker
// daemon: an OCI image index with one image per platform, each the release
// binary on an empty base with CA certificates, a non-root user and no shell,
// written as an OCI layout (what `crane push`, `skopeo copy oci:` or
// `oras cp --from-oci-layout` push) and as that layout in one tar file
// (`docker load`, `podman load`, `skopeo copy oci-archive:`).
//
// The image is reproducible: every time in it is the commit's time (from the
// binary's build info), every file entry has fixed owners and modes, entries
// are sorted, and the CA certificates come from a Go module pinned in go.mod
// (golang.org/x/crypto/x509roots/fallback), not from the machine. The same
// commit gives the same digests. Only scripts/release.sh (through
// ./internal/ociimage/mkimage) and tests use this package: the icewright
// binary does not link it.
package ociimage

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// Paths and identities inside the image. UID and GID 65532 are the
// "nonroot" user of distroless images, which Kubernetes manifests commonly
// expect (examples/kubernetes, deploy/helm/icewright).
const (
	BinaryPath = "/usr/local/bin/icewright"
	CertsPath  = "/etc/ssl/certs/ca-certificates.crt"
	HomeDir    = "/home/nonroot"
	UID        = 65532
	User       = "65532:65532"
)

// Labels keys (OCI image spec annotations, also set as config labels).
const (
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelSource   = "org.opencontainers.image.source"
	LabelCreated  = "org.opencontainers.image.created"
	LabelTitle    = "org.opencontainers.image.title"
	LabelLicenses = "org.opencontainers.image.licenses"
	// RefName names the image in the layout's index.json: `docker load`
	// and `skopeo copy oci:DIR:REF` find it by this.
	RefName = "org.opencontainers.image.ref.name"
)

// Platform is one image of the index: its OS and architecture and the
// release binary built for them.
type Platform struct {
	OS, Arch string
	Binary   string // path of the binary on this machine
}

// Options describe the image.
type Options struct {
	Version   string // the release number, e.g. 0.1.0
	Ref       string // e.g. ghcr.io/icewright/icewright:0.1.0
	Platforms []Platform
	// Meta, when set, is used instead of the binaries' build info (tests,
	// whose binaries may come from a work tree with changes).
	Meta *Meta
}

// Meta is what the binaries' build info says about the commit they were
// built from; every binary of an image must agree.
type Meta struct {
	Revision string
	Time     time.Time
	Source   string // https://<module path>
}

// ReadMeta reads the commit and its time from a Go binary's build info
// (any OS and architecture). A binary without a commit, or built from a
// tree with uncommitted changes, is refused: the image could not say what
// it holds.
func ReadMeta(binary string) (Meta, error) {
	bi, err := buildinfo.ReadFile(binary)
	if err != nil {
		return Meta{}, fmt.Errorf("read build info of %s: %w", binary, err)
	}
	var m Meta
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			m.Revision = s.Value
		case "vcs.time":
			if m.Time, err = time.Parse(time.RFC3339, s.Value); err != nil {
				return Meta{}, fmt.Errorf("%s: vcs.time %q: %w", binary, s.Value, err)
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if m.Revision == "" || m.Time.IsZero() {
		return Meta{}, fmt.Errorf("%s has no commit in its build info (build it from a git clone with -buildvcs=true)", binary)
	}
	if modified {
		return Meta{}, fmt.Errorf("%s was built from a tree with uncommitted changes; an image must be one commit", binary)
	}
	m.Source = "https://" + bi.Main.Path
	return m, nil
}

// Build returns the image index: one image per platform, in the order
// given. Each image is two layers: the base (certificates, passwd, group,
// the home and /tmp directories; the same bytes for every platform, so a
// registry stores it once) and the binary.
func Build(o Options) (v1.ImageIndex, Meta, error) {
	if o.Version == "" || len(o.Platforms) == 0 {
		return nil, Meta{}, fmt.Errorf("ociimage: a version and at least one platform are needed")
	}
	var meta Meta
	for i, p := range o.Platforms {
		if o.Meta != nil {
			meta = *o.Meta
			break
		}
		m, err := ReadMeta(p.Binary)
		if err != nil {
			return nil, Meta{}, err
		}
		if i > 0 && m != meta {
			return nil, Meta{}, fmt.Errorf("%s is of commit %s, %s of %s: one image is one commit", p.Binary, m.Revision, o.Platforms[0].Binary, meta.Revision)
		}
		meta = m
	}
	created := meta.Time.UTC()
	labels := map[string]string{
		LabelVersion:  o.Version,
		LabelRevision: meta.Revision,
		LabelSource:   meta.Source,
		LabelCreated:  created.Format(time.RFC3339),
		LabelTitle:    "icewright",
		LabelLicenses: "Apache-2.0",
	}
	base, err := baseLayer(created)
	if err != nil {
		return nil, Meta{}, err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range o.Platforms {
		img, err := platformImage(p, base, created, labels)
		if err != nil {
			return nil, Meta{}, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add: img,
			Descriptor: v1.Descriptor{
				Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch},
			},
		})
	}
	return mutate.Annotations(idx, labels).(v1.ImageIndex), meta, nil
}

func platformImage(p Platform, base v1.Layer, created time.Time, labels map[string]string) (v1.Image, error) {
	bin, err := os.ReadFile(p.Binary)
	if err != nil {
		return nil, err
	}
	binLayer, err := layer(created, []entry{
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/local/", mode: 0o755, dir: true},
		{name: "usr/local/bin/", mode: 0o755, dir: true},
		{name: strings.TrimPrefix(BinaryPath, "/"), mode: 0o755, data: bin},
	})
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "icewright ociimage: CA certificates, nonroot user, /tmp", Comment: "base"}},
		mutate.Addendum{Layer: binLayer, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "icewright ociimage: " + BinaryPath, Comment: "binary"}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = p.OS, p.Arch
	cf.Created = v1.Time{Time: created}
	cf.Config = v1.Config{
		Entrypoint: []string{BinaryPath},
		User:       User,
		WorkingDir: HomeDir,
		Env: []string{
			"PATH=/usr/local/bin",
			"HOME=" + HomeDir,
			"SSL_CERT_FILE=" + CertsPath,
			"TMPDIR=/tmp",
		},
		Labels: labels,
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, labels).(v1.Image), nil
}

// baseLayer: what the binary needs of an operating system, and no shell.
func baseLayer(created time.Time) (v1.Layer, error) {
	certs, err := CertificatesPEM()
	if err != nil {
		return nil, err
	}
	return layer(created, []entry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: strings.TrimPrefix(CertsPath, "/"), mode: 0o644, data: certs},
		{name: "home/", mode: 0o755, dir: true},
		{name: strings.TrimPrefix(HomeDir, "/") + "/", mode: 0o700, dir: true, owner: UID},
		{name: "tmp/", mode: 0o1777, dir: true},
	})
}

// CertificatesPEM is the CA bundle of the image: the Mozilla roots that
// golang.org/x/crypto/x509roots/fallback carries (its version is pinned in
// go.mod), in its order. Roots with a constraint that X.509 cannot express
// (a distrust-after date) are left out: a PEM file would trust them without
// it.
func CertificatesPEM() ([]byte, error) {
	var b bytes.Buffer
	n := 0
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		if err := pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate}); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("ociimage: the CA bundle is empty")
	}
	return b.Bytes(), nil
}

type entry struct {
	name  string
	mode  int64
	dir   bool
	owner int
	data  []byte
}

// layer writes entries (sorted by name, every time the commit's) as a
// gzip-compressed OCI layer.
func layer(created time.Time, entries []entry) (v1.Layer, error) {
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name:    e.name,
			Mode:    e.mode,
			ModTime: created,
			Uid:     e.owner,
			Gid:     e.owner,
			Format:  tar.FormatPAX,
		}
		if e.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	raw := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(raw)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	return plainLayer{l}, nil
}

// plainLayer hides the tarball layer's own descriptor, whose empty (not
// nil) annotations made the image's parsed manifest differ from its raw
// one (go-containerregistry's validate.Index catches it); the descriptor
// is then computed from the digest, size and media type alone.
type plainLayer struct{ v1.Layer }

// WriteLayout writes idx as the OCI layout dir (which must not exist or be
// empty), its index.json naming it ref.
func WriteLayout(dir string, idx v1.ImageIndex, ref string) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty; remove it first", dir)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{RefName: ref}))
}

// WriteArchive writes the layout dir as one tar file (an "OCI archive"):
// entries sorted, times set to mtime, owners root, modes 0644 and 0755.
func WriteArchive(path, dir string, mtime time.Time) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		names = append(names, rel)
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(names)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, n := range names {
		h := &tar.Header{Name: n, ModTime: mtime, Format: tar.FormatPAX}
		var data []byte
		if strings.HasSuffix(n, "/") {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		} else {
			if data, err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(n))); err != nil {
				break
			}
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(data))
		}
		if err = tw.WriteHeader(h); err != nil {
			break
		}
		if _, err = tw.Write(data); err != nil {
			break
		}
	}
	if err == nil {
		err = tw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
