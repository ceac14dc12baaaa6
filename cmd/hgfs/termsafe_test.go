package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/bundle2"
)

func TestTermSafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n":             "plain text\n",
		"tab\tand newline\n":       "tab\tand newline\n",
		"crlf line\r\n":            "crlf line\r\n",
		"lone\rcr":                 `lone\x0dcr`,
		"cr at end\r":              `cr at end\x0d`,
		"\x1b]52;c;aGk=\x07":       `\x1b]52;c;aGk=\x07`,
		"\x1b[2J clear":            `\x1b[2J clear`,
		"del\x7f":                  `del\x7f`,
		"nul\x00":                  `nul\x00`,
		"c1 csi \u009b31m":         `c1 csi \u009b31m`,
		"raw csi byte \x9b31m":     `raw csi byte \x9b31m`,
		"latin-1 é and \xe9 stays": "latin-1 é and \xe9 stays",
		"ünïcödé ✓\n":              "ünïcödé ✓\n",
		"\u00a0nbsp stays":         "\u00a0nbsp stays",
	} {
		if got := termSafe(in); got != want {
			t.Errorf("termSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCloneServerTerminalEscapes: a server's output part and its abort
// message and hint reach the terminal with their control characters
// escaped.
func TestCloneServerTerminalEscapes(t *testing.T) {
	url := serveGetbundle(t, func(bw *bundle2.Writer) error {
		if err := bw.WritePart("output", false, nil, nil, []byte("hello \x1b]52;c;aGk=\x07there\n")); err != nil {
			return err
		}
		return bw.WritePart("error:abort", true, []bundle2.Param{{Name: "message", Value: "no\x1b[2J"}},
			[]bundle2.Param{{Name: "hint", Value: "try \rlater"}}, nil)
	})
	dir := t.TempDir()
	stdout, stderr, code := hgfsClone(t, dir, "--stream", url, filepath.Join(dir, "d"))
	if code != 255 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if strings.ContainsAny(stdout+stderr, "\x1b\x07\r") {
		t.Errorf("control characters reached the terminal:\n%q\n%q", stdout, stderr)
	}
	if !strings.Contains(stdout, `remote: hello \x1b]52;c;aGk=\x07there`) {
		t.Errorf("output part not shown escaped: %q", stdout)
	}
	want := `remote: abort: no\x1b[2J` + "\nabort: pull failed on remote\n" + `(try \x0dlater)` + "\n"
	if stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "d")); !os.IsNotExist(err) {
		t.Errorf("destination left behind: %v", err)
	}
}

// TestServeLogEscapes: the server's log writer escapes what it is given
// and reports the whole line written.
func TestServeLogEscapes(t *testing.T) {
	var b bytes.Buffer
	w := &syncWriter{w: &b}
	line := "GET /\x1b[2J\r\n"
	if n, err := w.Write([]byte(line)); n != len(line) || err != nil {
		t.Fatalf("Write: %d %v", n, err)
	}
	if got := b.String(); got != "GET /\\x1b[2J\r\n" {
		t.Errorf("logged %q", got)
	}
}
