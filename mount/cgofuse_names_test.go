package mount

import (
	"strings"
	"testing"
)

func TestWindowsName(t *testing.T) {
	for _, name := range []string{
		"data", "00changelog.i", "foo.txt.i", "~2efoo", "au~78.txt", "txt.aux",
		"co~6e", "com0", "lpt0", "conprn", ".hg", "a b", "x.y.z", "_foo", "com10",
	} {
		if err := WindowsName(name); err != nil {
			t.Errorf("WindowsName(%q) = %v, want nil", name, err)
		}
	}
	for _, name := range []string{
		"", "aux", "AUX", "con.txt", "Nul.i", "prn.", "com1", "LPT9.d", "a:b",
		"a\\b", "a/b", "q?", "star*", `"quoted"`, "<x>", "pipe|", "tab\there",
		"x.", "x ", "nl\n",
	} {
		if err := WindowsName(name); err == nil {
			t.Errorf("WindowsName(%q) = nil, want an error", name)
		}
	}
}

// TestWindowsNameMatchesHgEncoding checks the claim WindowsName's comment
// makes: every component of a store path hg writes in the fncache and
// dotencode layout is a name Windows holds.
func TestWindowsNameMatchesHgEncoding(t *testing.T) {
	// What hg 6.3's mercurial/store.py _hybridencode(p, dotencode=True)
	// gives for "data/aux.txt.i", "data/CON/x.i", "data/a:b?.i" and
	// "data/trail./x.i" (checked against hg's Python when written).
	for _, p := range []string{
		"data/au~78.txt.i", "data/_c_o_n/x.i", "data/a~3ab~3f.i", "data/trail~2e/x.i",
	} {
		for _, c := range strings.Split(p, "/") {
			if err := WindowsName(c); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		}
	}
}

func TestIsLibfuseHidden(t *testing.T) {
	for name, want := range map[string]bool{
		".fuse_hidden0000000300000001": true,
		".fuse_hidden00000003abcdef01": true,
		".fuse_hidden000000030000001":  false,
		".fuse_hidden000000030000000g": false,
		".fuse_hiddenX000000300000001": false,
		"fuse_hidden0000000300000001":  false,
	} {
		if got := isLibfuseHidden(name); got != want {
			t.Errorf("isLibfuseHidden(%q) = %v", name, got)
		}
	}
}

func TestIsDriveLetter(t *testing.T) {
	for mp, want := range map[string]bool{
		"X:": true, "x:": true, `Z:\`: true, "c:/": true,
		"X": false, "XY:": false, "1:": false, `X:\dir`: false, "": false,
	} {
		if got := isDriveLetter(mp); got != want {
			t.Errorf("isDriveLetter(%q) = %v", mp, got)
		}
	}
}

// FuzzWindowsName checks WindowsName on any name a FUSE request or a
// cache may carry: no panic, and an accepted name has none of the
// characters Windows refuses and does not end in a dot or space.
func FuzzWindowsName(f *testing.F) {
	for _, s := range []string{"aux", "com1.txt", "a:b", "x.", "data", "", "\x00", "..", "~2e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if WindowsName(name) != nil {
			return
		}
		if name == "" || strings.ContainsAny(name, `\/:*?"<>|`) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }) {
			t.Fatalf("accepted %q", name)
		}
		if last := name[len(name)-1]; (last == '.' || last == ' ') && name != "." && name != ".." {
			t.Fatalf("accepted %q with a trailing dot or space", name)
		}
	})
}
