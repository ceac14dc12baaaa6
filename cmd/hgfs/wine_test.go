package main

// The Windows build end to end: hgfs.exe (GOOS=windows CGO_ENABLED=0)
// runs under Wine, through the wrapper scripts/wine.sh makes, and real hg
// on Linux checks every result. make test-windows runs it.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/testenv"
	"github.com/hgfs/hgfs/worktree"
)

// wineHgfs runs hgfs.exe under Wine.
type wineHgfs struct {
	wrapper, exe string
	env          []string
}

func newWineHgfs(t *testing.T) *wineHgfs {
	t.Helper()
	if testenv.Wine() {
		t.Skip("skipping under Wine: this test drives Wine from Linux")
	}
	wrapper := os.Getenv("HGFS_WINE")
	if wrapper == "" {
		t.Skip("skipping: make test-windows runs this (HGFS_WINE names the Wine wrapper scripts/wine.sh makes)")
	}
	exe := os.Getenv("HGFS_WINE_EXE")
	if exe == "" {
		exe = filepath.Join(t.TempDir(), "hgfs.exe")
		cmd := exec.Command("go", "build", "-o", exe, ".")
		cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build hgfs.exe: %v\n%s", err, out)
		}
	}
	// The wrapper binds the working directory, its own temporary
	// directory and these into Wine's file system.
	bind := []string{os.TempDir(), filepath.Dir(testenv.Corpus(t, testenv.CorpusHistory))}
	env := append(testenv.HgEnv(), "HGFS_WINE_BIND="+strings.Join(bind, ":"))
	return &wineHgfs{wrapper: wrapper, exe: exe, env: env}
}

func (w *wineHgfs) command(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(w.wrapper, append([]string{w.exe}, args...)...)
	cmd.Dir = dir
	cmd.Env = w.env
	return cmd
}

func (w *wineHgfs) result(dir string, args ...string) (stdout, stderr string, code int) {
	cmd := w.command(dir, append(append([]string{}, hgConfig...), args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	return o.String(), e.String(), code
}

// run is result for commands that must succeed.
func (w *wineHgfs) run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, errOut, code := w.result(dir, args...)
	if code != 0 {
		t.Fatalf("hgfs.exe %s (in %s): exit %d\n%s%s", strings.Join(args, " "), dir, code, out, errOut)
	}
	return out
}

// TestWineEndToEnd runs hgfs.exe under Wine on the repository whose
// file names exercise every store encoding rule (Windows' reserved
// names aux, con, prn, com1, trailing dots and spaces, names long enough
// for hashed paths, non-ASCII) and on real history: clones from a
// changegroup bundle, a stream bundle and hg serve (stream and pull),
// unbundle, hgfs serve cloned by hg, verify, log and cat. Each
// repository hgfs.exe writes must pass hg verify and hold what hg's own
// clone of the same source holds (stream clones: the same store bytes);
// each output must be hg's.
func TestWineEndToEnd(t *testing.T) {
	w := newWineHgfs(t)
	ors := startOracles(t)
	for _, src := range []struct {
		name, repo, bundle string
		files              []string // hgfs.exe cat compares these
	}{
		{"encodings", testenv.Generate(t, testenv.Encodings), "", testenv.EncodingNames},
		{"history", testenv.CorpusRepo(t, testenv.CorpusHistory), testenv.Corpus(t, testenv.CorpusHistory),
			[]string{"hg", "mercurial/hg.py", "mercurial/revlog.py", "tests/test-merge1.out"}},
	} {
		t.Run(src.name, func(t *testing.T) {
			wineEndToEnd(t, w, ors, src.repo, src.bundle, src.files)
		})
	}
}

func wineEndToEnd(t *testing.T, w *wineHgfs, ors []*oracle, repo, bundle string, files []string) {
	hg := ors[0]
	dir := t.TempDir()
	if bundle == "" {
		bundle = filepath.Join(dir, "all.hg")
		hg.run(t, repo, "bundle", "-q", "-a", "-t", "zstd-v2", bundle)
	}
	packed := filepath.Join(dir, "packed1.hg")
	hg.run(t, repo, "debugcreatestreamclonebundle", packed)
	// The generated repository has a secret changeset: hg serve streams
	// it only when told to.
	url := testenv.Serve(t, repo, "--config", "server.uncompressedallowsecret=true")

	// check compares a repository hgfs.exe wrote with hg's of the same
	// operation.
	check := func(t *testing.T, got, want string, stream bool) {
		t.Helper()
		hg.verify(t, got)
		gs, ws := hg.state(t, got), hg.state(t, want)
		if names(ws) != names(gs) {
			t.Errorf("state has sections %s in hg's repository, %s in hgfs.exe's", names(ws), names(gs))
		}
		for _, s := range ws {
			if g := sectionText(gs, s.name); g != s.text {
				t.Errorf("%s differs:\n%s", s.name, testenv.Diff("hg's repository", s.text, "hgfs.exe's", g))
			}
		}
		if stream {
			sameStoreFiles(t, "hg", want, "hgfs.exe", got, revlogFile)
		}
	}
	// Each clone is made by hgfs.exe and by hg (into want) the same
	// way; hg clones a packed1 bundle with debugapplystreamclonebundle.
	hgClone := func(args ...string) func(want string) {
		return func(want string) { hg.run(t, dir, append(args, want)...) }
	}
	clones := []struct {
		name   string
		args   []string
		oracle func(want string)
		stream bool
	}{
		{"bundle-changegroup", []string{"clone", "-U", bundle}, hgClone("clone", "-U", bundle), false},
		{"bundle-stream", []string{"clone", "-U", packed}, func(want string) {
			hg.run(t, dir, "init", want)
			hg.run(t, want, "debugapplystreamclonebundle", packed)
		}, true},
		{"http-stream", []string{"clone", "-U", "--stream", url}, hgClone("clone", "-U", "--stream", url), true},
		{"http-pull", []string{"clone", "-U", "--pull", url}, hgClone("clone", "-U", "--pull", url), false},
	}
	var cloned string
	for _, c := range clones {
		t.Run(c.name, func(t *testing.T) {
			got, want := filepath.Join(dir, c.name+"-hgfs"), filepath.Join(dir, c.name+"-hg")
			w.run(t, dir, append(c.args, got)...)
			c.oracle(want)
			check(t, got, want, c.stream)
			if cloned == "" {
				cloned = got
			}
		})
	}
	if cloned == "" {
		t.Fatal("no clone to go on with")
	}
	t.Run("unbundle", func(t *testing.T) {
		got, want := filepath.Join(dir, "unbundle-hgfs"), filepath.Join(dir, "unbundle-hg")
		hg.run(t, dir, "init", got)
		hg.run(t, dir, "init", want)
		gotOut := w.run(t, got, "unbundle", bundle)
		wantOut := hg.run(t, want, "unbundle", bundle)
		if gotOut != wantOut {
			t.Errorf("hgfs.exe unbundle printed\n%s\nhg printed\n%s", gotOut, wantOut)
		}
		check(t, got, want, false)
	})
	t.Run("serve", func(t *testing.T) {
		url, _, _, failure := tryServeCmd(t, w.command(dir, "serve", "-R", cloned, "-p", "0"))
		if failure != "" {
			t.Fatal(failure)
		}
		got, want := filepath.Join(dir, "served-hgfs"), filepath.Join(dir, "served-hg")
		hg.run(t, dir, "clone", "-U", url, got)
		hg.run(t, dir, "clone", "-U", testenv.Serve(t, cloned), want)
		check(t, got, want, false)
	})
	t.Run("checkout", func(t *testing.T) {
		got, want := filepath.Join(dir, "checkout-hgfs"), filepath.Join(dir, "checkout-hg")
		out, errOut, code := w.result(dir, "clone", bundle, got)
		// hg on Windows refuses to write a name Windows cannot hold;
		// hgfs.exe refuses the first one before writing anything.
		refusal := ""
		for _, f := range strings.Split(strings.TrimSuffix(hg.run(t, repo, "files", "-r", "tip"), "\n"), "\n") {
			if msg := worktree.WindowsNameProblem(f); msg != "" {
				refusal = "abort: " + msg + ": b" + store.PyRepr(f) + "\n"
				break
			}
		}
		if refusal != "" {
			if code != 255 || !strings.HasSuffix(errOut, refusal) {
				t.Fatalf("hgfs.exe clone: exit %d, stderr\n%s\nwant exit 255 and %q", code, errOut, refusal)
			}
			if ents, err := os.ReadDir(got); err != nil || len(ents) != 1 {
				t.Errorf("the refused checkout wrote %v (%v), want only .hg", ents, err)
			}
			return
		}
		if code != 0 {
			t.Fatalf("hgfs.exe clone: exit %d\n%s%s", code, out, errOut)
		}
		hg.run(t, dir, "clone", "-q", bundle, want)
		// Every file hg checks out, with its content (Windows keeps no
		// exec bit), and nothing else.
		gotFiles, wantFiles := workingFiles(t, got), workingFiles(t, want)
		for name, data := range wantFiles {
			if g, ok := gotFiles[name]; !ok {
				t.Errorf("%s: not checked out", name)
			} else if g != data {
				t.Errorf("%s: %d bytes, hg's %d", name, len(g), len(data))
			}
		}
		for name := range gotFiles {
			if _, ok := wantFiles[name]; !ok {
				t.Errorf("%s: checked out, hg has no such file", name)
			}
		}
	})
	// The commands that read: the same output as hg's, byte for byte.
	for _, c := range []struct {
		name string
		args []string
	}{
		{"verify", []string{"verify"}},
		{"log", []string{"log"}},
		{"log-verbose", []string{"log", "-v", "-l", "40"}},
		{"cat", append([]string{"cat", "-r", "tip"}, files...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			gotOut, gotErr, gotCode := w.result(cloned, c.args...)
			wantOut, wantErr, wantCode := hg.result(t, cloned, c.args...)
			if gotCode != wantCode {
				t.Errorf("hgfs.exe %s: exit %d, hg's %d", c.name, gotCode, wantCode)
			}
			if gotOut != wantOut {
				t.Errorf("stdout differs:\n%s", testenv.Diff("hg", wantOut, "hgfs.exe", gotOut))
			}
			if gotErr != wantErr {
				t.Errorf("stderr differs:\n%s", testenv.Diff("hg", wantErr, "hgfs.exe", gotErr))
			}
		})
	}
}

// workingFiles maps each file of a working directory (outside .hg) to its
// content.
func workingFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".hg" {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
