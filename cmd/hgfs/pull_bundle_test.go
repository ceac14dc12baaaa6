package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestCorpusPullBundle pulls bundle files, as `hg pull FILE` does, on
// real history and on the rich generated repository (branches, merges,
// secret and draft changesets, bookmarks, obsolescence markers), and
// compares what hgfs prints and the repository it leaves with both
// Mercurials: into an empty repository, onto the part of the history a
// smaller bundle gave, the same pull again (no changes found), and a
// bundle carrying phase-heads and markers, whose phases hg 7 takes (hg
// 6.3's bundlerepo reads no phase-heads part: it leaves every pulled
// changeset draft; hgfs follows hg 7) and whose markers neither reads.
// A -r that leaves part of the bundle's new changesets out is refused,
// with the repository as it was.
func TestCorpusPullBundle(t *testing.T) {
	t.Parallel()
	ors := startOracles(t)
	srcs := corpusSources(t, ors)
	dir := t.TempDir()
	for _, tc := range []struct{ src, cut string }{{"rich", "19"}, {"history", "1500"}} {
		t.Run(tc.src, func(t *testing.T) {
			src := findSource(t, srcs, tc.src).dir
			sdir := filepath.Join(dir, tc.src)
			os.Mkdir(sdir, 0o755)
			all := filepath.Join(sdir, "all.hg")
			writeBundle(t, ors[0], src, "bzip2-v2", all)
			// The changesets that are not secret: a pull of a bundle
			// whose phase-heads leave some secret is refused (below).
			withPhases := filepath.Join(sdir, "phases.hg")
			ors[0].run(t, src, "bundle", "-q", "--hidden", "--base", "null", "-r", "not secret()", "-t", "zstd-v2;obsolescence=yes;phases=yes", withPhases)
			part := filepath.Join(sdir, "part.hg")
			ors[0].run(t, src, "bundle", "-q", "--hidden", "--base", "null", "-r", tc.cut, "-t", "none-v2", part)

			cases := []struct {
				name    string
				pre     []string // bundles each target unbundles first (hg 6.3)
				bundle  string
				again   bool // pull twice; compare the second
				hg7Only bool
			}{
				{name: "into-empty", bundle: all},
				{name: "onto-part", pre: []string{part}, bundle: all},
				{name: "again", pre: []string{part}, bundle: all, again: true},
				{name: "phase-heads-and-markers", bundle: withPhases, hg7Only: true},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					use := ors
					if c.hg7Only {
						if len(ors) < 2 {
							t.Skip("hg 7 is not installed (Mercurials logged why)")
						}
						use = ors[1:]
					}
					cdir := filepath.Join(sdir, c.name)
					os.Mkdir(cdir, 0o755)
					target := func(d string) {
						ors[0].run(t, cdir, "init", d)
						for _, b := range c.pre {
							ors[0].run(t, d, "unbundle", "-q", b)
						}
					}
					var wants []outcome
					for _, o := range use {
						d := filepath.Join(cdir, o.Name)
						target(d)
						if c.again {
							o.run(t, d, "pull", "-q", c.bundle)
						}
						out, errOut, code := o.result(t, d, "pull", c.bundle)
						wants = append(wants, outcome{d, out, errOut, code})
					}
					got := filepath.Join(cdir, "hgfs")
					target(got)
					if c.again {
						if out, errOut, code := hgfsRun(got, "pull", "-q", c.bundle); code != 0 {
							t.Fatalf("first pull: exit %d\n%s%s", code, out, errOut)
						}
					}
					out, errOut, code := hgfsRun(got, "pull", c.bundle)
					compareOutcomes(t, use, wants, outcome{got, out, errOut, code})
				})
			}

			// What hgfs refuses, changing nothing: -r of the cut alone
			// (hg pulls the cut's ancestors), and a bundle whose
			// phase-heads leave changesets secret (hg 7 pulls the others).
			refused := func(name, want string, args ...string) {
				got := filepath.Join(sdir, name)
				ors[0].run(t, sdir, "init", got)
				before := storeSnapshot(t, got)
				out, errOut, code := hgfsRun(got, append([]string{"pull"}, args...)...)
				if code != 255 || !strings.Contains(errOut, want) {
					t.Errorf("%s: exit %d\n%s%s", name, code, out, errOut)
				}
				sameSnapshot(t, name, before, storeSnapshot(t, got))
			}
			node := strings.TrimSpace(ors[0].run(t, src, "log", "--hidden", "-r", tc.cut, "-T", "{node}"))
			refused("partial-rev", "the revisions asked for leave", "-r", node, all)
			if ors[0].run(t, src, "log", "--hidden", "-r", "secret()", "-T", "x") != "" {
				withSecret := filepath.Join(sdir, "secret.hg")
				writeBundle(t, ors[0], src, "zstd-v2;phases=yes", withSecret)
				refused("secret", "are secret, which a pull leaves out", withSecret)
			}
		})
	}
}

// TestPullStreamBundleRefused pulls from stream bundles, which hold
// store files rather than changesets: hg 6.3 fails (a traceback on
// packed1, "No changegroups found" on a v2 stream); hgfs refuses each
// with the command that applies it, and leaves the repository as it was.
func TestPullStreamBundleRefused(t *testing.T) {
	t.Parallel()
	testenv.HgPath(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	packed, v2 := filepath.Join(dir, "packed.hg"), filepath.Join(dir, "v2.hg")
	testenv.Hg(t, src, "debugcreatestreamclonebundle", packed)
	testenv.Hg(t, src, "bundle", "-q", "-a", "-t", "none-v2;stream=v2", v2)
	for _, c := range []struct{ bundle, hint string }{
		{packed, "(use 'hgfs clone " + packed + " DEST')\n"},
		{v2, "(use 'hgfs unbundle' into an empty repository, or 'hgfs clone " + v2 + " DEST')\n"},
	} {
		repo := filepath.Join(dir, "r-"+filepath.Base(c.bundle))
		testenv.Hg(t, dir, "init", repo)
		before := storeSnapshot(t, repo)
		out, errOut, code := hgfsIn(repo, "pull", c.bundle)
		want := "abort: " + c.bundle + " is a stream bundle: it cannot be pulled from\n" + c.hint
		if code != 255 || errOut != want || out != "pulling from "+c.bundle+"\n" {
			t.Errorf("pull %s: exit %d\nstdout:\n%sstderr:\n%swant stderr:\n%s", c.bundle, code, out, errOut, want)
		}
		sameSnapshot(t, c.bundle, before, storeSnapshot(t, repo))
	}
}
