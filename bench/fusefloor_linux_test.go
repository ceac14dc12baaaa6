package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/fsnode/posixtest"
)

// snapshot maps every name under root to its kind, permission bits and
// content (a symlink's target).
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fmt.Sprintf("%v", fi.Mode())
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			v += " -> " + target
		}
		m[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFuseFloor checks that the FUSE floor is a file system the bench's
// commands can use: tar -x into an empty floor, and a floor started
// from a tarball, both show the tarball's tree (directories, modes,
// contents, symlinks, hard links, an empty file), and the name that
// primes no_open is in no listing.
func TestFuseFloor(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Self: self}
	src := t.TempDir()
	write := func(name, data string, perm fs.FileMode) {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil {
			t.Fatal(err)
		}
	}
	write(".hg/store/data/a.i", "index bytes", 0o644)
	write(".hg/store/data/sub/b.d", string(make([]byte, 300<<10)), 0o644)
	write(".hg/requires", "store\n", 0o644)
	write("run.sh", "#!/bin/sh\n", 0o755)
	write("empty", "", 0o600)
	if err := os.Symlink("run.sh", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(src, ".hg/requires"), filepath.Join(src, ".hg/requires.bak")); err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(t.TempDir(), "tree.tar")
	if out, err := exec.Command("tar", "-cf", tarball, "-C", src, ".").CombinedOutput(); err != nil {
		t.Fatalf("tar -c: %v\n%s", err, out)
	}
	want := snapshot(t, src)

	mp := filepath.Join(t.TempDir(), "floor")
	empty, err := startFuseFloor(env, mp, "")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-xf", tarball, "-C", mp).CombinedOutput(); err != nil {
		empty.stop()
		t.Fatalf("tar -x into the floor: %v\n%s", err, out)
	}
	posixtest.SameTree(t, "tar -x into an empty floor", want, snapshot(t, mp))
	if err := empty.stop(); err != nil {
		t.Fatal(err)
	}

	// A skipped file's hard link stays, as a file of its own (hg's
	// undo.dirstate links to the dirstate, which a case skips).
	loaded, err := startFuseFloor(env, mp, tarball, "empty", ".hg/requires")
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.stop()
	delete(want, "empty")
	delete(want, ".hg/requires")
	posixtest.SameTree(t, "a floor holding the tarball", want, snapshot(t, mp))
}
