package changegroup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

var tmpRoot string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "hgfs-changegroup-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tmpRoot = d
	code := m.Run()
	os.RemoveAll(d)
	testenv.RemoveGenerated()
	os.Exit(code)
}

// bundleTypes are the `hg bundle -t` specs the issue lists.
var bundleTypes = []string{"none-v1", "gzip-v1", "bzip2-v1", "none-v2", "zstd-v2", "bzip2-v2", "none-v2;cg.version=03"}

var bundleCache sync.Map // root + "\x00" + type -> *bundleEntry

type bundleEntry struct {
	once sync.Once
	path string
	err  error
}

// hgBundle returns the path of `hg bundle -a -t typ` of the repository at
// root, made once per process.
func hgBundle(t testing.TB, root, typ string) string {
	t.Helper()
	v, _ := bundleCache.LoadOrStore(root+"\x00"+typ, &bundleEntry{})
	e := v.(*bundleEntry)
	e.once.Do(func() {
		f, err := os.CreateTemp(tmpRoot, "bundle-*.hg")
		if err != nil {
			e.err = err
			return
		}
		f.Close()
		e.path = f.Name()
		os.Remove(e.path)
		args := []string{"bundle", "-q", "-a", "-t", typ, e.path,
			// cg3 is experimental in hg 6.3; stream bundles of a
			// repository with secret changesets need the second knob.
			"--config", "experimental.changegroup3=true",
			"--config", "server.uncompressedallowsecret=true"}
		_, stderr, err := testenv.HgResult(t, root, args...)
		if err != nil {
			e.err = fmt.Errorf("hg bundle -t %s: %v\n%s", typ, err, stderr)
		}
	})
	if e.err != nil {
		t.Fatal(e.err)
	}
	return e.path
}

// group is a decoded group with its deltas copied.
type group struct {
	kind   GroupKind
	name   string
	deltas []Delta
}

// readAll decodes every group of a changegroup, copying delta data.
func readAll(cg *Reader) ([]group, error) {
	var out []group
	for {
		kind, name, err := cg.NextGroup()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		g := group{kind: kind, name: name}
		for {
			var d Delta
			ok, err := cg.NextDelta(&d)
			if err != nil {
				return out, err
			}
			if !ok {
				break
			}
			d.Data = bytes.Clone(d.Data)
			g.deltas = append(g.deltas, d)
		}
		out = append(out, g)
	}
}

// decoded is a whole bundle read back.
type decoded struct {
	b       *Bundle
	version string
	groups  []group
	parts   []*BundlePart
}

// readBundle reads every part of a bundle; the changegroup part's groups
// are decoded in full.
func readBundle(r io.Reader) (*decoded, error) {
	b, err := OpenBundle(r)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	out := &decoded{b: b}
	for {
		p, err := b.NextPart()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out.parts = append(out.parts, p)
		switch {
		case p.Changegroup != nil:
			out.version = p.Changegroup.Version()
			gs, err := readAll(p.Changegroup)
			out.groups = append(out.groups, gs...)
			if err != nil {
				return out, err
			}
		case p.Payload != nil:
			if _, err := io.Copy(io.Discard, p.Payload); err != nil {
				return out, err
			}
		}
	}
}

func readBundleFile(t testing.TB, path string) *decoded {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := readBundle(f)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	return d
}

// mustCorrupt fails unless err wraps ErrCorrupt.
func mustCorrupt(t testing.TB, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("%s: got %v, want an error wrapping ErrCorrupt", what, err)
	}
}

func hgLines(t testing.TB, dir string, args ...string) []string {
	t.Helper()
	return strings.Split(strings.TrimSpace(string(testenv.Hg(t, dir, args...))), "\n")
}
