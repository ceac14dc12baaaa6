package wireproto

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestLegacyChangegroups: the bare cg1 streams of changegroup,
// changegroupsubset and a bundle10 getbundle, applied by hg, give what
// hg serve's give.
func TestLegacyChangegroups(t *testing.T) {
	src := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small)) // has secret and hidden changesets
	os.WriteFile(filepath.Join(src, ".hg", "hgrc"), []byte("[phases]\npublish = false\n"), 0o644)
	hgURL := testenv.Serve(t, src)
	ours := startServer(t, src, testConfig())
	nodes := strings.Fields(string(testenv.Hg(t, src, "log", "-r", "not secret()", "-T", "{node}\n")))
	heads := strings.TrimSpace(string(payload(t, rawGet(t, hgURL, "heads", nil, ""), false)))
	root, mid := nodes[0], nodes[len(nodes)/2]
	for _, c := range []struct {
		name, cmd string
		args      map[string]string
		base      string // the receiver's repository: a clone -r of it, or empty
	}{
		{"changegroup-all", "changegroup", map[string]string{"roots": NullHex}, ""},
		{"changegroup-roots", "changegroup", map[string]string{"roots": mid}, mid},
		{"changegroupsubset", "changegroupsubset", map[string]string{"bases": mid, "heads": heads}, mid},
		{"getbundle10", "getbundle", map[string]string{"common": root, "heads": heads}, root},
	} {
		t.Run(c.name, func(t *testing.T) {
			apply := func(url string) string {
				dest := filepath.Join(t.TempDir(), "r")
				if c.base == "" {
					testenv.Hg(t, "", "init", dest)
				} else {
					// The roots themselves go too: the receiver has the
					// parents of what descends from them.
					revset := c.base
					if c.cmd != "getbundle" {
						revset = "parents(" + c.base + "::) - (" + c.base + "::)"
					}
					args := []string{"clone", "-q", "-U"}
					for _, n := range strings.Fields(string(testenv.Hg(t, src, "log", "-r", revset, "-T", "{node}\n"))) {
						args = append(args, "-r", n)
					}
					testenv.Hg(t, "", append(args, src, dest)...)
				}
				data := payload(t, rawGet(t, url, c.cmd, c.args, "0.1 0.2 comp=zstd,zlib,none"), true)
				path := filepath.Join(t.TempDir(), "b.hg")
				if err := os.WriteFile(path, append([]byte("HG10UN"), data...), 0o644); err != nil {
					t.Fatal(err)
				}
				testenv.Hg(t, dest, "unbundle", "-q", path)
				testenv.Hg(t, dest, "verify", "-q")
				return string(testenv.Hg(t, dest, "log", "--debug", "--hidden", "-r", "all()", "-T", "{rev}:{node} {p1node} {p2node} {manifest} {files}\n"))
			}
			want, got := apply(hgURL), apply(ours)
			if want != got {
				t.Errorf("applied changegroups differ:\n%s", testenv.Diff("hg serve", want, "hgfs serve", got))
			}
			if strings.Count(got, "\n") < 2 {
				t.Errorf("nothing applied:\n%s", got)
			}
		})
	}
}

// FuzzLegacyArgs: between and branches answer any argument with a
// result or a bad request, never a panic.
func FuzzLegacyArgs(f *testing.F) {
	src := testenv.Generate(f, testenv.Small)
	srv, err := NewServer(src, testConfig())
	if err != nil {
		f.Fatal(err)
	}
	v, err := srv.open()
	if err != nil {
		f.Fatal(err)
	}
	defer v.close()
	h := v.heads()
	top := v.node(h[len(h)-1])
	f.Add(top + "-" + NullHex)
	f.Add(top + "-" + top + " " + NullHex + "-" + top)
	f.Add(top)
	f.Add("")
	f.Add("-")
	f.Add(strings.Repeat("0", 39) + "-")
	f.Fuzz(func(t *testing.T, arg string) {
		if out, err := v.between(arg); err == nil && !strings.HasSuffix(out, "\n") && out != "" {
			t.Errorf("between %q = %q", arg, out)
		}
		if _, err := v.branches(arg); err != nil && !bytes.Contains([]byte(err.Error()), []byte("bad request")) {
			t.Errorf("branches %q: %v", arg, err)
		}
		if _, err := v.between(arg); err != nil && !strings.Contains(err.Error(), "bad request") {
			t.Errorf("between %q: %v", arg, err)
		}
	})
}
