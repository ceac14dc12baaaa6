package streamclone

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestIndexCheckMatchesMercurial mutates a real changelog and manifest
// index (inline, and rewritten without inline data) and checks that
// indexCheck refuses exactly what hg refuses when it loads them as
// nodemap.post_stream_cleanup does after every stream clone. The bytes
// reach indexCheck in random pieces, as a stream delivers them.
func TestIndexCheckMatchesMercurial(t *testing.T) {
	src := testenv.Generate(t, testenv.Small)
	type variant struct {
		file string // store file name
		desc string
		data []byte
	}
	var variants []variant
	for _, file := range []string{"00changelog.i", "00manifest.i"} {
		inline, err := os.ReadFile(filepath.Join(src, ".hg", "store", file))
		if err != nil {
			t.Fatal(err)
		}
		if binary.BigEndian.Uint32(inline)&(1<<16) == 0 || len(inline) < 200 {
			t.Fatalf("%s of the small repository is not inline (or too short)", file)
		}
		for _, base := range []struct {
			name string
			data []byte
		}{{"inline", inline}, {"split", splitIndex(t, inline)}} {
			add := func(desc string, data []byte) {
				variants = append(variants, variant{file, base.name + " " + desc, data})
			}
			b := base.data
			add("as is", b)
			for _, cut := range []int{1, 3, 63, 64, 65, 70, len(b) - 30, len(b) - 1} {
				add(fmt.Sprintf("cut to %d", cut), b[:cut])
			}
			add("one byte more", append(bytes.Clone(b), 'x'))
			add("an entry more", append(bytes.Clone(b), make([]byte, 64)...))
			for _, delta := range []int32{1, -1, 1 << 20} {
				m := bytes.Clone(b)
				binary.BigEndian.PutUint32(m[8:], uint32(int32(binary.BigEndian.Uint32(m[8:]))+delta))
				add(fmt.Sprintf("first length %+d", delta), m)
			}
			for _, word := range []uint32{1 << 18, 2, 7, 0x0000_0000, 1 << 16} {
				m := bytes.Clone(b)
				v := binary.BigEndian.Uint32(m)
				switch {
				case word == 1<<18 || word == 1<<16:
					v ^= word // an unknown flag; inline toggled
				default:
					v = v&^0xFFFF | word // another version, flags kept
				}
				binary.BigEndian.PutUint32(m, v)
				add(fmt.Sprintf("header %#x", v), m)
			}
		}
	}

	want := mercurialVerdicts(t, src, func(yield func(file string, data []byte)) {
		for _, v := range variants {
			yield(v.file, v.data)
		}
	})
	r := rand.New(rand.NewPCG(1, 2))
	for i, v := range variants {
		display, _ := indexChecked(v.file)
		c := &indexCheck{display: display}
		for rest := v.data; len(rest) > 0; {
			k := min(len(rest), 1+r.IntN(100))
			c.Write(rest[:k])
			rest = rest[k:]
		}
		err := c.done(int64(len(v.data)))
		if got := err == nil; got != (want[i] == "ok") {
			t.Errorf("%s %s: indexCheck says %v, Mercurial %s", v.file, v.desc, err, want[i])
		}
	}
}

// splitIndex rewrites an inline index as the index of a revlog whose
// data is in a separate file: the entries alone, inline flag cleared.
func splitIndex(t *testing.T, inline []byte) []byte {
	var out []byte
	for pos := 0; pos < len(inline); {
		if len(inline)-pos < 64 {
			t.Fatalf("inline index ends inside an entry at %d", pos)
		}
		out = append(out, inline[pos:pos+64]...)
		pos += 64 + int(binary.BigEndian.Uint32(inline[pos+8:]))
	}
	binary.BigEndian.PutUint32(out, binary.BigEndian.Uint32(out)&^(1<<16))
	return out
}

// mercurialVerdicts writes each index into a copy of repo and loads the
// changelog and root manifest revlogs there with hg's own code, the way
// nodemap.post_stream_cleanup does: "ok", or the error hg raised.
func mercurialVerdicts(t *testing.T, repo string, each func(yield func(file string, data []byte))) []string {
	t.Helper()
	dir := t.TempDir()
	var list strings.Builder
	n := 0
	each(func(file string, data []byte) {
		p := filepath.Join(dir, fmt.Sprint(n))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&list, "%s %s\n", file, p)
		n++
	})
	copyRepo := filepath.Join(dir, "repo")
	if out, err := exec.Command("cp", "-a", repo, copyRepo).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	const script = `
import os, shutil
from mercurial import hg, ui as uimod
repo = sys.argv[1]
store = os.path.join(repo, '.hg', 'store')
u = uimod.ui.load()
for line in sys.stdin:
    name, path = line.split()
    target = os.path.join(store, name)
    keep = target + '.orig'
    shutil.copyfile(target, keep)
    shutil.copyfile(path, target)
    try:
        unfi = hg.repository(u, repo.encode()).unfiltered()
        unfi.changelog
        unfi.manifestlog._rootstore._revlog
        print('ok')
    except Exception as e:
        print('refused:', type(e).__name__, str(e).replace('\n', ' '))
    os.replace(keep, target)
`
	cmd := testenv.HgPython(t, script, copyRepo)
	cmd.Stdin = strings.NewReader(list.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("python gave %d verdicts for %d indexes:\n%s%s", len(lines), n, stdout.String(), stderr.String())
	}
	return lines
}

// TestApplyRefusesCorruptIndex: a bundle whose manifest index is cut one
// byte short is refused, as hg's debugapplystreamclonebundle refuses it,
// and the destination is removed.
func TestApplyRefusesCorruptIndex(t *testing.T) {
	repo := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	mf := filepath.Join(repo, ".hg", "store", "00manifest.i")
	data, err := os.ReadFile(mf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mf, data[:len(data)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	var bundle bytes.Buffer
	if err := WritePacked1(context.Background(), openStore(t, repo), &bundle); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "clone")
	sink, err := NewDirSink(dest, DefaultDirOptions())
	if err != nil {
		t.Fatal(err)
	}
	_, err = ApplyBundle(context.Background(), bytes.NewReader(bundle.Bytes()), sink, Options{})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "index 00manifest is corrupted") {
		t.Errorf("apply: %v, want index 00manifest is corrupted", err)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("destination left behind: %v", err)
	}
	// hg refuses the same bundle.
	path := filepath.Join(t.TempDir(), "bad.hg")
	os.WriteFile(path, bundle.Bytes(), 0o644)
	ref := filepath.Join(t.TempDir(), "ref")
	testenv.Hg(t, "", "init", ref)
	cmd := exec.Command(testenv.HgPath(t), "-R", ref, "debugapplystreamclonebundle", path)
	cmd.Env = testenv.HgEnv()
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "index 00manifest is corrupted") {
		t.Errorf("hg debugapplystreamclonebundle: %v\n%s", err, out)
	}
}
