package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// viewRepos builds with hg the repositories the tests below bundle, in
// dir, and returns their roots by name:
//
//   - public: two public changesets;
//   - secret: a public changeset and a secret one;
//   - archived: a public changeset and an archived one (phaseroots
//     written by hand: hg 6.3 reads it without the requirement);
//   - obsolete: c1, c2, c2 amended (c2 hidden), and a secret child;
//   - markerless: one changeset and an obsstore whose only marker was
//     deleted (its version byte alone);
//   - pruned: its only changeset pruned, the working directory at null;
//   - empty: no changeset.
func viewRepos(t *testing.T, hg testenv.Mercurial, dir string) map[string]string {
	t.Helper()
	evolution := []string{"--config", "experimental.evolution=all"}
	repos := map[string]string{}
	repo := func(name string, commits ...string) string {
		r := filepath.Join(dir, name)
		hg.Run(t, dir, "init", r)
		for _, c := range commits {
			writeFile(t, filepath.Join(r, c), c+"\n")
			hg.Run(t, r, "commit", "-qAm", c, "-u", "test")
		}
		repos[name] = r
		return r
	}
	node := func(r, rev string) string {
		return string(hg.Run(t, r, "log", "--hidden", "-r", rev, "-T", "{node}"))
	}
	repo("public", "a", "b")
	r := repo("secret", "a", "b")
	hg.Run(t, r, "phase", "-q", "--force", "--secret", "1")
	r = repo("archived", "a", "b")
	writeFile(t, filepath.Join(r, ".hg", "store", "phaseroots"), "32 "+node(r, "1")+"\n")
	r = repo("obsolete", "c1", "c2")
	writeFile(t, filepath.Join(r, "c2"), "amended\n")
	hg.Run(t, r, append(evolution, "commit", "-q", "--amend", "-m", "amended", "-u", "test")...)
	writeFile(t, filepath.Join(r, "c3"), "secret\n")
	hg.Run(t, r, "commit", "-qAm", "c3", "-u", "test", "--secret")
	r = repo("markerless", "a")
	hg.Run(t, r, append(evolution, "debugobsolete", "-q", strings.Repeat("ab", 20))...)
	hg.Run(t, r, append(evolution, "debugobsolete", "-q", "--delete", "0")...)
	r = repo("pruned", "a")
	hg.Run(t, r, "update", "-q", "null")
	hg.Run(t, r, append(evolution, "debugobsolete", "-q", node(r, "0"))...)
	repo("empty")
	return repos
}

// obsNoise is what hg prints of a repository with markers where
// obsolescence is not enabled; hgfs does not.
var obsNoise = regexp.MustCompile(`(?m)^"?obsolete"? feature not enabled but \d+ markers found!\n`)

// bundleResult is one bundle command's outcome.
type bundleResult struct {
	code           int
	stdout, stderr string
	written        bool
}

func runHgBundle(t *testing.T, hg testenv.Mercurial, dir string, args ...string) bundleResult {
	t.Helper()
	o, e, err := hg.Result(t, dir, args...)
	code := 0
	if err != nil {
		var ok bool
		if code, ok = exitCode(err); !ok {
			t.Fatalf("%s %s: %v", hg.Name, strings.Join(args, " "), err)
		}
	}
	return bundleResult{code: code, stdout: string(o), stderr: obsNoise.ReplaceAllString(string(e), "")}
}

func runHgfsBundle(dir string, args ...string) bundleResult {
	o, e, code := hgfsIn(dir, args...)
	return bundleResult{code: code, stdout: o, stderr: e}
}

// unbundled is the state hg unbundle of a bundle makes of an empty
// repository (obsolescence enabled, so a markers part applies): its
// changesets with their phases, and its markers.
func unbundled(t *testing.T, hg testenv.Mercurial, dir, name, bundle string) string {
	t.Helper()
	r := filepath.Join(dir, name)
	hg.Run(t, dir, "init", r)
	cfg := []string{"--config", "experimental.evolution=all", "--config", "experimental.changegroup3=true"}
	hg.Run(t, r, append(cfg, "unbundle", "-q", bundle)...)
	return string(hg.Run(t, r, "log", "--hidden", "-T", "{node} {phase} {desc}\n")) + string(hg.Run(t, r, "debugobsolete"))
}

// debugBundleNodes is the changesets hg debugbundle lists in a bundle.
func debugBundleNodes(t *testing.T, hg testenv.Mercurial, bundle string) string {
	t.Helper()
	var b strings.Builder
	for _, l := range strings.Split(string(hg.Run(t, "", "debugbundle", bundle)), "\n") {
		if l = strings.TrimSpace(l); len(l) == 40 {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// TestBundleStreamView: hgfs bundle writes and refuses stream bundles as
// hg 6.3's bundle -t 'none-v2;stream=v2' (bundle2.addpartbundlestream2,
// streamclone.allowservergeneration) and debugcreatestreamclonebundle
// do: secret changesets refuse a v2 stream unless
// server.uncompressedallowsecret, server.uncompressed=false refuses any,
// archived ones do not count, obsolescence markers refuse it unless
// experimental.evolution.bundle-obsmarker (an obsstore without markers
// does not), and packed1 warns of secret changesets (and is written
// without a visible changeset, where v2 is not). Exit codes,
// messages, whether a file is left, debugbundle's stream2 part (hg 6.3)
// and what hg unbundle makes of the bundle are compared. Where hg 7
// differs, hgfs follows hg 6.3: hg 7's shorter hint, and its refusal to
// bundle archived changesets (not compared).
func TestBundleStreamView(t *testing.T) {
	t.Parallel()
	const hint63 = "(well-behaved clients should not be requesting stream data from servers not advertising it; the client may be buggy)\n"
	for _, hg := range testenv.Mercurials(t) {
		t.Run(hg.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			repos := viewRepos(t, hg, dir)
			for i, c := range []struct {
				repo   string
				config []string
			}{
				{"public", nil},
				{"public", []string{"server.uncompressed=false"}},
				{"secret", nil},
				{"secret", []string{"server.uncompressedallowsecret=true"}},
				{"secret", []string{"server.uncompressedallowsecret=true", "phases.publish=false"}},
				{"secret", []string{"server.uncompressedallowsecret=true", "server.uncompressed=false"}},
				{"archived", nil},
				{"obsolete", nil},
				{"obsolete", []string{"server.uncompressedallowsecret=true"}},
				{"obsolete", []string{"server.uncompressedallowsecret=true", "experimental.evolution.bundle-obsmarker=true", "phases.publish=false"}},
				{"markerless", nil},
				{"pruned", nil},
				{"empty", nil},
			} {
				if c.repo == "archived" && hg.Major() >= 7 {
					continue
				}
				var cfg []string
				for _, kv := range c.config {
					cfg = append(cfg, "--config", kv)
				}
				label := c.repo + " " + strings.Join(c.config, " ")
				for _, typ := range []string{"v2", "packed1"} {
					theirs := filepath.Join(dir, typ+"-hg-"+strconv.Itoa(i))
					ours := filepath.Join(dir, typ+"-hgfs-"+strconv.Itoa(i))
					var want bundleResult
					if typ == "v2" {
						want = runHgBundle(t, hg, dir, append(cfg, "-R", repos[c.repo], "bundle", "-a", "-t", "none-v2;stream=v2", theirs)...)
						want.stderr = strings.Replace(want.stderr, "(the client seems buggy)\n", hint63, 1)
					} else {
						want = runHgBundle(t, hg, dir, append(cfg, "-R", repos[c.repo], "debugcreatestreamclonebundle", theirs)...)
						// Its report of what it wrote hgfs does not print.
						want.stdout = ""
					}
					got := runHgfsBundle(dir, append(cfg, "-R", repos[c.repo], "bundle", "-a", "-t", typ, ours)...)
					_, err := os.Stat(theirs)
					want.written = err == nil
					_, err = os.Stat(ours)
					got.written = err == nil
					if got != want {
						t.Errorf("%s, %s: hgfs %+v, hg %+v", label, typ, got, want)
						continue
					}
					if !got.written || typ != "v2" {
						continue
					}
					if hg.Major() == 6 {
						w := strings.SplitN(string(hg.Run(t, "", "debugbundle", theirs)), "\n", 3)
						g := strings.SplitN(string(hg.Run(t, "", "debugbundle", ours)), "\n", 3)
						if w[1] != g[1] {
							t.Errorf("%s: stream2 part: hgfs %s, hg %s", label, g[1], w[1])
						}
					}
					w := unbundled(t, hg, dir, "u-hg-"+strconv.Itoa(i), theirs)
					g := unbundled(t, hg, dir, "u-hgfs-"+strconv.Itoa(i), ours)
					if w != g {
						t.Errorf("%s: unbundled hgfs bundle differs:\n%s", label, testenv.Diff("hg", w, "hgfs", g))
					}
				}
			}
		})
	}
}

// TestBundleHidden: hgfs bundle -a writes the changesets hg bundle -a
// does, which works on the visible repository: hidden changesets left
// out, secret ones in, with or without obsolescence enabled, in every
// changegroup type; and "no changes found" (exit 1, no file) when none
// is visible, stream types included. Outputs, exit codes, the changesets
// hg debugbundle lists and what hg unbundle makes of the bundle are
// compared.
func TestBundleHidden(t *testing.T) {
	t.Parallel()
	for _, hg := range testenv.Mercurials(t) {
		t.Run(hg.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			repos := viewRepos(t, hg, dir)
			n := 0
			for _, name := range []string{"obsolete", "pruned", "empty"} {
				types := []string{"none-v1", "gzip-v1", "none-v2", "none-v2;cg.version=03"}
				if name != "obsolete" {
					types = append(types, "none-v2;stream=v2")
				}
				for _, evolution := range []bool{false, true} {
					cfg := []string{"--config", "experimental.changegroup3=true"}
					if evolution {
						cfg = append(cfg, "--config", "experimental.evolution=all")
					}
					for _, typ := range types {
						n++
						label := name + " " + typ + " " + strings.Join(cfg, " ")
						theirs := filepath.Join(dir, "hg-"+strconv.Itoa(n))
						ours := filepath.Join(dir, "hgfs-"+strconv.Itoa(n))
						want := runHgBundle(t, hg, dir, append(cfg, "-R", repos[name], "bundle", "-a", "-t", typ, theirs)...)
						got := runHgfsBundle(dir, append(cfg, "-R", repos[name], "bundle", "-a", "-t", typ, ours)...)
						_, err := os.Stat(theirs)
						want.written = err == nil
						_, err = os.Stat(ours)
						got.written = err == nil
						if got != want {
							t.Errorf("%s: hgfs %+v, hg %+v", label, got, want)
							continue
						}
						if !got.written {
							continue
						}
						if w, g := debugBundleNodes(t, hg, theirs), debugBundleNodes(t, hg, ours); w != g {
							t.Errorf("%s: changesets in the bundle:\n%s", label, testenv.Diff("hg", w, "hgfs", g))
						}
						w := unbundled(t, hg, dir, "u-hg-"+strconv.Itoa(n), theirs)
						g := unbundled(t, hg, dir, "u-hgfs-"+strconv.Itoa(n), ours)
						if w != g {
							t.Errorf("%s: unbundled hgfs bundle differs:\n%s", label, testenv.Diff("hg", w, "hgfs", g))
						}
					}
				}
			}
		})
	}
}
