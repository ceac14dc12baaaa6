package exchange

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/testenv"
)

// The unbundle fuzz targets and property tests start from real bundles:
// testdata/unbundle holds bundles real Mercurial wrote (make.sh there
// writes them and says how): cuts of real history (the corpus of
// Mercurial's own first changesets) and small repositories with empty and
// binary files, copies, renames, merges, split revlogs, phases and
// obsolescence markers, in every bundle type hg writes. Each cut goes with
// the repository it was cut against (a base), so that corrupt input meets
// revisions already in the repository.

const seedDir = "testdata/unbundle"

// unbundleSeeds are the seed bundles with the base each was cut against
// ("" for a bundle of a whole history).
var unbundleSeeds = []struct{ file, base string }{
	{"corpus-99-101.hg", "corpus98"},
	{"corpus-99-110.hg", "corpus98"},
	{"corpus-99-110-v1.hg", "corpus98"},
	{"corpus-128-140.hg", "corpus127"},
	{"small-none-v1.hg", ""},
	{"small-gzip-v1.hg", ""},
	{"small-none-v2.hg", ""},
	{"small-none-v2-cg3.hg", ""},
	{"small-zstd-v2.hg", ""},
	{"small-phases-obsmarkers.hg", ""},
	{"small-cut-cg3.hg", "small"},
	{"small-parts.hg", ""},
	{"split-cut.hg", "split"},
	{"split-all.hg", ""},
}

// unbundleBases are the repositories inputs are applied to: "" is a new
// empty repository, the others are testdata/unbundle/base-NAME.hg loaded
// by real hg. A fuzz input picks one by index, so the order is fixed.
var unbundleBases = []string{"", "corpus98", "corpus127", "small", "split"}

func baseIndex(name string) uint8 {
	for i, b := range unbundleBases {
		if b == name {
			return uint8(i)
		}
	}
	panic("unknown base " + name)
}

// fileState is a file's content and mode.
type fileState struct {
	data string
	mode fs.FileMode
}

// snapshot is every file under a repository's .hg, by slash path.
type snapshot map[string]fileState

func takeSnapshot(t testing.TB, root string) snapshot {
	t.Helper()
	snap := snapshot{}
	hg := filepath.Join(root, ".hg")
	err := filepath.WalkDir(hg, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(hg, p)
		var data []byte
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			data = []byte(target)
		} else if data, err = os.ReadFile(p); err != nil {
			return err
		}
		snap[filepath.ToSlash(rel)] = fileState{string(data), fi.Mode()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// diff names the files that differ between two snapshots.
func (s snapshot) diff(other snapshot) []string {
	var out []string
	for name, st := range s {
		o, ok := other[name]
		switch {
		case !ok:
			out = append(out, name+" removed")
		case o.data != st.data:
			out = append(out, fmt.Sprintf("%s changed (%d bytes, was %d)", name, len(o.data), len(st.data)))
		case o.mode != st.mode:
			out = append(out, fmt.Sprintf("%s mode %v, was %v", name, o.mode, st.mode))
		}
	}
	for name := range other {
		if _, ok := s[name]; !ok {
			out = append(out, name+" appeared")
		}
	}
	sort.Strings(out)
	return out
}

// restore writes the snapshot's files into a new repository at root.
func (s snapshot) restore(t testing.TB, root string) {
	t.Helper()
	for name, st := range s {
		p := filepath.Join(root, ".hg", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		var err error
		if st.mode&fs.ModeSymlink != 0 {
			err = os.Symlink(st.data, p)
		} else {
			err = os.WriteFile(p, []byte(st.data), st.mode.Perm())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

var baseRepos struct {
	sync.Mutex
	dir   string
	snaps map[string]snapshot
}

// removeBaseRepos deletes what baseSnapshot made (TestMain calls it).
func removeBaseRepos() {
	baseRepos.Lock()
	defer baseRepos.Unlock()
	if baseRepos.dir != "" {
		os.RemoveAll(baseRepos.dir)
	}
}

// baseSnapshot returns the files of base repository name, made once per
// process: `hg init` and `hg unbundle` of testdata/unbundle/base-NAME.hg
// by real hg, or exchange.Init's empty repository for "".
func baseSnapshot(t testing.TB, name string) snapshot {
	t.Helper()
	baseRepos.Lock()
	defer baseRepos.Unlock()
	if s, ok := baseRepos.snaps[name]; ok {
		return s
	}
	if baseRepos.dir == "" {
		d, err := os.MkdirTemp("", "hgfs-unbundle-bases-")
		if err != nil {
			t.Fatal(err)
		}
		baseRepos.dir = d
		baseRepos.snaps = map[string]snapshot{}
	}
	root := filepath.Join(baseRepos.dir, "empty")
	if name == "" {
		if err := Init(root, store.DefaultRequirements().List(), ""); err != nil {
			t.Fatal(err)
		}
	} else {
		bundle, err := filepath.Abs(filepath.Join(seedDir, "base-"+name+".hg"))
		if err != nil {
			t.Fatal(err)
		}
		root = filepath.Join(baseRepos.dir, name)
		testenv.Hg(t, baseRepos.dir, "init", root)
		testenv.Hg(t, root, "unbundle", "-q", bundle)
	}
	// Every revision of the base reads back, verified: a failed apply
	// must leave the same bytes (checkApplied).
	if err := readAll(root); err != nil {
		t.Fatalf("base %q: %v", name, err)
	}
	s := takeSnapshot(t, root)
	baseRepos.snaps[name] = s
	return s
}

// newRepo returns a private copy of base repository name and its files.
func newRepo(t testing.TB, name string) (string, snapshot) {
	t.Helper()
	s := baseSnapshot(t, name)
	root := filepath.Join(t.TempDir(), "repo")
	s.restore(t, root)
	return root, s
}

// readSeed returns a file of testdata/unbundle.
func readSeed(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(seedDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// unbundleBytes applies a bundle as hgfs unbundle does (OpenBundle,
// Begin, ApplyBundle, Commit).
func unbundleBytes(root string, data []byte, opt Options) error {
	b, err := changegroup.OpenBundle(bytes.NewReader(data))
	if err != nil {
		return err
	}
	defer b.Close()
	s, err := Begin(context.Background(), root, "unbundle", opt)
	if err != nil {
		return err
	}
	if _, err := s.ApplyBundle(context.Background(), b, BookmarksApply); err != nil {
		return err
	}
	return s.Commit()
}

// modeOptions are the session options a fuzz input's mode byte selects:
// its high bit writes each filelog when its group ends (instead of in
// batches) and takes the working directory lock; the next one applies
// the file groups on the session's goroutine rather than on three
// workers. The low bits pick the base repository (modeBase).
func modeOptions(mode uint8) Options {
	o := Options{FileWorkers: 3}
	if mode&0x40 != 0 {
		o.FileWorkers = 1
	}
	if mode&0x80 != 0 {
		o.WriteBatch, o.WLock = -1, true
	}
	return o
}

// modeBase is the base repository a fuzz input's mode byte picks.
func modeBase(mode uint8) string { return unbundleBases[int(mode&0x3f)%len(unbundleBases)] }

// checkApplied checks what an apply left, whatever the input: never a
// journal or a lock; after a failure, every file of the repository as
// before, so every revision already there still reads back with its
// hash verified by hgfs's reader (baseSnapshot read them all); after a
// success, every revision reads back, verified.
func checkApplied(t testing.TB, root string, before snapshot, applyErr error) {
	t.Helper()
	after := takeSnapshot(t, root)
	for name := range after {
		base := name[strings.LastIndex(name, "/")+1:]
		if strings.HasPrefix(base, "journal") || base == "lock" || base == "wlock" {
			t.Errorf("%s left behind (apply error: %v)", name, applyErr)
		}
	}
	if applyErr != nil {
		if d := before.diff(after); len(d) > 0 {
			t.Errorf("a failed apply (%v) changed the repository:\n%s", applyErr, strings.Join(d, "\n"))
		} else {
			return // the same bytes as the base, whose revisions were read
		}
	}
	if err := readAll(root); err != nil {
		t.Errorf("after the apply (error: %v): %v", applyErr, err)
	}
}

// readAll reads every revision of the repository with hgfs's reader:
// the changelog's, the manifest's and those of every filelog the
// fncache lists, each hash-checked, each linkrev inside the changelog.
// Texts are not parsed: hg applies changesets and manifests that do not
// parse (a changegroup whose groups were exchanged) and so does hgfs.
func readAll(root string) error {
	r, err := repo.Open(root)
	if err != nil {
		return err
	}
	defer r.Close()
	cl := r.Changelog()
	check := func(rl *revlog.Revlog, what string) error {
		for rev := 0; rev < rl.Len(); rev++ {
			if lr := rl.LinkRev(rev); lr < 0 || lr >= cl.Len() {
				return fmt.Errorf("%s rev %d: linkrev %d outside the changelog (%d)", what, rev, lr, cl.Len())
			}
			if _, err := rl.Revision(rev); err != nil {
				return fmt.Errorf("%s rev %d: %w", what, rev, err)
			}
		}
		return nil
	}
	if err := check(cl, "changelog"); err != nil {
		return err
	}
	ml, err := r.Manifestlog()
	if err != nil {
		return err
	}
	if err := check(ml, "manifest"); err != nil {
		return err
	}
	names, err := r.Store.Fncache()
	if err != nil {
		return err
	}
	for _, name := range names {
		p, ok := strings.CutSuffix(strings.TrimPrefix(name, "data/"), ".i")
		if !ok {
			continue
		}
		fl, err := r.File(p)
		if err != nil {
			return err
		}
		err = check(fl, "file "+p)
		fl.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// FuzzUnbundle applies arbitrary bytes as a bundle file, as hgfs
// unbundle does, to a new empty repository or to a copy of a repository
// holding history (the mode byte picks one, and the session options),
// and checks what checkApplied checks. The seeds are the bundles of
// testdata/unbundle, each on an empty repository and on its base.
func FuzzUnbundle(f *testing.F) {
	testenv.HgPath(f)
	for _, s := range unbundleSeeds {
		data := readSeed(f, s.file)
		f.Add(data, uint8(0))
		f.Add(data, uint8(0x40))
		if s.base != "" {
			f.Add(data, baseIndex(s.base)|0x80)
			f.Add(data, baseIndex(s.base)|0xc0)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		root, before := newRepo(t, modeBase(mode))
		err := unbundleBytes(root, data, modeOptions(mode))
		checkApplied(t, root, before, err)
	})
}

// cgVersions are the changegroup versions a FuzzApplyChangegroup input
// picks from.
var cgVersions = []string{changegroup.Version1, changegroup.Version2, changegroup.Version3}

// FuzzApplyChangegroup applies arbitrary bytes as a raw changegroup
// stream of the version its version byte picks, to an empty repository
// or a repository with history (the mode byte, as FuzzUnbundle's). The
// seeds are a tiny hand-made changegroup and the changegroups of the
// seed bundles, each in its own version.
func FuzzApplyChangegroup(f *testing.F) {
	testenv.HgPath(f)
	seed := tinyChangegroup(f)
	f.Add(seed, uint8(1), uint8(0))
	for _, s := range unbundleSeeds {
		m := decodeBundle(f, readSeed(f, s.file))
		v := uint8(0)
		for i, cv := range cgVersions {
			if cv == m.version {
				v = uint8(i)
			}
		}
		data := m.encodeRaw(f)
		f.Add(data, v, uint8(0))
		if s.base != "" {
			f.Add(data, v, baseIndex(s.base)|0x80)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, version, mode uint8) {
		root, before := newRepo(t, modeBase(mode))
		err := applyRaw(root, data, cgVersions[int(version)%len(cgVersions)], modeOptions(mode))
		checkApplied(t, root, before, err)
	})
}

// applyRaw applies a raw changegroup stream in a new session.
func applyRaw(root string, data []byte, version string, opt Options) error {
	s, err := Begin(context.Background(), root, "unbundle", opt)
	if err != nil {
		return err
	}
	cg, err := changegroup.NewReader(bytes.NewReader(data), version)
	if err != nil {
		s.Abort()
		return err
	}
	if _, err := s.ApplyChangegroup(context.Background(), cg, Draft); err != nil {
		return err
	}
	return s.Commit()
}

// cgModel is a decoded changegroup: its groups in stream order (the
// changelog's, the manifest's, then one per file), for tests that build
// variants of real changegroups.
type cgModel struct {
	version    string
	groups     []cgGroup
	phaseHeads []changegroup.PhaseHead // the bundle's phase-heads part
}

type cgGroup struct {
	name   string // file groups
	deltas []changegroup.Delta
}

// decodeBundle decodes the first changegroup part of a bundle, and its
// phase-heads part.
func decodeBundle(t testing.TB, data []byte) *cgModel {
	t.Helper()
	b, err := changegroup.OpenBundle(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var m *cgModel
	for {
		p, err := b.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case p.Type == "changegroup" && m == nil:
			m = &cgModel{version: p.Changegroup.Version()}
			for {
				_, name, err := p.Changegroup.NextGroup()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				g := cgGroup{name: name}
				for {
					var d changegroup.Delta
					ok, err := p.Changegroup.NextDelta(&d)
					if err != nil {
						t.Fatal(err)
					}
					if !ok {
						break
					}
					d.Data = bytes.Clone(d.Data)
					g.deltas = append(g.deltas, d)
				}
				m.groups = append(m.groups, g)
			}
		case p.Type == "phase-heads" && m != nil:
			m.phaseHeads = p.PhaseHeads
		}
	}
	if m == nil {
		t.Fatal("no changegroup in the bundle")
	}
	return m
}

// write encodes the model's groups in order: the first as the changelog
// group, the second as the manifest group, the others as file groups
// under their names. cg1 has no base field: each delta's base is written
// as the one cg1 implies, which is what the bytes then mean.
func (m *cgModel) write(w *changegroup.Writer) error {
	for i, g := range m.groups {
		kind := changegroup.File
		switch i {
		case 0:
			kind = changegroup.Changelog
		case 1:
			kind = changegroup.Manifest
		}
		if err := w.StartGroup(kind, g.name); err != nil {
			return err
		}
		var prev [20]byte
		for j, d := range g.deltas {
			if m.version == changegroup.Version1 {
				d.Base = prev
				if j == 0 {
					d.Base = d.P1
				}
				d.Flags = 0
			}
			if err := w.WriteDelta(&d); err != nil {
				return err
			}
			prev = d.Node
		}
	}
	return w.Close()
}

// encodeRaw returns the model as a raw changegroup stream.
func (m *cgModel) encodeRaw(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := changegroup.NewWriter(&buf, m.version)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.write(w); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// encodeBundle returns the model as a bundle: HG10UN for cg1, else
// uncompressed HG20 with the changegroup part and the phase-heads part.
func (m *cgModel) encodeBundle(t testing.TB) []byte {
	t.Helper()
	opt := changegroup.BundleOptions{Type: "HG20", Version: m.version, PhaseHeads: m.phaseHeads}
	if m.version == changegroup.Version1 {
		opt = changegroup.BundleOptions{Type: "HG10UN"}
	}
	var buf bytes.Buffer
	w, err := changegroup.NewBundleWriter(&buf, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.write(w); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tinyChangegroup encodes a valid two-changeset history (a file added,
// then changed) as a cg2 stream, the fuzz seed.
func tinyChangegroup(t testing.TB) []byte {
	var buf bytes.Buffer
	w, err := changegroup.NewWriter(&buf, "02")
	if err != nil {
		t.Fatal(err)
	}
	var null revlog.Node
	f1 := []byte("hello\n")
	f2 := []byte("hello\nworld\n")
	fn1 := revlog.HashRevision(f1, null, null)
	fn2 := revlog.HashRevision(f2, fn1, null)
	m1 := []byte(fmt.Sprintf("a.txt\x00%s\n", fn1))
	m2 := []byte(fmt.Sprintf("a.txt\x00%s\n", fn2))
	mn1 := revlog.HashRevision(m1, null, null)
	mn2 := revlog.HashRevision(m2, mn1, null)
	c1 := []byte(fmt.Sprintf("%s\ntest\n0 0\na.txt\n\nfirst", mn1))
	c2 := []byte(fmt.Sprintf("%s\ntest\n1 0\na.txt\n\nsecond", mn2))
	cn1 := revlog.HashRevision(c1, null, null)
	cn2 := revlog.HashRevision(c2, cn1, null)
	groups := []struct {
		kind  changegroup.GroupKind
		name  string
		texts [][]byte
		nodes []revlog.Node
		links []revlog.Node
	}{
		{changegroup.Changelog, "", [][]byte{c1, c2}, []revlog.Node{cn1, cn2}, []revlog.Node{cn1, cn2}},
		{changegroup.Manifest, "", [][]byte{m1, m2}, []revlog.Node{mn1, mn2}, []revlog.Node{cn1, cn2}},
		{changegroup.File, "a.txt", [][]byte{f1, f2}, []revlog.Node{fn1, fn2}, []revlog.Node{cn1, cn2}},
	}
	for _, g := range groups {
		if err := w.StartGroup(g.kind, g.name); err != nil {
			t.Fatal(err)
		}
		for i := range g.texts {
			d := changegroup.Delta{Node: g.nodes[i], LinkNode: g.links[i], Data: changegroup.FullDelta(g.texts[i])}
			if i > 0 {
				d.P1 = g.nodes[i-1]
			}
			if err := w.WriteDelta(&d); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestApplyTiny applies the fuzz seed and reads it back.
func TestApplyTiny(t *testing.T) {
	root := t.TempDir()
	if err := Init(root, store.DefaultRequirements().List(), ""); err != nil {
		t.Fatal(err)
	}
	var status bytes.Buffer
	s, err := Begin(context.Background(), root, "unbundle", Options{Status: func(m string) { status.WriteString(m) }})
	if err != nil {
		t.Fatal(err)
	}
	cg, err := changegroup.NewReader(bytes.NewReader(tinyChangegroup(t)), "02")
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.ApplyChangegroup(context.Background(), cg, Draft)
	if err != nil {
		t.Fatal(err)
	}
	if res.Changesets != 2 || res.Revisions != 2 || res.Files != 1 {
		t.Errorf("result %+v", res)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	want := "adding changesets\nadding manifests\nadding file changes\nadded 2 changesets with 2 changes to 1 files\n"
	if got := status.String(); got[:len(want)] != want {
		t.Errorf("status %q", got)
	}
	phaseroots, err := os.ReadFile(filepath.Join(root, ".hg", "store", "phaseroots"))
	if err != nil || !bytes.HasPrefix(phaseroots, []byte("1 ")) {
		t.Errorf("phaseroots %q %v", phaseroots, err)
	}
}
