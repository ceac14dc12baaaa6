package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestPull pulls from a real hg serve, over HTTP and ssh, into
// repositories that have part of the history, and compares with hg pull
// doing the same: output, changesets, phases, bookmarks, hg verify.
func TestPull(t *testing.T) {
	t.Parallel()
	testenv.HgPath(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir) // non-publishing, bookmarks, a draft
	pub := filepath.Join(dir, "pub")
	testenv.Hg(t, dir, "clone", "-q", "-U", src, pub)
	os.WriteFile(filepath.Join(pub, ".hg", "hgrc"), []byte("[phases]\npublish = true\n"), 0o644)

	ssh := fakeSSHScript(t, dir, "")
	cases := []struct {
		name   string
		url    string
		args   []string
		hgArgs []string
		start  string // revision the destinations start from ("" = empty)
	}{
		{name: "http-empty", url: testenv.Serve(t, src)},
		{name: "http-partial", url: testenv.Serve(t, src), start: "0"},
		{name: "http-publishing", url: testenv.Serve(t, pub), start: "0"},
		{name: "http-uptodate", url: testenv.Serve(t, src), start: "2"},
		{name: "ssh-partial", url: "ssh://user@host/" + src, args: []string{"-e", ssh}, hgArgs: []string{"--ssh", ssh}, start: "1"},
		{name: "http-rev", url: testenv.Serve(t, src), args: []string{"-r", "1"}, hgArgs: []string{"-r", "1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hgRepo := filepath.Join(dir, tc.name+"-hg")
			hgfsRepo := filepath.Join(dir, tc.name+"-hgfs")
			for _, r := range []string{hgRepo, hgfsRepo} {
				if tc.start == "" {
					testenv.Hg(t, dir, "init", r)
				} else {
					testenv.Hg(t, dir, "clone", "-q", "-U", "-r", tc.start, src, r)
				}
			}
			want := string(testenv.Hg(t, hgRepo, append(append([]string{"pull"}, tc.hgArgs...), tc.url)...))
			got, stderr, code := hgfsIn(hgfsRepo, append(append([]string{"pull"}, tc.args...), tc.url)...)
			if code != 0 {
				t.Fatalf("hgfs pull: exit %d\n%s%s", code, got, stderr)
			}
			if got != want {
				t.Errorf("output differs:\n%s", testenv.Diff("hg", want, "hgfs", got))
			}
			if w, g := repoState(t, hgRepo, true), repoState(t, hgfsRepo, true); w != g {
				t.Errorf("repository differs:\n%s", testenv.Diff("hg", w, "hgfs", g))
			}
		})
	}
}

// TestCloneChangegroup clones without --stream, as hg does by default:
// from hg serve and from a changegroup bundle file.
func TestCloneChangegroup(t *testing.T) {
	t.Parallel()
	testenv.HgPath(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	url := testenv.Serve(t, src)
	bundle := filepath.Join(dir, "all.hg")
	testenv.Hg(t, src, "bundle", "-q", "-a", "-t", "bzip2-v2", bundle)
	for _, tc := range []struct{ name, source string }{{"http", url}, {"bundle", bundle}} {
		t.Run(tc.name, func(t *testing.T) {
			hgDest := filepath.Join(dir, tc.name+"-hg")
			hgfsDest := filepath.Join(dir, tc.name+"-hgfs")
			want := string(testenv.Hg(t, dir, "clone", "-U", tc.source, hgDest))
			got, stderr, code := hgfsClone(t, dir, "-U", tc.source, hgfsDest)
			if code != 0 {
				t.Fatalf("hgfs clone: exit %d\n%s%s", code, got, stderr)
			}
			if got != want {
				t.Errorf("output differs:\n%s", testenv.Diff("hg", want, "hgfs", got))
			}
			if w, g := repoState(t, hgDest, true), repoState(t, hgfsDest, true); w != g {
				t.Errorf("repository differs:\n%s", testenv.Diff("hg", w, "hgfs", g))
			}
			if _, err := os.Stat(filepath.Join(hgfsDest, ".hg.partial")); err == nil {
				t.Error(".hg.partial left behind")
			}
			hgrc, _ := os.ReadFile(filepath.Join(hgfsDest, ".hg", "hgrc"))
			wantRC, _ := os.ReadFile(filepath.Join(hgDest, ".hg", "hgrc"))
			if string(hgrc) != string(wantRC) {
				t.Errorf("hgrc:\n%s", testenv.Diff("hg", string(wantRC), "hgfs", string(hgrc)))
			}
		})
	}
}

// TestPullUnknownRevLikeHg asks servers (hg 6.3's and hg 7's serve and
// hgfs serve, over HTTP and ssh) for a revision they do not have and
// for a secret one. The lookup's answer is the message hg aborts with,
// as sent ("unknown revision 'nonexist'", "filtered revision '1' (not
// in 'served' subset)"); hgfs clone -r and pull -r put "unknown
// revision: " before it.
func TestPullUnknownRevLikeHg(t *testing.T) {
	t.Parallel()
	hgs := testenv.Mercurials(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	testenv.Hg(t, dir, "init", "src")
	for i, text := range []string{"0\n", "1\n"} {
		os.WriteFile(filepath.Join(src, "f"), []byte(text), 0o644)
		testenv.Hg(t, src, "commit", "-q", "-A", "-u", "t", "-m", fmt.Sprint(i))
	}
	testenv.Hg(t, src, "phase", "--secret", "--force", "-r", "1")
	local := filepath.Join(dir, "local")
	testenv.Hg(t, dir, "clone", "-q", "-r", "0", src, local)

	// Each server over HTTP; over ssh, whose answers are the same, hg
	// 6.3's and hgfs's.
	ssh := fakeSSHScript(t, dir, "")
	hgfsURL, _, _ := startServeBinary(t, src)
	servers := map[string][]string{
		"hgfs-http":          {hgfsURL},
		"hgfs-ssh":           {"-e", ssh, "--remotecmd", testenv.Hgfs(t), "ssh://user@host/" + src},
		hgs[0].Name + "-ssh": {"-e", ssh, "--remotecmd", hgs[0].Path, "ssh://user@host/" + src},
	}
	for _, m := range hgs {
		servers[m.Name+"-http"] = []string{m.Serve(t, src)}
	}
	// A directory that is no repository is none as a pull's source.
	notRepo := filepath.Join(dir, "not-a-repo")
	os.Mkdir(notRepo, 0o755)
	for _, hg := range hgs {
		sameAsHg(t, hg, local, "pull", notRepo)
	}
	for name, source := range servers {
		t.Run(name, func(t *testing.T) {
			for _, rev := range []string{"nonexist", "1"} {
				for _, hg := range hgs {
					sameAsHg(t, hg, dir, append([]string{"clone", "-r", rev}, append(source, filepath.Join(dir, "dest"))...)...)
					sameAsHg(t, hg, local, append([]string{"pull", "-r", rev}, source...)...)
				}
			}
		})
	}
}

// TestCloneDefaultPathLikeHg clones from URLs hg writes back otherwise
// than given (a bare host gains its "/", a path's needless escapes are
// decoded, a password is dropped) and from ones it keeps: the clone's
// default path must be hg's, and so must what pull prints from it and
// from the URL itself (where a password shows as "***").
func TestCloneDefaultPathLikeHg(t *testing.T) {
	t.Parallel()
	hgs := testenv.Mercurials(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	conf := filepath.Join(dir, "web.conf")
	if err := os.WriteFile(conf, []byte("[paths]\nrepo = "+src+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimSuffix(testenv.Serve(t, src), "/") // http://127.0.0.1:PORT
	web := testenv.Serve(t, src, "--web-conf", conf)
	ssh := fakeSSHScript(t, dir, "")
	escaped := src[:len(src)-1] + fmt.Sprintf("%%%02x", src[len(src)-1])
	sources := [][]string{
		{host},
		{strings.Replace(host, "//", "//joe:secret@", 1)},
		{web + "re%70o"},
		{web + "repo/"},
		{"-e", ssh, "ssh://user@host/" + escaped},
	}
	result := func(o, e string, code int) string { return fmt.Sprintf("%s--- stderr\n%s--- exit %d\n", o, e, code) }
	for i, source := range sources {
		for _, hg := range hgs {
			hgDest := filepath.Join(dir, fmt.Sprintf("%d-%s", i, hg.Name))
			hgfsDest := hgDest + "-hgfs"
			hgRun := func(dir string, args ...string) string {
				o, e, err := hg.Result(t, dir, args...)
				code := 0
				if err != nil {
					var ok bool
					if code, ok = exitCode(err); !ok {
						t.Fatalf("%s %v: %v", hg.Name, args, err)
					}
				}
				return result(string(o), string(e), code)
			}
			hgfsRun := func(dir string, args ...string) string { return result(hgfsIn(dir, args...)) }
			compare := func(what, want, got string) {
				if got != want {
					t.Errorf("%v: %s differs:\n%s", source, what, testenv.Diff(hg.Name, want, "hgfs", got))
				}
			}
			clone := append(append([]string{"clone", "-U"}, source...), "")
			clone[len(clone)-1] = hgDest
			want := hgRun(dir, clone...)
			clone[len(clone)-1] = hgfsDest
			compare("clone", want, hgfsRun(dir, clone...))
			wantRC, _ := os.ReadFile(filepath.Join(hgDest, ".hg", "hgrc"))
			gotRC, _ := os.ReadFile(filepath.Join(hgfsDest, ".hg", "hgrc"))
			compare("hgrc", string(wantRC), string(gotRC))
			pull := append([]string{"pull"}, source[:len(source)-1]...)
			compare("pull", hgRun(hgDest, pull...), hgfsRun(hgfsDest, pull...))
			pull = append(pull, source[len(source)-1])
			compare("pull URL", hgRun(hgDest, pull...), hgfsRun(hgfsDest, pull...))
		}
	}
}

// TestPullUnrelatedLikeHg pulls a repository that shares no changeset
// with the one pulled into, from a local path, hg serve and a bundle
// file: each Mercurial aborts ("repository is unrelated") and leaves the
// repository as it was, and with -f warns and pulls; from a bundle it
// pulls either way (the bundle overlays the repository, so they share
// all of it). hgfs must print and leave what each does. The repositories
// pulled into are hg's local clones of one, whose revlogs they share as
// hard links: that one must be left as it was.
func TestPullUnrelatedLikeHg(t *testing.T) {
	t.Parallel()
	hgs := testenv.Mercurials(t)
	dir := t.TempDir()
	commit := func(repo, file string) {
		testenv.Hg(t, dir, "init", repo)
		os.WriteFile(filepath.Join(repo, file), []byte(file+"\n"), 0o644)
		testenv.Hg(t, repo, "commit", "-q", "-A", "-u", "t", "-d", "0 0", "-m", file)
	}
	base, other := filepath.Join(dir, "base"), filepath.Join(dir, "other")
	commit(base, "a")
	commit(other, "b")
	bundle := filepath.Join(dir, "other.hg")
	testenv.Hg(t, other, "bundle", "-q", "-a", bundle)
	sources := map[string]string{"local": other, "bundle": bundle}
	baseBefore := storeSnapshot(t, base)
	defer func() { sameSnapshot(t, "the repository cloned from", baseBefore, storeSnapshot(t, base)) }()
	for _, hg := range hgs {
		sources[hg.Name+"-http"] = hg.Serve(t, other)
	}
	for _, name := range slices.Sorted(maps.Keys(sources)) {
		src := sources[name]
		for _, hg := range hgs {
			for _, force := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/force=%v", name, hg.Name, force), func(t *testing.T) {
					args := []string{"pull", src}
					if force {
						args = []string{"pull", "-f", src}
					}
					sub := filepath.Join(dir, label(t.Name()))
					hgRepo, hgfsRepo := filepath.Join(sub, "hg"), filepath.Join(sub, "hgfs")
					for _, r := range []string{hgRepo, hgfsRepo} {
						testenv.Hg(t, dir, "clone", "-q", "-U", base, r)
					}
					before := storeSnapshot(t, hgfsRepo)
					wo, we, werr := hg.Result(t, hgRepo, args...)
					wc := 0
					if werr != nil {
						wc, _ = exitCode(werr)
					}
					gotOut, ge, gc := hgfsIn(hgfsRepo, args...)
					if wc != gc || string(wo) != gotOut || string(we) != ge {
						t.Errorf("%s and hgfs differ:\n%s", hg.Name, testenv.Diff(hg.Name, fmt.Sprintf("exit %d\n%s%s", wc, wo, we), "hgfs", fmt.Sprintf("exit %d\n%s%s", gc, gotOut, ge)))
					}
					if !force && name != "bundle" {
						if gc == 0 {
							t.Errorf("hgfs pulled an unrelated repository without -f")
						}
						sameSnapshot(t, "after the refused pull", before, storeSnapshot(t, hgfsRepo))
						return
					}
					if w, g := repoState(t, hgRepo, false), repoState(t, hgfsRepo, true); w != g {
						t.Errorf("repository differs:\n%s", testenv.Diff(hg.Name, w, "hgfs", g))
					}
				})
			}
		}
	}
}
