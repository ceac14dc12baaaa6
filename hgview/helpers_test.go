package hgview

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

var (
	repoOnce sync.Once
	repoDir  string
	repoErr  string
	tmpRoot  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if tmpRoot != "" {
		os.RemoveAll(tmpRoot)
	}
	testenv.RemoveGenerated()
	os.Exit(code)
}

// testRepo returns a repository shared by the package's tests: several
// changesets, a tag, a bookmark, a named branch, an exec file, a symlink,
// a rename, a binary file and one whose content starts like a metadata
// header. Tests must not change it.
func testRepo(t *testing.T) string {
	t.Helper()
	testenv.HgPath(t)
	repoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hgview-")
		if err != nil {
			repoErr = err.Error()
			return
		}
		tmpRoot = dir
		repoDir = filepath.Join(dir, "repo")
		MakeTestRepo(t, repoDir)
	})
	if repoErr != "" || repoDir == "" {
		t.Fatalf("test repository: %s", repoErr)
	}
	return repoDir
}

// MakeTestRepo builds the test repository in dir (mount/views_linux_test.go
// builds the same one).
func MakeTestRepo(t *testing.T, dir string) {
	t.Helper()
	write := func(name, data string, mode os.FileMode) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	hg := func(args ...string) { testenv.Hg(t, dir, args...) }
	testenv.Hg(t, "", "init", dir)
	write("a.txt", "alpha\n", 0o644)
	write("bin.dat", "\x00\x01\x02binary\x00\xff\n\x00", 0o644)
	write("dir/sub/c.txt", "charlie\n", 0o644)
	write("dir-x.txt", "sorts between dir and dir/\n", 0o644)
	write("exec.sh", "#!/bin/sh\necho hi\n", 0o755)
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	hg("commit", "-A", "-q", "-d", "1700000000 0", "-m", "initial")
	write("a.txt", "alpha\nbeta\n", 0o644)
	hg("mv", "dir/sub/c.txt", "dir/moved.txt")
	hg("commit", "-q", "-d", "1700000100 -3600", "-m", "rename and edit\n\nlonger text")
	hg("tag", "-d", "1700000200 0", "-r", "1", "v1.0")
	hg("branch", "-q", "stable")
	write("a.txt", "alpha\nstable\n", 0o644)
	write("exec.sh", "#!/bin/sh\necho stable\n", 0o644)
	hg("commit", "-q", "-d", "1700000300 0", "-m", "on stable")
	hg("update", "-q", "default")
	write("bin.dat", "\x00\x00more binary\xfe", 0o644)
	write("meta.txt", "\x01\nlooks like a header\x01\nbut is content\n", 0o644)
	hg("commit", "-A", "-q", "-d", "1700000400 0", "-m", "binary and meta")
	hg("bookmark", "-r", "4", "book")
	hg("rm", "-q", "link")
	hg("commit", "-q", "-d", "1700000500 0", "-m", "remove link")
}
