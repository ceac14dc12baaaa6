package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/testenv"
)

// flagRepo makes a three-changeset repository whose file f grows a line
// per changeset. Its texts are short, so hg stores every chunk as is
// ('u'), where a test can rewrite bytes in place.
func flagRepo(t *testing.T, dir string) string {
	t.Helper()
	repo := filepath.Join(dir, "src")
	testenv.Hg(t, dir, "init", "src")
	text := ""
	for i, line := range []string{"a", "b", "c"} {
		text += line + "\n"
		if err := os.WriteFile(filepath.Join(repo, "f"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.Hg(t, repo, "commit", "-qAm", string(rune('0'+i)), "-d", "0 0")
	}
	return repo
}

// forgeRevision sets the flags of revision rev of the inline revlog at
// path and, when old is not empty, replaces the last occurrence of old
// in its stored chunk by new (of the same length), leaving the node as
// it was.
func forgeRevision(t *testing.T, path string, rev int, flags uint16, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !revlog.IndexInline(b) {
		t.Fatalf("%s is not inline", path)
	}
	pos := 0
	for range rev {
		pos += revlog.EntrySize + int(binary.BigEndian.Uint32(b[pos+8:]))
	}
	binary.BigEndian.PutUint16(b[pos+6:], flags)
	if old != "" {
		chunk := b[pos+revlog.EntrySize : pos+revlog.EntrySize+int(binary.BigEndian.Uint32(b[pos+8:]))]
		i := bytes.LastIndex(chunk, []byte(old))
		if len(chunk) == 0 || chunk[0] != 'u' || i < 0 || len(old) != len(new) {
			t.Fatalf("%s rev %d: cannot replace %q by %q in chunk %q", path, rev, old, new, chunk)
		}
		copy(chunk[i:], new)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sameAsHg runs args with hg and hgfs in dir and fails unless stdout,
// stderr and the exit status agree. What hgfs prints differently from
// one version, as the other prints it, is taken out first: hg 7's
// dirstate note in verify (hgfs verify does not check the dirstate) and
// hg 7's hint for the extstored flag, which hg 6.3 does not give.
func sameAsHg(t *testing.T, hg testenv.Mercurial, dir string, args ...string) {
	t.Helper()
	o, e, err := hg.Result(t, dir, args...)
	hc := 0
	if err != nil {
		var ok bool
		if hc, ok = exitCode(err); !ok {
			t.Fatalf("%s %s: %v", hg.Name, strings.Join(args, " "), err)
		}
	}
	ho, he := string(o), string(e)
	fo, fe, fc := hgfsIn(dir, args...)
	he = strings.Replace(he, "not checking dirstate because of previous errors\n", "", 1)
	if hg.Major() < 7 {
		fe = strings.Replace(fe, "(the lfs extension must be enabled)\n", "", 1)
	}
	name := strings.Join(args, " ")
	if d := testenv.Diff(hg.Name+" "+name, ho, "hgfs "+name, fo); d != "" {
		t.Errorf("stdout differs:\n%s", d)
	}
	if d := testenv.Diff(hg.Name+" "+name+" (stderr)", he, "hgfs "+name+" (stderr)", fe); d != "" {
		t.Errorf("stderr differs:\n%s", d)
	}
	if hc != fc {
		t.Errorf("%s: exit status: %s %d, hgfs %d", name, hg.Name, hc, fc)
	}
}

// TestForgedFlagsOnDisk gives revisions the extstored (0x2000) or
// ellipsis (0x4000) flag, with their text tampered or not, in a filelog,
// the manifest log and the changelog. Neither hg has a processor for
// these flags without the lfs or narrow extension, so neither reads such
// a revision, and hg verify reports each one; hgfs used to skip their
// hash check, print the forged text and call the repository clean. Every
// command must print what each hg prints.
func TestForgedFlagsOnDisk(t *testing.T) {
	t.Parallel()
	hgs := testenv.Mercurials(t)
	src := flagRepo(t, t.TempDir())
	cases := []struct {
		name     string
		file     string // relative to .hg/store
		rev      int
		flags    uint16
		old, new string
		revlog   []string // debugdata's arguments naming the revlog
	}{
		{"filelog-extstored-tampered", "data/f.i", 1, revlog.FlagExtStored, "b", "X", []string{"f"}},
		{"filelog-ellipsis-tampered", "data/f.i", 1, revlog.FlagEllipsis, "b", "X", []string{"f"}},
		{"filelog-both-flags", "data/f.i", 1, revlog.FlagExtStored | revlog.FlagEllipsis, "b", "X", []string{"f"}},
		{"filelog-extstored", "data/f.i", 1, revlog.FlagExtStored, "", "", []string{"f"}},
		{"manifest-ellipsis", "00manifest.i", 1, revlog.FlagEllipsis, "", "", []string{"-m"}},
		{"changelog-extstored-tampered", "00changelog.i", 1, revlog.FlagExtStored, "1", "Z", []string{"-c"}},
	}
	for _, c := range cases {
		// The forged revision and the next one, whose delta chain may
		// pass through it, read and printed by each command hg has.
		commands := [][]string{
			{"verify"}, {"log"}, {"log", "-r", "1"}, {"log", "--debug", "-r", "2"},
			{"manifest", "-r", "1"}, {"cat", "-r", "1", "f"}, {"cat", "-r", "2", "f"},
			append(append([]string{"debugdata"}, c.revlog...), "1"),
			append(append([]string{"debugdata"}, c.revlog...), "2"),
		}
		t.Run(c.name, func(t *testing.T) {
			dir := testenv.CopyRepo(t, src)
			forgeRevision(t, filepath.Join(dir, ".hg", "store", filepath.FromSlash(c.file)), c.rev, c.flags, c.old, c.new)
			// hg keeps manifest texts in this cache and would answer
			// from it instead of reading the forged manifest revision.
			os.Remove(filepath.Join(dir, ".hg", "wcache", "manifestfulltextcache"))
			for _, hg := range hgs {
				t.Run(hg.Name, func(t *testing.T) {
					for _, args := range commands {
						sameAsHg(t, hg, dir, args...)
					}
				})
			}
			if _, e, code := hgfsIn(dir, "verify"); code != 1 || !strings.Contains(e, "integrity errors encountered!") {
				t.Errorf("hgfs verify: exit %d\n%s", code, e)
			}
		})
	}
}

// forgeBundleDelta sets the flags of node's delta in an uncompressed cg3
// bundle (whose delta header follows node with p1) and, when old is not
// empty, replaces the last occurrence of old in the delta by new (of the
// same length).
func forgeBundleDelta(t *testing.T, bundle []byte, node, p1 revlog.Node, flags uint16, old, new string) []byte {
	t.Helper()
	b := bytes.Clone(bundle)
	i := bytes.Index(b, append(node[:], p1[:]...))
	if i < 4 || bytes.Count(b, append(node[:], p1[:]...)) != 1 {
		t.Fatalf("no single delta header for %s in the bundle", node.Short())
	}
	// cg3 header: node, p1, p2, base, link node, then the 2-byte flags;
	// the chunk's 4-byte length (which counts itself) precedes it.
	end := i - 4 + int(binary.BigEndian.Uint32(b[i-4:]))
	const header = 5*20 + 2
	if end < i+header || end > len(b) {
		t.Fatalf("bad chunk length before %s", node.Short())
	}
	binary.BigEndian.PutUint16(b[i+5*20:], flags)
	if old != "" {
		delta := b[i+header : end]
		j := bytes.LastIndex(delta, []byte(old))
		if j < 0 || len(old) != len(new) {
			t.Fatalf("cannot replace %q by %q in delta %q", old, new, delta)
		}
		copy(delta[j:], new)
	}
	return b
}

// TestUnbundleForgedFlags applies cg3 bundles (hg's own, one byte
// patched) whose file delta carries the extstored or ellipsis flag, with
// a text that does not hash to its node or one that does. hg refuses
// every one (it has no processor for the flag); hgfs used to add them
// unchecked, forging the file's history under its real node. hgfs must
// print what each hg prints and leave the repository as it was.
func TestUnbundleForgedFlags(t *testing.T) {
	t.Parallel()
	hgs := testenv.Mercurials(t)
	dir := t.TempDir()
	src := flagRepo(t, dir)
	bundlePath := filepath.Join(dir, "all.hg")
	testenv.Hg(t, src, "--config", "experimental.changegroup3=true", "bundle", "-q",
		"-t", "none-v2;cg.version=03", "--base", "0", "-r", "2", bundlePath)
	bundle, err := os.ReadFile(bundlePath)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := revlog.Open(os.DirFS(filepath.Join(src, ".hg", "store")), "data/f.i")
	if err != nil {
		t.Fatal(err)
	}
	node, p1 := fl.Node(1), fl.Node(0)
	fl.Close()
	base := filepath.Join(dir, "base")
	testenv.Hg(t, dir, "clone", "-q", "-U", "-r", "0", src, base)

	cases := []struct {
		name     string
		flags    uint16
		old, new string
	}{
		{"extstored-tampered", revlog.FlagExtStored, "b", "X"},
		{"ellipsis-tampered", revlog.FlagEllipsis, "b", "X"},
		{"extstored", revlog.FlagExtStored, "", ""},
		{"ellipsis", revlog.FlagEllipsis, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forged := filepath.Join(t.TempDir(), "forged.hg")
			if err := os.WriteFile(forged, forgeBundleDelta(t, bundle, node, p1, c.flags, c.old, c.new), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, hg := range hgs {
				t.Run(hg.Name, func(t *testing.T) {
					hgDir, hgfsDir := testenv.CopyRepo(t, base), testenv.CopyRepo(t, base)
					before := storeFiles(t, hgfsDir, allFiles)
					o, e, err := hg.Result(t, hgDir, "unbundle", forged)
					hc, _ := exitCode(err)
					fo, fe, fc := hgfsIn(hgfsDir, "unbundle", forged)
					// hg 7's hint for the extstored flag is not compared:
					// unbundle's abort keeps the message only.
					he := strings.Replace(string(e), "(the lfs extension must be enabled)\n", "", 1)
					fe = strings.Replace(fe, "(the lfs extension must be enabled)\n", "", 1)
					if d := testenv.Diff(hg.Name, string(o), "hgfs", fo); d != "" {
						t.Errorf("stdout differs:\n%s", d)
					}
					if d := testenv.Diff(hg.Name+" (stderr)", he, "hgfs (stderr)", fe); d != "" {
						t.Errorf("stderr differs:\n%s", d)
					}
					if hc != 255 || fc != 255 {
						t.Errorf("exit status: %s %d, hgfs %d (want 255)", hg.Name, hc, fc)
					}
					after := storeFiles(t, hgfsDir, allFiles)
					for name, b := range before {
						if after[name] != b {
							t.Errorf("%s changed", name)
						}
					}
					for name := range after {
						if _, ok := before[name]; !ok {
							t.Errorf("%s left behind", name)
						}
					}
				})
			}
		})
	}
}
