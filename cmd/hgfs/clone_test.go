package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

func TestClone(t *testing.T) {
	t.Parallel()
	testenv.HgPath(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	v1rc := filepath.Join(dir, "v1.rc")
	os.WriteFile(v1rc, []byte("[server]\nbundle2.stream = false\n"), 0o644)

	httpV2 := testenv.Serve(t, src)
	httpV1 := testenv.Serve(t, src, "--config", "server.bundle2.stream=false")
	ssh := fakeSSHScript(t, dir, "")
	sshV1 := fakeSSHScript(t, dir, v1rc)
	sshURL := "ssh://user@somehost:2222/" + src

	packed1 := filepath.Join(dir, "packed1.hg")
	testenv.Hg(t, src, "debugcreatestreamclonebundle", packed1)
	v2bundle := filepath.Join(dir, "v2.hg")
	testenv.Hg(t, src, "bundle", "-q", "-a", "-t", "none-v2;stream=v2", v2bundle)
	// With a phase-heads part after the stream.
	v2phases := filepath.Join(dir, "v2-phases.hg")
	testenv.Hg(t, src, "bundle", "-q", "-a", "-t", "none-v2;stream=v2;phases=1", v2phases)

	// Each case clones with hgfs and with real hg (the oracle) the same
	// way, and compares.
	type cloneCase struct {
		name      string
		hgfsArgs  []string
		oracle    func(dest string)
		announced bool // prints "N files to transfer" and "transferred"
		streaming bool // prints "streaming all changes"
	}
	hgClone := func(args ...string) func(string) {
		return func(dest string) {
			testenv.Hg(t, dir, append(append([]string{"clone", "-q", "-U", "--stream"}, args...), dest)...)
		}
	}
	hgApply := func(bundle string, cmd ...string) func(string) {
		return func(dest string) {
			testenv.Hg(t, dir, "init", dest)
			testenv.Hg(t, dest, append(cmd, bundle)...)
		}
	}
	cases := []cloneCase{
		{"http-v2", []string{"--stream", httpV2}, hgClone(httpV2), true, true},
		{"http-v1", []string{"--stream", httpV1}, hgClone(httpV1), true, true},
		{"ssh-v2", []string{"--stream", "--ssh", ssh, sshURL}, hgClone("--ssh", ssh, sshURL), true, true},
		{"ssh-v1", []string{"--stream", "-e", sshV1, "--remotecmd", "hg", sshURL}, hgClone("--ssh", sshV1, sshURL), true, true},
		{"local", []string{src}, hgClone(src), false, false},
		{"packed1", []string{packed1}, hgApply(packed1, "debugapplystreamclonebundle"), true, false},
		{"bundle-v2", []string{v2bundle}, hgApply(v2bundle, "unbundle", "-q"), true, false},
		{"bundle-v2-phases", []string{v2phases}, hgApply(v2phases, "unbundle", "-q"), true, false},
	}
	if srcLog := string(testenv.Hg(t, src, "log", "-r", "all()", "-T", "{rev} {phase} {bookmarks}\n")); srcLog != "0 public feature\n1 public main\n2 draft \n" {
		t.Fatalf("fixture:\n%s", srcLog)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dest := filepath.Join(dir, "hgfs-"+tc.name)
			stdout, stderr, code := hgfsClone(t, dir, append(tc.hgfsArgs, dest, "-U")...)
			if code != 0 {
				t.Fatalf("hgfs clone: exit %d\n%s%s", code, stdout, stderr)
			}
			if strings.Contains(stdout, "streaming all changes\n") != tc.streaming {
				t.Errorf("streaming line: %q", stdout)
			}
			if strings.Contains(stdout, " files to transfer, ") != tc.announced || strings.Contains(stdout, "\ntransferred ") != tc.announced {
				t.Errorf("transfer lines: %q", stdout)
			}
			oracle := filepath.Join(dir, "hg-"+tc.name)
			tc.oracle(oracle)
			got, want := repoState(t, dest, true), repoState(t, oracle, false)
			if got != want {
				t.Errorf("clone differs from hg's:\n%s", testenv.Diff("hg", want, "hgfs", got))
			}
			// The default path, as hg records it.
			hgrc, err := os.ReadFile(filepath.Join(dest, ".hg", "hgrc"))
			if err != nil {
				t.Fatal(err)
			}
			source := tc.hgfsArgs[len(tc.hgfsArgs)-1]
			if !strings.Contains(string(hgrc), "[paths]\ndefault = "+source+"\n") {
				t.Errorf("hgrc:\n%s", hgrc)
			}
			// Phases and bookmarks as on the source, checked directly (the
			// oracle could be wrong the same way): the v2 stream from a
			// non-publishing server and the local copy keep the draft; the
			// v1 protocol cannot (hg's clone makes everything public).
			// Stream bundles carry no bookmarks.
			wantBooks := 2
			if tc.name == "packed1" || strings.HasPrefix(tc.name, "bundle-v2") {
				wantBooks = 0
			}
			if n := strings.Count(got, "\nbookmark:    "); n != wantBooks {
				t.Errorf("%d bookmarks in\n%s", n, got)
			}
			wantDraft := tc.name != "http-v1" && tc.name != "ssh-v1" && tc.name != "packed1"
			if strings.Contains(got, "\nphase:       draft\n") != wantDraft {
				t.Errorf("draft phase kept = %v, want %v", !wantDraft, wantDraft)
			}
			if _, err := os.Stat(filepath.Join(dest, ".hg.partial")); err == nil {
				t.Error("staging directory left behind")
			}
		})
	}

	t.Run("default-dest", func(t *testing.T) {
		cwd := filepath.Join(dir, "cwd")
		os.Mkdir(cwd, 0o755)
		stdout, stderr, code := hgfsClone(t, cwd, httpV2+"/")
		// http://127.0.0.1:port/ has no path: no default name.
		if code != 255 || stderr != "abort: empty destination path is not valid\n" {
			t.Errorf("no path: %d %q %q", code, stdout, stderr)
		}
		stdout, stderr, code = hgfsClone(t, cwd, src)
		if code != 0 || !strings.HasPrefix(stdout, "destination directory: src\n") {
			t.Fatalf("local default dest: %d %q %q", code, stdout, stderr)
		}
		if !strings.Contains(stdout, "updating to branch default\n") || !strings.Contains(stdout, " files updated, 0 files merged, 0 files removed, 0 files unresolved\n") {
			t.Errorf("no checkout: %q", stdout)
		}
		testenv.Hg(t, filepath.Join(cwd, "src"), "verify", "-q")
		if st := testenv.Hg(t, filepath.Join(cwd, "src"), "status"); len(st) != 0 {
			t.Errorf("hg status after the clone: %s", st)
		}
	})

	t.Run("errors", func(t *testing.T) {
		noStream := testenv.Serve(t, src, "--config", "server.uncompressed=false")
		occupied := filepath.Join(dir, "occupied")
		os.MkdirAll(filepath.Join(occupied, "x"), 0o755)
		aFile := filepath.Join(dir, "afile")
		os.WriteFile(aFile, []byte("not a bundle at all\n"), 0o644)
		emptyDir := filepath.Join(dir, "empty")
		os.Mkdir(emptyDir, 0o755)
		truncated := filepath.Join(dir, "truncated.hg")
		data, _ := os.ReadFile(v2bundle)
		os.WriteFile(truncated, data[:len(data)*2/3], 0o644)

		// A server that does not stream: --stream warns, as hg does, and
		// the clone applies changegroups instead.
		stdout, stderr, code := hgfsClone(t, dir, "--stream", "-U", noStream, filepath.Join(dir, "d1"))
		if code != 0 || stderr != "warning: stream clone requested but server has them disabled\n" || !strings.Contains(stdout, "adding changesets\n") {
			t.Errorf("--stream from a server without streaming: exit %d\n%s%s", code, stdout, stderr)
		}

		for _, tc := range []struct {
			name   string
			args   []string
			dest   string
			stderr string // exact, or prefix when ending in "..."
		}{
			{"404", []string{httpV2 + "nosuchrepo"}, "d2", "abort: HTTP Error 404: Not Found\n"},
			{"refused", []string{"http://127.0.0.1:1/repo"}, "d3", "abort: error: Connection refused\n"},
			{"not-empty", []string{src}, occupied, "abort: destination '" + occupied + "' is not empty\n"},
			{"dest-is-file", []string{src}, aFile, "abort: destination '" + aFile + "' already exists\n"},
			{"missing-source", []string{filepath.Join(dir, "nope")}, "d4", "abort: repository " + filepath.Join(dir, "nope") + " not found\n"},
			{"bad-bundle", []string{aFile}, "d5", "abort: " + aFile + ": not a Mercurial bundle\n"},
			{"truncated-bundle", []string{truncated}, emptyDir, "abort: reading 00changelog.i: malformed bundle2 data: stream ended unexpectedly..."},
			{"ssh-no-repo", []string{"--ssh", ssh, "ssh://h//nonexistent"}, "d6", "remote: abort: repository /nonexistent not found\nabort: no suitable response from remote hg\n"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				dest := tc.dest
				if !filepath.IsAbs(dest) {
					dest = filepath.Join(dir, dest)
				}
				before, _ := os.ReadDir(dest)
				stdout, stderr, code := hgfsClone(t, dir, append(tc.args, dest)...)
				if code != 255 {
					t.Errorf("exit %d, want 255\n%s%s", code, stdout, stderr)
				}
				if want, prefix := strings.CutSuffix(tc.stderr, "..."); prefix {
					if !strings.HasPrefix(stderr, want) {
						t.Errorf("stderr %q, want prefix %q", stderr, want)
					}
				} else if stderr != tc.stderr {
					t.Errorf("stderr %q\nwant   %q", stderr, tc.stderr)
				}
				after, err := os.ReadDir(dest)
				if before == nil && err == nil && tc.dest != aFile {
					t.Errorf("destination %s created: %v", dest, after)
				}
				if len(before) != len(after) {
					t.Errorf("destination changed: %v -> %v", before, after)
				}
			})
		}
	})
}
