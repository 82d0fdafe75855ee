// Command mkimage writes icewright's OCI image from release binaries
// (scripts/release.sh runs it; see package ociimage):
//
//	go run ./internal/ociimage/mkimage -version 0.1.0 -out dist \
//	    linux/amd64=dist/icewright-linux-amd64 linux/arm64=dist/icewright-linux-arm64
//
// It writes OUT/icewright-image (an OCI layout), OUT/icewright-image.tar (the
// layout in one tar file) and prints the index's digest, which it also writes
// to OUT/icewright-image.digest.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/icewright/icewright/internal/ociimage"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func run() error {
	version := flag.String("version", "", "the release number (cmd/icewright's version)")
	repo := flag.String("repo", "ghcr.io/icewright/icewright", "the image's repository, for its name in the layout")
	out := flag.String("out", "dist", "the directory to write into")
	flag.Parse()
	if *version == "" || flag.NArg() == 0 {
		return fmt.Errorf("usage: mkimage -version V [-repo R] [-out DIR] OS/ARCH=BINARY...")
	}
	o := ociimage.Options{Version: *version, Ref: *repo + ":" + *version}
	for _, a := range flag.Args() {
		plat, bin, ok := strings.Cut(a, "=")
		goos, arch, ok2 := strings.Cut(plat, "/")
		if !ok || !ok2 || bin == "" {
			return fmt.Errorf("argument %q: want OS/ARCH=BINARY", a)
		}
		o.Platforms = append(o.Platforms, ociimage.Platform{OS: goos, Arch: arch, Binary: bin})
	}
	idx, meta, err := ociimage.Build(o)
	if err != nil {
		return err
	}
	dir := filepath.Join(*out, "icewright-image")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := ociimage.WriteLayout(dir, idx, o.Ref); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	if err := ociimage.WriteArchive(dir+".tar", dir, meta.Time); err != nil {
		return fmt.Errorf("write %s.tar: %w", dir, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	if err := os.WriteFile(dir+".digest", []byte(d.String()+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Printf("%s\t%s@%s (commit %s)\n", dir, o.Ref, d, meta.Revision[:min(12, len(meta.Revision))])
	return nil
}
