package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/testenv"
)

// TestClonePhaseHeadsTruncated: a stream bundle whose phase-heads part
// (hg bundle -t 'none-v2;stream=v2;phases=1') lost its last byte is
// refused by hg unbundle ("bad phase-heads stream") and by hgfs clone,
// which leaves nothing behind.
func TestClonePhaseHeadsTruncated(t *testing.T) {
	testenv.HgPath(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	good := filepath.Join(dir, "good.hg")
	testenv.Hg(t, src, "bundle", "-q", "-a", "-t", "none-v2;stream=v2;phases=1", good)

	// Rewrite the bundle part by part, cutting one byte off phase-heads.
	cut := false
	bad := rewriteBundles(t, filepath.Join(dir, "bad.hg"), func(p *bundle2.Part, data []byte) []byte {
		if p.Type != "phase-heads" {
			return data
		}
		if len(data) == 0 || len(data)%24 != 0 {
			t.Fatalf("hg's phase-heads part has %d bytes", len(data))
		}
		cut = true
		return data[:len(data)-1]
	}, good)
	if !cut {
		t.Fatal("hg's bundle has no phase-heads part")
	}

	testenv.Hg(t, dir, "init", "oracle")
	_, hgErr, err := testenv.HgResult(t, filepath.Join(dir, "oracle"), "unbundle", "-q", bad)
	if err == nil || !strings.Contains(string(hgErr), "abort: bad phase-heads stream") {
		t.Fatalf("hg unbundle of the cut bundle: %v\n%s", err, hgErr)
	}
	dest := filepath.Join(dir, "dest")
	stdout, stderr, code := hgfsClone(t, dir, bad, dest)
	if code != 255 || !strings.Contains(stderr, "bad phase-heads stream") {
		t.Fatalf("hgfs clone of the cut bundle: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("destination left behind: %v", err)
	}
	// hg's own bundle goes through: the cut is what is refused.
	if stdout, stderr, code := hgfsClone(t, dir, good, filepath.Join(dir, "dest-good"), "-U"); code != 0 {
		t.Fatalf("hgfs clone of hg's bundle: exit %d\n%s%s", code, stdout, stderr)
	}
}

// localCloneSources makes the sources of TestCloneLocalPhases with real
// hg: publishing (the default) and not, each with and without a secret
// changeset; one whose secret changeset introduced a file revision that a
// later draft changeset carries too (the pull must send it linked to the
// draft); and a publishing one with a hidden (obsolete) changeset.
func localCloneSources(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	mk := func(name string, publish bool, build func(hg func(...string), write func(string, string))) {
		repo := filepath.Join(dir, name)
		testenv.Hg(t, dir, "init", name)
		if !publish {
			os.WriteFile(filepath.Join(repo, ".hg", "hgrc"), []byte("[phases]\npublish = false\n"), 0o644)
		}
		hg := func(args ...string) { testenv.Hg(t, repo, args...) }
		write := func(f, content string) {
			if err := os.WriteFile(filepath.Join(repo, f), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("a", "a\n")
		hg("commit", "-qAm", "a")
		write("b", "b\n")
		hg("commit", "-qAm", "b")
		hg("phase", "--public", "-r", "0")
		hg("bookmark", "-r", "1", "onb")
		write("c", "c\n")
		hg("commit", "-qAm", "c")
		if build != nil {
			build(hg, write)
		}
		names = append(names, name)
	}
	secret := func(hg func(...string), write func(string, string)) {
		write("d", "d\n")
		hg("commit", "-qAm", "d", "--secret")
		hg("bookmark", "-r", ".", "onsecret")
	}
	for _, publish := range []bool{true, false} {
		suffix := "-pub"
		if !publish {
			suffix = "-nopub"
		}
		mk("plain"+suffix, publish, nil)
		mk("secret"+suffix, publish, secret)
	}
	// The secret sibling commits f first; the draft one's f is the same
	// file revision (same text, no parents), linked to the secret one.
	mk("carried-nopub", false, func(hg func(...string), write func(string, string)) {
		write("f", "same\n")
		hg("commit", "-qAm", "secret f", "--secret")
		hg("update", "-q", "1")
		write("f", "same\n")
		hg("commit", "-qAm", "draft f")
	})
	// Nothing but a secret changeset: nothing to pull.
	hg := func(repo string, args ...string) { testenv.Hg(t, repo, args...) }
	allSecret := filepath.Join(dir, "allsecret-pub")
	hg(dir, "init", allSecret)
	os.WriteFile(filepath.Join(allSecret, "a"), []byte("a\n"), 0o644)
	hg(allSecret, "commit", "-qAm", "a", "--secret")
	names = append(names, "allsecret-pub")
	mk("hidden-pub", true, func(hg func(...string), write func(string, string)) {
		write("c", "c amended\n")
		hg("commit", "-q", "--amend", "-m", "c amended", "--config", "experimental.evolution.createmarkers=true")
	})
	return names
}

// TestCloneLocalPhases: a local clone, copied or pulled, leaves phases,
// secret and hidden changesets and bookmarks as hg's clone of the same
// source does, with each Mercurial and each of the plain, --stream and
// --pull variants: a publishing source's clone is all public (the copy
// leaves out phaseroots), a source with secret changesets or a
// publishing one with hidden changesets is pulled (no secret, no hidden
// changeset, no bookmark on one), with hg's messages.
func TestCloneLocalPhases(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hgs := testenv.Mercurials(t)
	sources := localCloneSources(t, dir)
	// state is what a clone must agree on; only hgfs's clone is verified
	// (hg's own clones are the oracle).
	state := func(repo string, verify bool) string {
		if verify {
			testenv.Hg(t, repo, "verify", "-q")
		}
		out := string(testenv.Hg(t, repo, "log", "--hidden", "-T", "{rev} {phase} {node} {bookmarks}\n"))
		if strings.Contains(repo, "hidden") {
			out += string(testenv.Hg(t, repo, "debugobsolete"))
		}
		return out
	}
	for _, src := range sources {
		for _, variant := range []string{"", "--stream", "--pull"} {
			args := []string{"-U"}
			if variant != "" {
				args = append(args, variant)
			}
			t.Run(src+variant, func(t *testing.T) {
				srcPath := filepath.Join(dir, src)
				dest := filepath.Join(dir, "hgfs-"+src+variant)
				stdout, stderr, code := hgfsClone(t, dir, append(args, srcPath, dest)...)
				if code != 0 {
					t.Fatalf("hgfs clone: exit %d\n%s%s", code, stdout, stderr)
				}
				got := state(dest, true)
				if strings.Contains(src, "pub") && !strings.Contains(src, "nopub") && strings.Contains(got, " draft ") {
					t.Errorf("a publishing source's clone has drafts:\n%s", got)
				}
				if strings.Contains(got, " secret ") || strings.Contains(got, "onsecret") {
					t.Errorf("secret changesets or their bookmarks were cloned:\n%s", got)
				}
				for _, hg := range hgs {
					oracle := filepath.Join(dir, hg.Name+"-"+src+variant)
					o, e, err := hg.Result(t, dir, append(append([]string{"clone"}, args...), srcPath, oracle)...)
					if err != nil {
						t.Fatalf("%s clone: %v\n%s%s", hg.Name, err, o, e)
					}
					gotOut := stdout
					// hg warns about markers whenever it reads an obsstore
					// without evolution enabled (worded differently by 6.3
					// and 7.2); hgfs, which reads them in every command, never.
					e = regexp.MustCompile(`(?m)^"?obsolete"? feature not enabled but \d+ markers found!\n`).ReplaceAll(e, nil)
					if gotOut != string(o) || stderr != string(e) {
						t.Errorf("output differs from %s's:\n%s", hg.Name, testenv.Diff(hg.Name, string(o)+string(e), "hgfs", gotOut+stderr))
					}
					if want := state(oracle, false); got != want {
						t.Errorf("clone differs from %s's:\n%s", hg.Name, testenv.Diff(hg.Name, want, "hgfs", got))
					}
				}
			})
		}
	}
}
