package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
	"github.com/hgfs/hgfs/wireproto"
)

// giveAway makes path belong to the system's nobody user and its group
// (the test runs as root) and returns the group's name.
func giveAway(t *testing.T, path string) string {
	t.Helper()
	if os.Getuid() != 0 {
		testenv.Missing(t, "root (the test gives a .hg/hgrc to another user)")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		t.Skipf("no group %s: %v", u.Gid, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
	return g.Name
}

// hgWithRC runs m with HGRCPATH=rc (HgEnv empties it) in dir.
func hgWithRC(t *testing.T, m testenv.Mercurial, rc, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.Path, testenv.HgArgs(dir, args...)...)
	cmd.Env = append(testenv.HgEnv(), "HGRCPATH="+rc) // the last one counts
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if err != nil {
		var ok bool
		if code, ok = exitCode(err); !ok {
			t.Fatalf("%s %s: %v", m.Name, strings.Join(args, " "), err)
		}
	}
	return o.String(), e.String(), code
}

// uniqueLines drops lines seen before. hg reads a repository's .hg/hgrc
// twice (once to look for extensions and aliases, once when it opens
// the repository) and so says each of its warnings twice; hgfs reads it
// once.
func uniqueLines(s string) string {
	seen := map[string]bool{}
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" && !seen[l] {
			seen[l] = true
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestUntrustedRepoConfig: a repository whose .hg/hgrc belongs to another
// user names commands for ssh (ui.ssh through an %include, ui.remotecmd
// directly) that would leave marker files, and a [paths] default. hgfs
// pull, clone and config must ignore them and warn as hg 6.3 and hg 7
// do on the same repository; trusted by [trusted] users or groups (in an
// HGRCPATH file or --config), the values are used as hg uses them.
func TestUntrustedRepoConfig(t *testing.T) {
	hgs := testenv.Mercurials(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	// The ssh that hg and hgfs run when nothing else is configured: a
	// stand-in that runs the remote command here, outside the
	// repository (a remote hg must not read its .hg/hgrc).
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nwhile [ $# -gt 1 ]; do shift; done\ncd / && exec env HGRCPATH= HGPLAIN=1 sh -c \"$1\"\n"
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("HGRCPATH", "")

	sshMarker, remoteMarker := filepath.Join(dir, "ssh-ran"), filepath.Join(dir, "remotecmd-ran")
	url := "ssh://user@host/" + src
	os.WriteFile(filepath.Join(dir, "inc.rc"), []byte("[ui]\nssh = touch "+sshMarker+"; false\n"), 0o644)
	repo := filepath.Join(dir, "repo")
	testenv.Hg(t, dir, "clone", "-q", "-U", src, repo)
	hgrc := filepath.Join(repo, ".hg", "hgrc")
	text := "%include ../../inc.rc\n[ui]\nremotecmd = touch " + remoteMarker + "; hg\n[paths]\ndefault = " + url + "\n"
	os.WriteFile(hgrc, []byte(text), 0o644)
	group := giveAway(t, hgrc)

	ran := func(t *testing.T, who string) (ssh, remote bool) {
		t.Helper()
		for _, m := range []struct {
			p   string
			ran *bool
		}{{sshMarker, &ssh}, {remoteMarker, &remote}} {
			if _, err := os.Stat(m.p); err == nil {
				*m.ran = true
				os.Remove(m.p)
			}
		}
		return ssh, remote
	}
	type result struct {
		stdout, stderr string
		code           int
	}
	// compare runs args (made for a destination name) with each hg and
	// hgfs in the repository, HGRCPATH=rc, and checks hgfs against each;
	// wantSSH says whether the configured ssh command is to run.
	compare := func(t *testing.T, rc string, wantSSH bool, args func(who string) []string) {
		t.Helper()
		t.Setenv("HGRCPATH", rc)
		o, e, code := hgfsIn(repo, args("hgfs")...)
		got := result{o, e, code}
		if ssh, remote := ran(t, "hgfs"); ssh != wantSSH || remote {
			t.Errorf("hgfs ran ssh %v (want %v), remotecmd %v (want false)", ssh, wantSSH, remote)
		}
		for _, m := range hgs {
			o, e, code := hgWithRC(t, m, rc, repo, args(m.Name)...)
			want := result{o, uniqueLines(e), code}
			if ssh, remote := ran(t, m.Name); ssh != wantSSH || remote {
				t.Fatalf("%s ran ssh %v remotecmd %v: the test's premise is wrong\n%s%s", m.Name, ssh, remote, o, e)
			}
			if got != want {
				t.Errorf("hgfs and %s differ:\n%s", m.Name, testenv.Diff(m.Name, want.stdout+want.stderr+strconv.Itoa(want.code), "hgfs", got.stdout+got.stderr+strconv.Itoa(got.code)))
			}
		}
	}
	clone := func(name string) func(string) []string {
		return func(who string) []string {
			return []string{"clone", "-U", url, filepath.Join(dir, name+"-"+who)}
		}
	}
	fixed := func(args ...string) func(string) []string { return func(string) []string { return args } }

	t.Run("untrusted", func(t *testing.T) {
		for name, args := range map[string]func(string) []string{
			"pull":           fixed("pull", url),
			"pull-default":   fixed("pull"),
			"config-quiet":   fixed("config", "--config", "ui.report_untrusted=false", "ui.ssh"),
			"config":         fixed("config", "ui.ssh"),
			"config-u":       fixed("config", "-u", "ui.remotecmd"),
			"config-section": fixed("config", "paths"),
			"clone":          clone("untrusted"),
		} {
			t.Run(name, func(t *testing.T) { compare(t, "", false, args) })
		}
		// A parse error in a file not trusted is a warning, not an
		// abort; what came before it is in the untrusted view.
		t.Run("parse-error", func(t *testing.T) {
			os.WriteFile(hgrc, []byte(text+"this is not hgrc\n"), 0o644)
			defer os.WriteFile(hgrc, []byte(text), 0o644)
			compare(t, "", false, fixed("config", "-u", "paths.default"))
		})
	})
	t.Run("trusted", func(t *testing.T) {
		for name, rc := range map[string]string{"users": "users = nobody", "groups": "groups = " + group, "any": "users = *"} {
			p := filepath.Join(dir, name+".rc")
			os.WriteFile(p, []byte("[trusted]\n"+rc+"\n"), 0o644)
			t.Run(name, func(t *testing.T) {
				compare(t, p, true, fixed("pull", url))
				if name != "users" {
					return
				}
				compare(t, p, true, fixed("pull"))
				// clone takes no repository: hg does not use the one it
				// runs in, trusted or not.
				compare(t, p, false, clone("trusted"))
			})
		}
		t.Run("--config", func(t *testing.T) {
			compare(t, "", true, fixed("--config", "trusted.users=nobody", "pull", url))
		})
	})
}

// TestServeUntrustedRepoConfig: hg serve reads a repository's
// server.uncompressed and phases.publish even from a .hg/hgrc it does not
// trust (the repository's owner decides them), and not
// server.preferuncompressed; hgfs serve must advertise what hg's does.
func TestServeUntrustedRepoConfig(t *testing.T) {
	hgs := testenv.Mercurials(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	for i, text := range []string{
		"[server]\nuncompressed = false\n[phases]\npublish = true\n",
		"[server]\npreferuncompressed = true\n",
	} {
		repo := filepath.Join(dir, "repo"+strconv.Itoa(i))
		testenv.Hg(t, dir, "clone", "-q", "-U", src, repo)
		hgrc := filepath.Join(repo, ".hg", "hgrc")
		os.WriteFile(hgrc, []byte(text), 0o644)
		giveAway(t, hgrc)
		type view struct {
			stream, preferred bool
			phases            map[string]string
		}
		look := func(t *testing.T, url string) view {
			ctx := context.Background()
			p, err := wireproto.DialHTTP(ctx, url, wireproto.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			caps := p.Capabilities()
			ph, err := p.ListKeys(ctx, "phases")
			if err != nil {
				t.Fatal(err)
			}
			_, reqs := caps.Get("streamreqs")
			return view{caps.Has("stream") || reqs, caps.Has("stream-preferred"), ph}
		}
		hgfsURL, _, _ := startServeBinary(t, repo)
		got := look(t, hgfsURL)
		for _, m := range hgs {
			want := look(t, m.Serve(t, repo))
			if got.stream != want.stream || got.preferred != want.preferred || len(got.phases) != len(want.phases) || got.phases["publishing"] != want.phases["publishing"] {
				t.Errorf("%q: hgfs serve %+v, %s serve %+v", text, got, m.Name, want)
			}
		}
		if i == 0 && got.stream {
			t.Errorf("server.uncompressed = false from the repository's owner was ignored")
		}
	}
}
