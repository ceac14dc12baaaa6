package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

const evolutionRc = "[experimental]\nevolution = all\n[phases]\npublish = false\n"

// obsFixture is a non-publishing repository with obsolescence markers
// enabled, and clones of it (in dir/base) taken before its history was
// rewritten: changesets 0-1-2-3 (draft), then 1 amended, 3 pruned with
// its parents recorded, 2 rewritten as an unknown changeset by a marker
// with flags, a date and a time zone. It returns the source.
func obsFixture(t *testing.T, hg testenv.Mercurial, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	hg.Run(t, dir, "init", src)
	writeFile(t, filepath.Join(src, ".hg", "hgrc"), evolutionRc)
	for i, content := range []string{"one\n", "two\n", "three\n", "four\n"} {
		writeFile(t, filepath.Join(src, "f"), content)
		hg.Run(t, src, "commit", "-qAm", "c"+content)
		if i == 2 {
			hg.Run(t, dir, "clone", "-q", "-U", src, filepath.Join(dir, "base"))
		}
	}
	hg.Run(t, src, "update", "-q", "1")
	hg.Run(t, src, "commit", "-q", "--amend", "-m", "two, amended")
	hg.Run(t, src, "debugobsolete", "--record-parents", "-d", "1000000 -3600", "-u", "someone",
		string(hg.Run(t, src, "log", "--hidden", "-r", "3", "-T", "{node}")))
	hg.Run(t, src, "debugobsolete", "--flags", "1", "-d", "1234567 7200",
		string(hg.Run(t, src, "log", "--hidden", "-r", "2", "-T", "{node}")), strings.Repeat("cd", 20))
	// A marker of no changeset here: bundles and pulls leave it out.
	hg.Run(t, src, "debugobsolete", "-d", "0 0", strings.Repeat("ef", 20))
	return src
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// obsState is what the tests compare: the markers and the changesets
// with their phases, hidden ones included.
func obsState(t *testing.T, hg testenv.Mercurial, r string) string {
	t.Helper()
	return string(hg.Run(t, r, "debugobsolete")) + string(hg.Run(t, r, "log", "--hidden", "-T", "{rev}:{node|short} {phase}\n"))
}

// TestObsmarkers applies obsolescence markers from bundles and pulls as
// hg 6.3 and hg 7 do: into repositories that create markers (the
// obsstore gains the new ones, byte for byte hg's, and the summary names
// them and what they obsoleted), into ones that do not (a mandatory part
// aborts, an advisory one is ignored), twice (nothing new), rolled back
// by hg rollback, and pulled from hg serve with and without changesets.
func TestObsmarkers(t *testing.T) {
	t.Parallel()
	for _, hg := range testenv.Mercurials(t) {
		t.Run(hg.Name, func(t *testing.T) {
			dir := t.TempDir()
			src := obsFixture(t, hg, dir)
			base := filepath.Join(dir, "base")
			bundle := filepath.Join(dir, "obs.hg")
			hg.Run(t, src, "bundle", "-q", "--hidden", "-a", "-t", "zstd-v2;obsolescence=yes;phases=yes", bundle)
			advisory := filepath.Join(dir, "advisory.hg")
			hg.Run(t, src, "bundle", "-q", "--hidden", "-a", "-t", "zstd-v2;obsolescence=yes;obsolescence-mandatory=no", advisory)

			// both runs args with hg in one copy of start and hgfs in
			// another, compares exit codes, outputs and states, and
			// returns the hgfs copy.
			both := func(name, start string, evolution bool, args ...string) string {
				t.Helper()
				hgRepo, hgfsRepo := testenv.CopyRepo(t, start), testenv.CopyRepo(t, start)
				rc := "[phases]\npublish = false\n"
				if evolution {
					rc = evolutionRc
				}
				for _, r := range []string{hgRepo, hgfsRepo} {
					writeFile(t, filepath.Join(r, ".hg", "hgrc"), rc)
				}
				wantOut, wantErr, err := hg.Result(t, hgRepo, args...)
				wantCode := 0
				if err != nil {
					wantCode, _ = exitCode(err)
				}
				gotOut, gotErr, gotCode := hgfsIn(hgfsRepo, args...)
				// hg pull prints the URL with the slash hg serve adds.
				wantOut = bytes.ReplaceAll(wantOut, []byte("pulling from "+strings.TrimSuffix(args[len(args)-1], "/")+"/\n"), []byte("pulling from "+args[len(args)-1]+"\n"))
				if gotCode != wantCode || gotOut != string(wantOut) || gotErr != string(wantErr) {
					t.Errorf("%s: exit %d, hg %d\n%s\n%s", name, gotCode, wantCode,
						testenv.Diff("hg stdout", string(wantOut), "hgfs stdout", gotOut),
						testenv.Diff("hg stderr", string(wantErr), "hgfs stderr", gotErr))
				}
				if w, g := obsState(t, hg, hgRepo), obsState(t, hg, hgfsRepo); w != g {
					t.Errorf("%s: repository differs:\n%s", name, testenv.Diff("hg", w, "hgfs", g))
				}
				w, _ := os.ReadFile(filepath.Join(hgRepo, ".hg", "store", "obsstore"))
				g, _ := os.ReadFile(filepath.Join(hgfsRepo, ".hg", "store", "obsstore"))
				if !bytes.Equal(w, g) {
					t.Errorf("%s: obsstore differs from hg's", name)
				}
				return hgfsRepo
			}

			r := both("unbundle", base, true, "unbundle", bundle)
			if n := strings.Count(string(hg.Run(t, r, "debugobsolete")), "\n"); n != 2 {
				t.Errorf("unbundle: %d markers, want 2 (as hg)", n)
			}
			both("unbundle again", r, true, "unbundle", bundle)
			both("unbundle, markers disabled", base, false, "unbundle", bundle)
			both("unbundle advisory, markers disabled", base, false, "unbundle", advisory)
			both("unbundle advisory", base, true, "unbundle", advisory)
			empty := filepath.Join(dir, "empty")
			hg.Run(t, dir, "init", empty)
			both("unbundle into an empty repository", empty, true, "unbundle", bundle)

			// hg rollback undoes what hgfs appended.
			before := obsState(t, hg, base)
			r = testenv.CopyRepo(t, base)
			writeFile(t, filepath.Join(r, ".hg", "hgrc"), evolutionRc)
			if out, stderr, code := hgfsIn(r, "unbundle", bundle); code != 0 {
				t.Fatalf("hgfs unbundle: %d\n%s%s", code, out, stderr)
			}
			hg.Run(t, r, "rollback", "-q")
			if after := obsState(t, hg, r); after != before {
				t.Errorf("after hg rollback:\n%s", testenv.Diff("before", before, "after", after))
			}

			// Pulls: markers come with the changesets, or alone.
			url := hg.Serve(t, src)
			both("pull", base, true, "pull", url)
			withChangesets := filepath.Join(dir, "nomarkers")
			hg.Run(t, dir, "clone", "-q", "-U", src, withChangesets)
			os.Remove(filepath.Join(withChangesets, ".hg", "store", "obsstore"))
			both("pull markers only", withChangesets, true, "pull", url)
			both("pull, markers disabled", base, false, "pull", url)
			// A server that does not exchange markers still lists them
			// (pushkey namespace "obsolete"), which hg pulls instead.
			urlNoExchange := hg.Serve(t, src, "--config", "experimental.evolution=")
			both("pull, server without exchange", base, true, "pull", urlNoExchange)
			both("pull markers only, server without exchange", withChangesets, true, "pull", urlNoExchange)
		})
	}
}

// TestCloneOrphansLikeHg clones a repository whose markers make an
// orphan (B on A, then A amended) with markers enabled: hg's clone, as
// its pull, warns "1 new orphan changesets" after the markers' line,
// after a clone bundle's counts when the bundle carries the markers,
// and before a stream's transfer line; hgfs clone said nothing of it.
func TestCloneOrphansLikeHg(t *testing.T) {
	t.Parallel()
	for _, hg := range testenv.Mercurials(t) {
		t.Run(hg.Name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src")
			hg.Run(t, dir, "init", src)
			writeFile(t, filepath.Join(src, ".hg", "hgrc"), evolutionRc)
			for _, f := range []string{"a", "b"} {
				writeFile(t, filepath.Join(src, f), f+"\n")
				hg.Run(t, src, "commit", "-qAm", f)
			}
			hg.Run(t, src, "update", "-q", "0")
			writeFile(t, filepath.Join(src, "a"), "a2\n")
			hg.Run(t, src, "commit", "-q", "--amend", "-m", "a2")
			url := hg.Serve(t, src)
			www := filepath.Join(dir, "www")
			os.Mkdir(www, 0o755)
			hg.Run(t, src, "bundle", "-q", "-a", "--hidden", "-t", "zstd-v2;obsolescence=yes", filepath.Join(www, "obs.hg"))
			bs := startBundleServer(t, www)
			bundled := hg.Serve(t, src, "--config", "extensions.clonebundles=")
			for i, args := range [][]string{
				{url},
				{"-U", url},
				{"-r", "1", "-r", "2", url},
				{"--pull", src},
				{"--stream", url},
				{"-U", bundled}, // last: the manifest is the source's
			} {
				if args[len(args)-1] == bundled {
					writeManifest(t, src, bs.URL+"/obs.hg BUNDLESPEC=zstd-v2%3Bobsolescence%3Dyes\n")
				}
				args = append([]string{"clone", "--config", "experimental.evolution=all"}, args...)
				wantOut, wantErr, err := hg.Result(t, dir, append(args, fmt.Sprintf("hg%d", i))...)
				wantCode := 0
				if err != nil {
					wantCode, _ = exitCode(err)
				}
				if !bytes.Contains(wantErr, []byte("1 new orphan changesets\n")) {
					t.Errorf("%v: hg reports no orphan:\n%s", args, wantErr)
				}
				if args[len(args)-1] == bundled && !bytes.Contains(wantOut, []byte("finished applying clone bundle\n")) {
					t.Errorf("%v: hg did not use the clone bundle:\n%s", args, wantOut)
				}
				gotOut, gotErr, gotCode := hgfsIn(dir, append(args, fmt.Sprintf("hgfs%d", i))...)
				// A stream's transfer line varies.
				stableOut := stableCloneOutput(string(wantOut))
				gotOut = stableCloneOutput(gotOut)
				if gotCode != wantCode || gotOut != stableOut || gotErr != string(wantErr) {
					t.Errorf("%v: exit %d, hg %d\n%s\n%s", args, gotCode, wantCode,
						testenv.Diff("hg stdout", stableOut, "hgfs stdout", gotOut),
						testenv.Diff("hg stderr", string(wantErr), "hgfs stderr", gotErr))
				}
			}
		})
	}
}
