package worktree

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestWindowsNamesMatchHg: for the store-encoding names (reserved device
// names, trailing dots and spaces, reserved and control characters,
// non-ASCII) and checkwinfilename's own examples, the refusal hgfs makes
// on Windows is the one hg's code makes, word for word: the problem and
// the path as hg's "%r" shows it.
func TestWindowsNamesMatchHg(t *testing.T) {
	paths := append([]string{
		"just/a/normal/path", "foo/bar/con.xml", "foo/con.xml/bar", "foo/bar/xml.con",
		"foo/bar/AUX/bla.txt", "foo/bar/bla:.txt", "foo/bar/b\x07la.txt", "foo/bar/bla ",
		"../bar", `foo\`, `foo\/bar`, "it's", `say "hi"`, "both'\"", "tab\tx", "COM9.a.b", "lpt10",
	}, testenv.EncodingNames...)
	in, _ := json.Marshal(paths)
	cmd := testenv.HgPython(t, `
import json, sys
from mercurial import util
for p in json.loads(sys.argv[1]):
    b = p.encode('utf-8', 'surrogateescape')
    r = util.checkwinfilename(b)
    sys.stdout.buffer.write((b"%s: %r" % (r, b) if r else b"") + b"\n")
`, string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hg's checkwinfilename: %v", err)
	}
	want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(want) != len(paths) {
		t.Fatalf("hg answered %d lines for %d paths", len(want), len(paths))
	}
	refused := 0
	for i, p := range paths {
		got := ""
		if err := windowsNameError(p); err != nil {
			got = err.Error()
			refused++
		}
		if got != want[i] {
			t.Errorf("%q: hgfs says %q, hg %q", p, got, want[i])
		}
	}
	if refused < 10 {
		t.Errorf("only %d of %d paths refused", refused, len(paths))
	}
}
