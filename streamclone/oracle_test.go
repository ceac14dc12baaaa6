package streamclone

// Oracle tests: streams and bundles made by real hg 6.3 are applied with
// this package and compared with what hg itself makes of them; bundles
// made by this package are applied by real hg. hg runs are kept few: each
// costs about a second on a loaded 2-core machine.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/testenv"
)

// applyInto applies data (a bundle, or a v1 body when v1 is set) into a
// fresh DirSink at a new directory and returns it.
func applyInto(t *testing.T, data []byte, v1 bool, opt Options) (string, *Result) {
	t.Helper()
	dest := filepath.Join(t.TempDir(), "clone")
	sink, err := NewDirSink(dest, DefaultDirOptions())
	if err != nil {
		t.Fatal(err)
	}
	var res *Result
	if v1 {
		res, err = ApplyV1(context.Background(), bytes.NewReader(data), sink, opt)
	} else {
		res, err = ApplyBundle(context.Background(), bytes.NewReader(data), sink, opt)
	}
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dest, stageName)); !os.IsNotExist(err) {
		t.Fatalf("staging directory left behind: %v", err)
	}
	return dest, res
}

// hgApplied makes a reference: hg init, then hg args in it.
func hgApplied(t *testing.T, args ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ref")
	testenv.Hg(t, "", "init", dir)
	testenv.Hg(t, dir, args...)
	return dir
}

func openStore(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestOracleV1 covers packed1 bundles and the v1 stream_out body, which
// carry the same entries: hg's packed1 and hg serve's stream_out applied
// here match hg's debugapplystreamclonebundle; WritePacked1 and GenerateV1
// are byte-identical to hg's, and hg applies WritePacked1's bundle.
func TestOracleV1(t *testing.T) {
	t.Parallel()
	// The zstd fixture only: the zlib one differs in requirements, which
	// TestOracleBundleV2 compares against hg's own.
	for _, fx := range fixtures(t)[:1] {
		t.Run(fx.name, func(t *testing.T) {
			dir := t.TempDir()
			bundle := filepath.Join(dir, "p1.hg")
			testenv.Hg(t, fx.dir, "debugcreatestreamclonebundle", bundle)
			data, _ := os.ReadFile(bundle)
			ref := hgApplied(t, "debugapplystreamclonebundle", bundle)

			got, res := applyInto(t, data, false, Options{})
			compareRepos(t, ref, got)
			if res.Files == 0 || res.Bytes != int64(bytesOfStore(t, ref)) {
				t.Errorf("result %+v, store holds %d bytes", res, bytesOfStore(t, ref))
			}
			st := openStore(t, fx.dir)
			want := store.NewStreamCloneRequirements(store.DefaultRequirements(), st.Requirements.Streamed()).List()
			if strings.Join(res.Requirements, ",") != strings.Join(want, ",") {
				t.Errorf("requirements %q, want %q", res.Requirements, want)
			}

			var ours bytes.Buffer
			if err := WritePacked1(context.Background(), st, &ours); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ours.Bytes(), data) {
				t.Errorf("WritePacked1 differs from hg debugcreatestreamclonebundle (%d vs %d bytes)", ours.Len(), len(data))
			}
			mine := filepath.Join(dir, "mine.hg")
			os.WriteFile(mine, ours.Bytes(), 0o644)
			compareTrees(t, ref, hgApplied(t, "debugapplystreamclonebundle", mine))

			// stream_out from hg serve, with the streamreqs capability.
			url := hgServe(t, fx.dir)
			var reqs []string
			for _, c := range strings.Fields(string(httpGet(t, url+"?cmd=capabilities", nil))) {
				if v, ok := strings.CutPrefix(c, "streamreqs="); ok {
					reqs = strings.Split(v, ",")
				}
			}
			if reqs == nil {
				t.Fatal("no streamreqs capability")
			}
			body := httpGet(t, url+"?cmd=stream_out", nil)
			got1, _ := applyInto(t, body, true, Options{Requirements: reqs})
			compareTrees(t, ref, got1)
			sameFiles(t, got, got1, ".hg/requires", ".hg/store/requires", ".hg/00changelog.i")
			ours.Reset()
			if err := GenerateV1(context.Background(), st, &ours); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ours.Bytes(), body) {
				t.Errorf("GenerateV1 differs from hg's stream_out (%d vs %d bytes)", ours.Len(), len(body))
			}
		})
	}
}

// bytesOfStore sums the revlog sizes of a store (what packed1 carries).
func bytesOfStore(t *testing.T, root string) int {
	n := 0
	for name, c := range storeFiles(t, root) {
		if strings.HasSuffix(name, ".i") || strings.HasSuffix(name, ".d") {
			n += len(c)
		}
	}
	return n
}

// TestOracleBundleV2: hg's stream bundles, uncompressed and compressed,
// applied here match hg unbundle's result (requirements included);
// GenerateV2 is byte-identical to hg's and hg unbundle accepts it.
func TestOracleBundleV2(t *testing.T) {
	t.Parallel()
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			dir := t.TempDir()
			var ref, first string
			comps := []string{"none", "zstd", "gzip", "bzip2"}
			if fx.name != "zstd" {
				comps = comps[:2] // compression is independent of the store
			}
			for _, comp := range comps {
				bundle := filepath.Join(dir, comp+".hg")
				testenv.Hg(t, fx.dir, "bundle", "-q", "-a", "-t", comp+"-v2;stream=v2", bundle)
				data, _ := os.ReadFile(bundle)
				got, _ := applyInto(t, data, false, Options{})
				if ref == "" {
					ref = hgApplied(t, "unbundle", "-q", bundle)
					compareRepos(t, ref, got)
					sameFiles(t, ref, got, ".hg/requires", ".hg/store/requires", ".hg/00changelog.i")
					first = got
					continue
				}
				// Same content, other compression: the same files.
				compareTrees(t, first, got)
				sameFiles(t, first, got, ".hg/requires", ".hg/store/requires", ".hg/cache/branch2-served")
			}

			st := openStore(t, fx.dir)
			var ours bytes.Buffer
			if err := GenerateV2(context.Background(), st, &ours); err != nil {
				t.Fatal(err)
			}
			hgs, _ := os.ReadFile(filepath.Join(dir, "none.hg"))
			if !bytes.Equal(ours.Bytes(), hgs) {
				t.Errorf("GenerateV2 differs from hg bundle -t none-v2;stream=v2 (%d vs %d bytes)", ours.Len(), len(hgs))
			}
			mine := filepath.Join(dir, "mine.hg")
			os.WriteFile(mine, ours.Bytes(), 0o644)
			// hg accepts it (the bytes equal hg's own, so files suffice).
			ref2 := hgApplied(t, "unbundle", "-q", mine)
			compareTrees(t, ref, ref2)
			sameFiles(t, ref, ref2, ".hg/requires", ".hg/store/requires")
		})
	}
}

// TestOracleServeGetbundle applies the getbundle reply hg serve sends to
// `hg clone --stream` (stream2 + bookmarks + listkeys parts) and compares
// with the clone hg makes from the same server.
func TestOracleServeGetbundle(t *testing.T) {
	t.Parallel()
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			url := hgServe(t, fx.dir)
			heads := strings.Fields(string(httpGet(t, url+"?cmd=heads", nil)))
			// The arguments hg 6.3's clone --stream sends (captured with a proxy).
			caps := "HG20,bundle2=HG20%0Abookmarks%0Achangegroup%3D01%2C02%0Acheckheads%3Drelated%0Adigests%3Dmd5%2Csha1%2Csha512%0Aerror%3Dabort%2Cunsupportedcontent%2Cpushraced%2Cpushkey%0Ahgtagsfnodes%0Alistkeys%0Aphases%3Dheads%0Apushkey%0Aremote-changegroup%3Dhttp%2Chttps%0Astream%3Dv2"
			arg := "bookmarks=1&bundlecaps=" + bundle2.Quote(caps) + "&cg=0&common=" + strings.Repeat("0", 40) +
				"&heads=" + strings.Join(heads, "+") + "&listkeys=bookmarks&stream=1"
			body := httpGet(t, url+"?cmd=getbundle", map[string]string{
				"X-HgArg-1": arg, "X-HgProto-1": "0.1 0.2 comp=none", "Vary": "X-HgArg-1,X-HgProto-1",
			})
			// application/mercurial-0.2: a length-prefixed compression name.
			if len(body) < 5 || string(body[:5]) != "\x04none" {
				t.Fatalf("unexpected reply prefix %q", body[:min(len(body), 16)])
			}
			got, res := applyInto(t, body[5:], false, Options{})
			ref := filepath.Join(t.TempDir(), "ref")
			testenv.Hg(t, "", "clone", "-q", "--stream", "-U", url, ref)
			compareRepos(t, ref, got)
			sameFiles(t, ref, got, ".hg/requires", ".hg/store/requires", ".hg/bookmarks", ".hg/00changelog.i")
			if strings.Join(res.Bookmarks, " ") != "Zeta bm-one" {
				t.Errorf("bookmarks %q", res.Bookmarks)
			}
		})
	}
}

func httpGet(t *testing.T, url string, hdr map[string]string) []byte {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %v %s", url, err, resp.Status)
	}
	return b
}
