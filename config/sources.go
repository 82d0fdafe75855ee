package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
)

// SourceDigest is a digest of what Load(dir, opts) reads from files: the
// names and contents of the configuration files and of the -var-file
// files. It changes when one of them is added, removed or edited, and
// only then, so a long-running command that polls it (icewright reconcile
// -watch) reloads on a change and never on a mere touch. The environment
// and -var values are not files and are not in it.
//
// An error means the files could not be read now (a directory being
// replaced, as a Kubernetes ConfigMap volume is, by swapping a symbolic
// link); the caller keeps what it has and asks again later.
func SourceDigest(dir string, varFiles []string) (string, error) {
	h := sha256.New()
	add := func(kind, name, path string) error {
		src, err := ReadRegularFile(path, MaxConfigFileBytes)
		if err != nil {
			return err
		}
		// Lengths first: no two file sets hash the same by shifting
		// bytes between a name and a content.
		fmt.Fprintf(h, "%s %d %q %d\n", kind, len(name), name, len(src))
		h.Write(src)
		return nil
	}
	names, err := configFileNames(dir)
	if err != nil {
		return "", err
	}
	for _, name := range names {
		if err := add("file", name, filepath.Join(dir, name)); err != nil {
			return "", err
		}
	}
	for _, vf := range varFiles {
		if err := add("var-file", vf, varFilePath(dir, vf)); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
