//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hgfs/hgfs/internal/hggen"
)

// Serving stream clones: hgfs serve against hg serve on the same
// repository, both running for the whole bench process (killed with it:
// Pdeathsig). As in Mercurial's own measurement of its stream clone
// server, the client is curl writing to /dev/null, so only the server's
// work differs between the sides: the timed command is a small shell
// script that reads the server's CPU time (utime+stime from /proc) around
// one curl download and prints "bytes seconds server-cpu-ticks"; Check
// logs MB/s and server CPU per GiB for both sides and requires the same
// byte count (the responses are byte-identical, see wireproto's tests).
//
// Cases:
//   - stream_out (v1), and the getbundle request hg 6.3 sends for a
//     stream clone (bundle2 stream2, uncompressed 0.2 media type);
//   - real `hg clone --stream -U` from each server;
//   - hgfs serve's stream_out against `cat` of the same store files to
//     /dev/null (the cost of reading the bytes at all).

type serveFixture struct {
	repo     string
	hgfsURL  string
	hgfsPid  int
	hgURL    string
	hgPid    int
	heads    string
	fileList string // file naming the store's revlogs, one per line
}

// serveRepos are the repositories served: many small files (the per-file
// cost, make bench's large repository) and few large ones (the per-byte
// cost, as in Mercurial's own measurement on a large store).
var serveRepos = map[string]func() (string, hggen.Spec){
	"many files": func() (string, hggen.Spec) {
		return fmt.Sprintf("large-%d", largeFiles), hggen.Large(largeFiles)
	},
	"large files": func() (string, hggen.Spec) {
		return "serve-bigfiles-100x1M", hggen.Spec{Files: 100, FileSize: 1 << 20, NoCheckout: true, Seed: 3}
	},
}

var (
	serveMu  sync.Mutex
	serveFix = map[string]*serveFixture{}
)

func init() {
	for _, kind := range []string{"large files", "many files"} {
		registerServe(kind)
	}
}

func registerServe(kind string) {
	serveSetup := func(ctx context.Context, env *Env) (any, error) {
		serveMu.Lock()
		defer serveMu.Unlock()
		key := kind + "\x00" + env.Tune // an hgfs serve per HGFS_TUNE (-tune)
		if f := serveFix[key]; f != nil {
			return f, nil
		}
		name, spec := serveRepos[kind]()
		f, err := startServers(ctx, env, name, spec)
		if err != nil {
			return nil, err
		}
		serveFix[key] = f
		return f, nil
	}
	sfx := " (" + kind + ")"
	register(&Case{Name: "serve stream_out, curl" + sfx, Goal: 0.2, Setup: serveSetup,
		Hgfs: func(env *Env, d any) *exec.Cmd {
			f := d.(*serveFixture)
			return curlCmd(f.hgfsPid, f.hgfsURL+"?cmd=stream_out", nil)
		},
		Peer: func(env *Env, d any) *exec.Cmd {
			f := d.(*serveFixture)
			return curlCmd(f.hgPid, f.hgURL+"?cmd=stream_out", nil)
		},
		Check: reportTransfer("stream_out")})
	register(&Case{Name: "serve getbundle stream v2, curl" + sfx, Goal: 0.2, Setup: serveSetup,
		Hgfs: func(env *Env, d any) *exec.Cmd {
			f := d.(*serveFixture)
			return curlCmd(f.hgfsPid, f.hgfsURL+"?cmd=getbundle", getbundleHeaders(f.heads))
		},
		Peer: func(env *Env, d any) *exec.Cmd {
			f := d.(*serveFixture)
			return curlCmd(f.hgPid, f.hgURL+"?cmd=getbundle", getbundleHeaders(f.heads))
		},
		Check: reportTransfer("getbundle")})
	register(&Case{Name: "hg clone --stream from serve" + sfx, Setup: serveSetup,
		Hgfs: func(env *Env, d any) *exec.Cmd { return cloneCmd(env, d.(*serveFixture).hgfsURL) },
		Peer: func(env *Env, d any) *exec.Cmd { return cloneCmd(env, d.(*serveFixture).hgURL) }})
	register(&Case{Name: "serve stream_out vs cat of the store" + sfx, Goal: 2, Setup: serveSetup,
		Hgfs: func(env *Env, d any) *exec.Cmd {
			f := d.(*serveFixture)
			return curlCmd(f.hgfsPid, f.hgfsURL+"?cmd=stream_out", nil)
		},
		Peer: func(env *Env, d any) *exec.Cmd {
			return exec.Command("sh", "-c", `tr '\n' '\0' < "$1" | xargs -0 cat > /dev/null`, "sh", d.(*serveFixture).fileList)
		}})
}

// curlCmd downloads url with curl, measuring the server's CPU around it.
func curlCmd(pid int, url string, headers []string) *exec.Cmd {
	const script = `pid=$1; url=$2; shift 2
cpu() { awk '{print $14+$15}' /proc/$pid/stat; }
a=$(cpu)
out=$(curl -sS -f -o /dev/null -w '%{size_download} %{time_total}' "$@" "$url") || exit 1
b=$(cpu)
echo "$out $((b-a))"`
	args := []string{"-c", script, "sh", strconv.Itoa(pid), url}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	return exec.Command("sh", args...)
}

// getbundleHeaders are the arguments hg 6.3 sends for `hg clone --stream`
// (as seen with --debug), in one X-HgArg header as a server with a large
// httpheader limit accepts. Both servers get the same request.
func getbundleHeaders(heads string) []string {
	caps := "HG20%2Cbundle2%3DHG20%250Abookmarks%250Achangegroup%253D01%252C02%250Adigests%253Dmd5%252Csha1%252Csha512" +
		"%250Aerror%253Dabort%252Cunsupportedcontent%252Cpushraced%252Cpushkey%250Ahgtagsfnodes%250Alistkeys" +
		"%250Aphases%253Dheads%250Apushkey%250Aremote-changegroup%253Dhttp%252Chttps%250Astream%253Dv2"
	args := "bookmarks=1&bundlecaps=" + caps + "&cg=0&common=0000000000000000000000000000000000000000&heads=" +
		strings.ReplaceAll(heads, " ", "+") + "&listkeys=bookmarks&stream=1"
	return []string{"X-HgArg-1: " + args, "X-HgProto-1: 0.1 0.2 comp=zstd,zlib,none"}
}

// serveClones counts the clones cloneCmd made: each goes to a new
// directory, deleted only after the last case (see trash.go).
var serveClones int

// serveClonesDir holds cloneCmd's clones.
func serveClonesDir(env *Env) string { return filepath.Join(env.Cache, "work", "serve-clones") }

// cloneCmd is a real `hg clone --stream -U` from url into a new
// directory. The sync keeps the previous runs' writeback out of the
// timed run.
func cloneCmd(env *Env, url string) *exec.Cmd {
	serveClones++
	dir := serveClonesDir(env)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return failCmd(err)
	}
	if err := exec.Command("sync").Run(); err != nil {
		return failCmd(err)
	}
	c := exec.Command(env.Hg, "clone", "-q", "-U", "--stream", url, filepath.Join(dir, strconv.Itoa(serveClones)))
	c.Env = env.HgEnv
	return c
}

var transferRe = regexp.MustCompile(`^(\d+) ([0-9.]+) (\d+)\n?$`)

// reportTransfer checks both sides sent the same bytes and logs MB/s and
// server CPU.
func reportTransfer(what string) func(h, p []byte) error {
	return func(h, p []byte) error {
		hm, pm := transferRe.FindSubmatch(h), transferRe.FindSubmatch(p)
		if hm == nil || pm == nil {
			return fmt.Errorf("%s: unexpected measurement output %q / %q", what, h, p)
		}
		if string(hm[1]) != string(pm[1]) {
			return fmt.Errorf("%s: hgfs sent %s bytes, hg %s", what, hm[1], pm[1])
		}
		line := func(m [][]byte) string {
			bytes, _ := strconv.ParseFloat(string(m[1]), 64)
			secs, _ := strconv.ParseFloat(string(m[2]), 64)
			ticks, _ := strconv.ParseFloat(string(m[3]), 64)
			cpu := ticks / 100 // USER_HZ
			return fmt.Sprintf("%.0f MB/s, server CPU %.2fs (%.2f s/GiB)", bytes/secs/1e6, cpu, cpu/(bytes/(1<<30)))
		}
		fmt.Fprintf(os.Stderr, "    %s: hgfs serve %s; hg serve %s\n", what, line(hm), line(pm))
		return nil
	}
}

func startServers(ctx context.Context, env *Env, name string, spec hggen.Spec) (*serveFixture, error) {
	repo, err := cachedRepo(ctx, env, name, spec)
	if err != nil {
		return nil, err
	}
	f := &serveFixture{repo: repo}
	// Store files for the cat side, listed once.
	var list []string
	err = filepath.Walk(filepath.Join(repo, ".hg", "store"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && (strings.HasSuffix(p, ".i") || strings.HasSuffix(p, ".d")) {
			list = append(list, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	f.fileList = filepath.Join(env.Cache, name+".store-files")
	if err := os.WriteFile(f.fileList, []byte(strings.Join(list, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	heads, err := exec.Command(env.Hg, "-R", repo, "heads", "-T", "{node} ").Output()
	if err != nil {
		return nil, fmt.Errorf("hg heads: %w", err)
	}
	f.heads = strings.TrimSpace(string(heads))
	hgfsCmd := exec.Command(env.Hgfs, "serve", "-R", repo, "-p", "0")
	if f.hgfsURL, err = startServer(env, hgfsCmd); err != nil {
		return nil, err
	}
	f.hgfsPid = hgfsCmd.Process.Pid
	hgCmd := exec.Command(env.Hg, "serve", "-R", repo, "-a", "127.0.0.1", "-p", "0", "--print-url",
		"-A", "/dev/null", "-E", "/dev/null")
	if f.hgURL, err = startServer(env, hgCmd); err != nil {
		return nil, err
	}
	f.hgPid = hgCmd.Process.Pid
	return f, nil
}

var listenPortRe = regexp.MustCompile(`:(\d+)/`)

// startServer starts a server command (hg serve --print-url or hgfs serve
// -p 0) that dies with the bench process, and returns its URL once it
// prints where it listens. Both print "localhost", which may resolve to
// ::1; they listen on 127.0.0.1 only.
func startServer(env *Env, cmd *exec.Cmd) (string, error) {
	cmd.Env = env.HgEnv
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	lines := make(chan string, 1)
	go func() {
		br := bufio.NewReader(out)
		l, _ := br.ReadString('\n')
		lines <- l
		io.Copy(io.Discard, br)
	}()
	select {
	case l := <-lines:
		if m := listenPortRe.FindStringSubmatch(l); m != nil {
			return "http://127.0.0.1:" + m[1] + "/", nil
		}
		cmd.Process.Kill()
		cmd.Wait()
		return "", fmt.Errorf("%s printed %q", cmd, l)
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		return "", fmt.Errorf("%s did not start", cmd)
	}
}
