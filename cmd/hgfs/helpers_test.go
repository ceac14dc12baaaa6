package main

// Helpers shared by the tests that compare what hgfs does with what real
// hg does: running hgfs in-process, fixtures, fake ssh, hgfs serve, and
// the state of a repository that two implementations must agree on.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

// hgfsIn runs the hgfs command line in-process with dir as working
// directory.
func hgfsIn(dir string, args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = run(append([]string{"--cwd", dir}, args...), strings.NewReader(""), &o, &e)
	return o.String(), e.String(), code
}

func hgfsClone(t *testing.T, cwd string, args ...string) (string, string, int) {
	t.Helper()
	var o, e bytes.Buffer
	code := run(append([]string{"--cwd", cwd, "clone"}, args...), strings.NewReader(""), &o, &e)
	return o.String(), e.String(), code
}

// cloneFixture is a small repository made with real hg: names with
// upper case and underscores (store encoding), two bookmarks, and one
// draft changeset in a non-publishing repository, so phases and bookmarks
// must survive the clone.
func cloneFixture(t *testing.T, dir string) string {
	t.Helper()
	repo := filepath.Join(dir, "src")
	testenv.Hg(t, dir, "init", "src")
	write := func(name, content string) {
		p := filepath.Join(repo, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".hg/hgrc", "[phases]\npublish = false\n")
	write("Upper/Case_File.txt", "one\n")
	write("under_score/x.txt", strings.Repeat("line\n", 200))
	testenv.Hg(t, repo, "commit", "-qAm", "first")
	write("Upper/Case_File.txt", "one\ntwo\n")
	write("README", "hello\n")
	testenv.Hg(t, repo, "commit", "-qAm", "second")
	testenv.Hg(t, repo, "bookmark", "-r", "0", "feature")
	testenv.Hg(t, repo, "bookmark", "-i", "main")
	testenv.Hg(t, repo, "phase", "--public", "-r", "1")
	write("under_score/x.txt", strings.Repeat("line\n", 201))
	testenv.Hg(t, repo, "commit", "-qm", "draft work")
	return repo
}

// fakeSSHScript writes a stand-in for ssh that ignores the host and runs
// the remote command locally, with hgrc as the remote hg's HGRCPATH.
func fakeSSHScript(t *testing.T, dir, hgrc string) string {
	p := filepath.Join(dir, "fakessh")
	if hgrc != "" {
		p += "-" + filepath.Base(hgrc)
	}
	script := "#!/bin/sh\nwhile [ $# -gt 1 ]; do shift; done\nexec env HGRCPATH=" + hgrc + " HGPLAIN=1 sh -c \"$1\"\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// repoState is what a clone must reproduce: every changeset as hg log
// --debug shows it (with phase and bookmarks) and the requirements; with
// verify, hg verify must pass.
func repoState(t *testing.T, repo string, verify bool) string {
	t.Helper()
	if verify {
		testenv.Hg(t, repo, "verify", "-q")
	}
	var b strings.Builder
	// --debug shows each changeset's phase and bookmarks too.
	b.Write(testenv.Hg(t, repo, "log", "--debug", "-r", "all()"))
	for _, f := range []string{".hg/requires", ".hg/store/requires"} {
		data, _ := os.ReadFile(filepath.Join(repo, f))
		b.WriteString(f + ":\n" + string(data))
	}
	return b.String()
}

var listeningRe = regexp.MustCompile(`^listening at http://[^/]+:(\d+)/ \(bound to 127\.0\.0\.1:(\d+)\)\n$`)

// startServeBinary runs `hgfs serve -p 0` from the built binary and
// returns the URL and the process; the test's cleanup stops it.
func startServeBinary(t *testing.T, repo string, args ...string) (string, *exec.Cmd, <-chan error) {
	t.Helper()
	url, cmd, result, failure := tryServeBinary(t, repo, args...)
	if failure != "" {
		t.Fatal(failure)
	}
	return url, cmd, result
}

// tryServeBinary is startServeBinary for a serve that may fail to start:
// it returns what went wrong instead of failing the test.
func tryServeBinary(t *testing.T, repo string, args ...string) (url string, cmd *exec.Cmd, result <-chan error, failure string) {
	t.Helper()
	cmd = exec.Command(testenv.Hgfs(t), append([]string{"serve", "-R", repo, "-p", "0"}, args...)...)
	cmd.Env = testenv.HgEnv()
	return tryServeCmd(t, cmd)
}

// tryServeCmd is tryServeBinary for cmd, an `hgfs serve -p 0` not yet
// started (hgfs.exe under Wine, say).
func tryServeCmd(t *testing.T, cmd *exec.Cmd) (url string, _ *exec.Cmd, result <-chan error, failure string) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	res := make(chan error, 1)
	go func() { res <- cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Error("hgfs serve did not stop on SIGTERM")
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	m := listeningRe.FindStringSubmatch(line)
	if err != nil || m == nil || m[1] != m[2] {
		// stderr is written until the process ends.
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		return "", cmd, res, fmt.Sprintf("hgfs serve printed %q (%v); stderr:\n%s", line, err, stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	return "http://127.0.0.1:" + m[1] + "/", cmd, res, ""
}

// hgConfig is the configuration every command of the differential
// suite runs with, hg's and hgfs's alike: obsolescence markers are made
// and exchanged (else hg ignores the markers a bundle or server
// carries), and hg without its Rust extensions opens persistent-nodemap
// repositories.
var hgConfig = []string{
	"--config", "experimental.evolution.createmarkers=true",
	"--config", "experimental.evolution.exchange=true",
	"--config", "storage.revlog.persistent-nodemap.slow-path=allow",
}

// hgConfigRC is hgConfig as an hgrc, for the hg at the far end of ssh.
const hgConfigRC = "[experimental]\nevolution.createmarkers = true\nevolution.exchange = true\n" +
	"[storage]\nrevlog.persistent-nodemap.slow-path = allow\n"

// oracle is one Mercurial that hgfs is compared with, running the many
// commands a comparison needs through one command server.
type oracle struct {
	testenv.Mercurial
	srv *testenv.HgServer
}

// startOracles starts a command server for each Mercurial the suite
// checks against (hg 6.3 first), stopped when t ends.
func startOracles(t *testing.T) []*oracle {
	t.Helper()
	var out []*oracle
	for _, m := range testenv.Mercurials(t) {
		out = append(out, &oracle{Mercurial: m, srv: m.StartServer(t, t.TempDir())})
	}
	return out
}

// result runs hg with hgConfig in dir (absolute: the command server
// keeps the working directory of the last command).
func (o *oracle) result(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	a := append(append([]string{"--cwd", dir}, hgConfig...), args...)
	out, errOut, code := o.srv.Run(t, a...)
	return string(out), string(errOut), code
}

// run is result for commands that must succeed.
func (o *oracle) run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, errOut, code := o.result(t, dir, args...)
	if code != 0 {
		t.Fatalf("%s %s (in %s): exit %d\n%s%s", o.Name, strings.Join(args, " "), dir, code, out, errOut)
	}
	return out
}

// hgfsRun runs hgfs in-process with hgConfig in dir.
func hgfsRun(dir string, args ...string) (stdout, stderr string, code int) {
	return hgfsIn(dir, append(append([]string{}, hgConfig...), args...)...)
}

// section is one named part of a repository's state.
type section struct{ name, text string }

// state is what two repositories holding the same history must agree on,
// as o reads it: every changeset (hidden ones too) as hg log --debug
// shows it, with phase, bookmarks, tags, branch and extras; the
// obsolescence markers; the requirements; and, for a persistent nodemap,
// whether it matches the index.
func (o *oracle) state(t *testing.T, repo string) []section {
	t.Helper()
	s := []section{
		{"log", o.run(t, repo, "log", "--debug", "--hidden", "-r", "all()")},
		{"debugobsolete", o.run(t, repo, "debugobsolete")},
	}
	var reqs string
	for _, f := range []string{".hg/requires", ".hg/store/requires"} {
		data, _ := os.ReadFile(filepath.Join(repo, f))
		reqs += f + ":\n" + string(data)
	}
	s = append(s, section{"requires", reqs})
	if strings.Contains(reqs, "\npersistent-nodemap\n") {
		// A stale nodemap fails the check: its output and status are
		// the section.
		out, errOut, code := o.result(t, repo, "debugnodemap", "--check")
		s = append(s, section{"debugnodemap --check", fmt.Sprintf("%s%sexit %d\n", out, errOut, code)})
	}
	return s
}

// verify fails t unless hg verify passes on repo and prints nothing with -q.
func (o *oracle) verify(t *testing.T, repo string) {
	t.Helper()
	out, errOut, code := o.result(t, repo, "verify", "-q")
	if code != 0 || out != "" || errOut != "" {
		t.Errorf("%s verify %s: exit %d\n%s%s", o.Name, repo, code, out, errOut)
	}
}

// stateCache keeps the states of the oracles' own repositories that many
// cases compare with (the real-history ones take seconds to read).
var stateCache sync.Map // oracle name + "\x00" + repo -> []section

func (o *oracle) cachedState(t *testing.T, repo string) []section {
	t.Helper()
	key := o.Name + "\x00" + repo
	if s, ok := stateCache.Load(key); ok {
		return s.([]section)
	}
	s := o.state(t, repo)
	stateCache.Store(key, s)
	return s
}

// result of one way of doing an operation.
type outcome struct {
	repo     string // the repository it wrote ("" if none)
	out, err string
	code     int
}

// compareOutcomes checks hgfs's outcome (got) against each oracle's
// (wants, in the order of ors): exit status and output, then with both
// successful, hg verify of hgfs's repository by every oracle and each
// section of the state. Where the Mercurials disagree with each other
// and hgfs does exactly as one of them does, the difference from the
// others is logged, not failed (hgfs follows hg 6.3 in most of them, hg
// 7 where it says more: its hint on an extstored revision without lfs).
func compareOutcomes(t *testing.T, ors []*oracle, wants []outcome, got outcome) {
	t.Helper()
	// followed reports whether hgfs differs from oracle i only as
	// another oracle does: what of j picks the compared text.
	followed := func(i int, what func(o outcome) string) bool {
		w, g := what(wants[i]), what(got)
		for j := range wants {
			if j != i && what(wants[j]) == g && what(wants[j]) != w {
				t.Logf("%s differs from %s, as hgfs does (hgfs follows %s):\n%s", ors[i].Name, ors[j].Name, ors[j].Name, testenv.Diff(ors[i].Name, w, "hgfs", g))
				return true
			}
		}
		return false
	}
	compared := make([]bool, len(ors))
	for i, o := range ors {
		w := wants[i]
		if w.code != got.code {
			if !followed(i, func(o outcome) string { return fmt.Sprint(o.code, "\n", o.err) }) {
				t.Errorf("exit status: %s %d, hgfs %d\n%s stdout:\n%s%s stderr:\n%shgfs stdout:\n%shgfs stderr:\n%s", o.Name, w.code, got.code, o.Name, w.out, o.Name, w.err, got.out, got.err)
			}
			continue
		}
		compared[i] = true
		for _, ch := range []struct {
			name string
			what func(o outcome) string
		}{{"stdout", func(o outcome) string { return o.out }}, {"stderr", func(o outcome) string { return o.err }}} {
			if ch.what(w) != ch.what(got) && !followed(i, ch.what) {
				t.Errorf("%s differs:\n%s", ch.name, testenv.Diff(o.Name, ch.what(w), "hgfs", ch.what(got)))
			}
		}
	}
	if got.code != 0 || got.repo == "" {
		return
	}
	// Every oracle verifies hgfs's repository; hg 6.3 reads the state of
	// each repository (hg 7's log --debug of the same repository is the
	// same, and a second reading of real history costs seconds).
	reader := ors[0]
	var ref, gs []section
	if compared[0] {
		ref = reader.cachedState(t, wants[0].repo)
	}
	for i, o := range ors {
		if !compared[i] {
			continue
		}
		if gs == nil {
			gs = reader.state(t, got.repo)
		}
		o.verify(t, got.repo)
		rd := reader
		if i > 0 {
			if _, errOut, code := reader.result(t, wants[i].repo, "log", "-r", "null", "-T", ""); code != 0 {
				// hg 7 wrote a format hg 6.3 cannot read (a stream
				// clone of a delta-info-revlog repository): hg 7 reads it.
				t.Logf("%s cannot read %s's repository; %s reads it:\n%s", reader.Name, o.Name, o.Name, errOut)
				rd = o
			}
		}
		ws := rd.cachedState(t, wants[i].repo)
		if names(ws) != names(gs) {
			t.Errorf("state has sections %s in %s's repository, %s in hgfs's", names(ws), o.Name, names(gs))
		}
		for _, w := range ws {
			g := sectionText(gs, w.name)
			if w.text == g {
				continue
			}
			d := testenv.Diff(o.Name+"'s repository", w.text, "hgfs's", g)
			if r := sectionText(ref, w.name); i > 0 && w.text != r && g == r {
				// hg 7 wrote something else than hg 6.3, and hgfs
				// wrote what hg 6.3 did.
				t.Logf("%s: %s's repository differs from %s's, as hgfs's does:\n%s", w.name, o.Name, ors[0].Name, d)
				continue
			}
			t.Errorf("%s differs from %s's:\n%s", w.name, o.Name, d)
		}
	}
	if _, err := os.Stat(filepath.Join(got.repo, ".hg", "store", "journal")); err == nil {
		t.Error("journal left behind in .hg/store")
	}
}

func sectionText(s []section, name string) string {
	for _, x := range s {
		if x.name == name {
			return x.text
		}
	}
	return ""
}

func names(s []section) string {
	var n []string
	for _, x := range s {
		n = append(n, x.name)
	}
	return strings.Join(n, ", ")
}

// sameStoreFiles compares the bytes of the store files of repo a and b
// whose store path match accepts, and reports each file that differs,
// is missing or is extra.
func sameStoreFiles(t *testing.T, nameA, a, nameB, b string, match func(rel string) bool) {
	t.Helper()
	fa, fb := storeFiles(t, a, match), storeFiles(t, b, match)
	var bad []string
	for k, va := range fa {
		vb, ok := fb[k]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s: only in %s", k, nameA))
		case va != vb:
			at := 0
			for at < len(va) && at < len(vb) && va[at] == vb[at] {
				at++
			}
			bad = append(bad, fmt.Sprintf("%s: %d bytes in %s, %d in %s, first difference at byte %d", k, len(va), nameA, len(vb), nameB, at))
		}
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			bad = append(bad, fmt.Sprintf("%s: only in %s", k, nameB))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		t.Errorf("store files differ:\n%s", strings.Join(bad, "\n"))
	}
}

// allFiles matches every store file, for storeFiles.
func allFiles(string) bool { return true }

// storeFiles maps the store path of each file of repo's store (.hg/store,
// or .hg for the oldest layout) that match accepts to its content.
func storeFiles(t *testing.T, repo string, match func(rel string) bool) map[string]string {
	t.Helper()
	root := filepath.Join(repo, ".hg", "store")
	if _, err := os.Stat(root); err != nil {
		root = filepath.Join(repo, ".hg")
	}
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if !match(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// revlogFile matches the revlogs of a store (index and data files), the
// files a stream or local clone copies as they are.
func revlogFile(rel string) bool {
	return (strings.HasPrefix(rel, "data/") || strings.HasPrefix(rel, "meta/") || strings.HasPrefix(rel, "dh/") ||
		strings.HasPrefix(rel, "00changelog.") || strings.HasPrefix(rel, "00manifest.")) &&
		(strings.HasSuffix(rel, ".i") || strings.HasSuffix(rel, ".d"))
}
