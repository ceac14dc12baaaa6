package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// trickyFiles are tracked paths that exercise every branch of the
// encodings. They are created in a working directory and committed with
// real hg, in each layout.
func trickyFiles() []string {
	long := strings.Repeat("LongName_", 14) + ".txt" // > 120 once encoded
	deep := "Deep1/deep2/deep3/deep4/deep5/deep6/deep7/deep8/deep9/deep10/deep11/file.txt"
	files := []string{
		"plain.txt",
		"Upper/CASE.TXT",
		"under_score",
		"__double",
		"tilde~x",
		"sp ace",
		" leading-space",
		".leading-dot",
		"...dots",
		"aux.txt",
		"con.d",
		"con",
		"nul.c",
		"prn.tar.gz",
		"com1",
		"lpt9.x",
		"COM1",
		"com0",
		"x.aux",
		"auxiliary",
		"trail.",
		"trail ",
		"dirtrail./f",
		"dirspace /f",
		"foo.i/bar",
		"foo.d/bar",
		"foo",
		"a.hg/b",
		"x.hg.hg/y",
		"deep.i/er.d/x.hg/z",
		"colon:x",
		"star*q?",
		"quote\"lt<gt>pipe|",
		"tab\there",
		"\x7fdel",
		"ünïcödé.txt",
		"日本語/ファイル.txt",
		"percent%20",
		long,
		"aux/" + long, "lpt1/nul/aux.txt",
		"Dir.With.Dots/" + strings.Repeat("n", 110) + ".i",
		"abcdefg./" + strings.Repeat("q", 115),
		"abcdefg /" + strings.Repeat("r", 115),
		".hidden/" + strings.Repeat("s", 115),
		deep,
		strings.TrimSuffix(deep, "file.txt") + strings.Repeat("z", 200),
		strings.Repeat("d/", 40) + strings.Repeat("y", 150) + ".ext",
		strings.Repeat("eightchr", 3) + "/" + strings.Repeat("LONGDIR", 5) + "/" + strings.Repeat("f", 250),
		"noext/" + strings.Repeat("x", 200),
		"manyext/" + strings.Repeat("a.b", 60),
		"big.bin",
		strings.Repeat("Big", 50) + ".bin",
	}
	return files
}

// bigContent is incompressible so that the revlog gets a separate .d.
func bigContent(seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, 200<<10)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// layoutConfigs are the hg init options of each layout (configitems.py:
// format.usestore, format.usefncache, format.dotencode).
var layoutConfigs = map[Layout][]string{
	LayoutBasic:     {"--config", "format.usestore=false"},
	LayoutEncoded:   {"--config", "format.usefncache=false"},
	LayoutFncache:   {"--config", "format.dotencode=false"},
	LayoutDotencode: nil,
}

type fixture struct {
	once sync.Once
	dir  string
	err  error
}

var (
	fixtureDir   string
	fixtureMu    sync.Mutex
	layoutRepos  = map[Layout]*fixture{}
	fixtureSetup sync.Once
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	testenv.RemoveGenerated()
	os.Exit(code)
}

func fixtureRoot(t testing.TB) string {
	t.Helper()
	fixtureSetup.Do(func() {
		d, err := os.MkdirTemp("", "hgfs-store-test-")
		if err != nil {
			panic(err)
		}
		fixtureDir = d
	})
	return fixtureDir
}

// layoutRepo returns a repository (shared by the package's tests, not to
// be modified) in the given layout holding trickyFiles in one commit.
func layoutRepo(t testing.TB, l Layout) string {
	t.Helper()
	testenv.HgPath(t)
	fixtureMu.Lock()
	f := layoutRepos[l]
	if f == nil {
		f = &fixture{}
		layoutRepos[l] = f
	}
	fixtureMu.Unlock()
	f.once.Do(func() {
		dir := filepath.Join(fixtureRoot(t), "repo-"+strings.ReplaceAll(l.String(), "+", "-"))
		args := append([]string{"init"}, layoutConfigs[l]...)
		args = append(args, dir)
		if _, stderr, err := testenv.HgResult(t, fixtureRoot(t), args...); err != nil {
			f.err = fmt.Errorf("hg init: %v: %s", err, stderr)
			return
		}
		if err := writeTree(dir, trickyFiles(), 1); err != nil {
			f.err = err
			return
		}
		if _, stderr, err := testenv.HgResult(t, dir, "commit", "-q", "-A", "-m", "one"); err != nil {
			f.err = fmt.Errorf("hg commit: %v: %s", err, stderr)
			return
		}
		f.dir = dir
	})
	if f.err != nil {
		t.Fatalf("creating %s repository: %v", l, f.err)
	}
	return f.dir
}

func writeTree(root string, files []string, gen uint64) error {
	for i, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		content := []byte(fmt.Sprintf("%s generation %d\n", f, gen))
		if strings.HasSuffix(f, ".bin") {
			content = bigContent(gen*1000 + uint64(i))
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// copyTree copies a repository so a test can add files to it.
func copyTree(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// diskFiles lists the regular files under dir/sub, relative to dir.
func diskFiles(t testing.TB, dir string, subs ...string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, sub := range subs {
		root := filepath.Join(dir, sub)
		if _, err := os.Stat(root); err != nil {
			continue
		}
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				rel, _ := filepath.Rel(dir, p)
				out[filepath.ToSlash(rel)] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
