package s3bundles

// The helper. hgfs reaches the object store through a second program,
// hgfs-s3 (cmd/hgfs-s3, package s3client), as git reaches https through
// git-remote-https: minio-go and what it brings (its s3utils regexps,
// klauspost/cpuid's CPUID probes, which trap to the hypervisor in a
// virtual machine, rs/xid, yaml) run their initializers in every process
// that links them, whatever the command. In hgfs that was 2.6 ms of CPU
// in each `hgfs update` at tip on a mount (perf, 40 runs), and without
// them the command took 12.4-13.2 ms against 15.3-16.9 (perf stat, 80
// runs each, alternated) with about 170 fewer page faults. Only the two
// commands that talk to a store pay for the helper's start instead.
//
// The protocol: hgfs starts the helper with a Request as JSON on its
// stdin. The helper writes what the operation produces to stdout (a
// refresh's status lines; a get's object bytes), and on failure exits
// non-zero with the error's text on stderr, after writing nothing for a
// failure before the object's first byte.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// HelperName is the helper's command; HelperEnv, when set, names the
// helper to run instead of the one beside the running executable (or,
// failing that, on PATH).
const (
	HelperName = "hgfs-s3"
	HelperEnv  = "HGFS_S3_HELPER"
)

// Operations of a Request.
const (
	// OpCheck opens the store and checks its bucket (Config, Target).
	OpCheck = "check"
	// OpRefresh checks the bucket, then runs Refresh (Config, Target,
	// HgDir, Bundles, Heads), its status lines on stdout.
	OpRefresh = "refresh"
	// OpGet writes the object s3://BUCKET/KEY (Target, its Prefix the
	// key) to stdout.
	OpGet = "get"
)

// Request is what hgfs asks of the helper.
type Request struct {
	Op      string
	Config  Config
	Target  Target
	HgDir   string   `json:",omitempty"`
	Bundles []Bundle `json:",omitempty"`
	Heads   []string `json:",omitempty"`
}

// MaxRequest bounds the request the helper reads.
const MaxRequest = 1 << 20

// HelperPath is the helper hgfs runs: $HGFS_S3_HELPER, else hgfs-s3
// beside the running executable, else hgfs-s3 on PATH.
func HelperPath() (string, error) {
	if p := os.Getenv(HelperEnv); p != "" {
		return p, nil
	}
	name := HelperName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(HelperName); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("hgfs talks to S3 through its helper %s, which is neither beside hgfs nor on PATH (install it from cmd/%s, or name it in %s)", name, HelperName, HelperEnv)
}

// helper is one run of the helper.
type helper struct {
	cmd    *exec.Cmd
	stdout io.ReadCloser
	stderr *headBuffer
	ctx    context.Context
}

// startHelper starts the helper on req. ctx's end interrupts it, as a
// ^C would (so a refresh stops between its atomic writes), and kills it
// if it has not exited 10 seconds later.
func startHelper(ctx context.Context, req Request) (*helper, error) {
	path, err := HelperPath()
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, path)
	cmd.Stdin = bytes.NewReader(data)
	h := &helper{cmd: cmd, stderr: &headBuffer{max: 64 << 10}, ctx: ctx}
	cmd.Stderr = h.stderr
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			// Windows delivers no interrupt to another process.
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = 10 * time.Second
	if h.stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("running the S3 helper: %w", err)
	}
	return h, nil
}

// wait waits for the helper and words its failure: the text it wrote to
// stderr, or how it ended when it wrote none.
func (h *helper) wait() error {
	err := h.cmd.Wait()
	if err == nil {
		return nil
	}
	if h.ctx.Err() != nil {
		return h.ctx.Err()
	}
	if msg := strings.TrimSpace(h.stderr.String()); msg != "" {
		return errors.New(msg)
	}
	return fmt.Errorf("the S3 helper %s: %w", h.cmd.Path, err)
}

// RunRefresh runs req (OpCheck or OpRefresh) in the helper, passing each
// status line it writes to status (if not nil).
func RunRefresh(ctx context.Context, req Request, status func(line string)) error {
	h, err := startHelper(ctx, req)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(h.stdout)
	for sc.Scan() {
		if status != nil {
			status(sc.Text() + "\n")
		}
	}
	// Whatever stopped the scan (a line over 64 KiB), the helper's end
	// is what counts; the rest of its output is dropped.
	_, _ = io.Copy(io.Discard, h.stdout)
	return h.wait()
}

// Fetch starts the download of the object s3://BUCKET/KEY (loc, as
// ParseTarget reads it: the prefix is the key) with cfg's endpoint and
// credentials. The first bytes are read here, so a store that does not
// answer, a refusal and a missing object are errors before anything is
// written. Reading the rest reports a download cut short as an error
// wrapping io.ErrUnexpectedEOF. Close stops the download.
func Fetch(ctx context.Context, cfg Config, loc Target) (io.ReadCloser, error) {
	if loc.Prefix == "" {
		return nil, fmt.Errorf("%s names no object", loc)
	}
	h, err := startHelper(ctx, Request{Op: OpGet, Config: cfg, Target: loc})
	if err != nil {
		return nil, err
	}
	return openFetch(h)
}

// openFetch waits for a get's first byte, or for the helper's end.
func openFetch(h *helper) (io.ReadCloser, error) {
	f := &fetch{h: h, r: bufio.NewReaderSize(h.stdout, 256<<10)}
	if _, err := f.r.Peek(1); err != nil {
		if werr := f.finish(); werr != nil {
			return nil, werr
		}
		if err != io.EOF {
			return nil, err
		}
	}
	return f, nil
}

// fetch is a download's body, read from the helper's stdout.
type fetch struct {
	h    *helper
	r    *bufio.Reader
	done bool
	err  error // the helper's end, once done
}

// finish waits for the helper once.
func (f *fetch) finish() error {
	if !f.done {
		f.done = true
		f.err = f.h.wait()
	}
	return f.err
}

func (f *fetch) Read(p []byte) (int, error) {
	if f.done && f.r.Buffered() == 0 {
		// The helper has ended and its stdout is closed.
		return 0, f.end()
	}
	n, err := f.r.Read(p)
	if err == io.EOF {
		f.finish()
		err = f.end()
	}
	return n, err
}

// end is what a read past the body's end returns: EOF, or the helper's
// failure as a download cut short.
func (f *fetch) end() error {
	if f.err != nil {
		return fmt.Errorf("%w (%w)", f.err, io.ErrUnexpectedEOF)
	}
	return io.EOF
}

// Close stops a download not read to its end.
func (f *fetch) Close() error {
	if !f.done {
		f.h.cmd.Process.Kill()
		f.finish()
	}
	return nil
}

// headBuffer keeps the first max bytes written to it (a helper's error
// text), dropping the rest.
type headBuffer struct {
	buf bytes.Buffer
	max int
}

func (b *headBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *headBuffer) String() string { return b.buf.String() }
