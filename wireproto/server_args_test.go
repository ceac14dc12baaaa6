package wireproto

import (
	"net/http"
	"strings"
	"testing"
)

func TestParseBatch(t *testing.T) {
	calls, err := parseBatch("heads ;known nodes=" + strings.Repeat("a", 40) + ";listkeys namespace=book:cmarks:e:s:o")
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 3 || calls[0].name != "heads" || len(calls[0].args) != 0 ||
		calls[1].args["nodes"] != strings.Repeat("a", 40) || calls[2].args["namespace"] != "book:marks=;," {
		t.Errorf("parsed %+v", calls)
	}
	for _, bad := range []string{"heads", "known nodes", "a b=c=d", strings.Repeat("heads ;", maxBatchCommands+1)} {
		if _, err := parseBatch(bad); err == nil {
			t.Errorf("parseBatch(%.40q) succeeded", bad)
		}
	}
}

func TestBatchEscapeRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "a:b,c;d=e", "::", ":c:o:s:e", "=;,:"} {
		if got := unescapeBatchArg(escapeBatchArg(s)); got != s {
			t.Errorf("round trip of %q gave %q", s, got)
		}
	}
}

func TestRequestArgs(t *testing.T) {
	enc := formEncode(map[string]string{"namespace": "bookmarks", "key": "a b&c=d/é"})
	req, _ := http.NewRequest("GET", "http://x/?cmd=lookup&old=1&key=query", nil)
	for i, v := range splitHeaderValue(enc, "X-HgArg", 40) {
		req.Header.Set("X-HgArg-"+string(rune('1'+i)), v)
	}
	args, err := requestArgs(req)
	if err != nil {
		t.Fatal(err)
	}
	if args["namespace"] != "bookmarks" || args["key"] != "a b&c=d/é" || args["old"] != "1" || args["cmd"] != "" {
		t.Errorf("args %q", args)
	}
	req.Header.Set("X-HgArg-1", strings.Repeat("a", maxArgBytes+1))
	if _, err := requestArgs(req); err == nil {
		t.Error("oversized arguments accepted")
	}
}

func TestGetbundleArgs(t *testing.T) {
	g, err := decodeGetbundleArgs(map[string]string{"bundlecaps": "HG20,bundle2=HG20%0Astream%3Dv2", "cg": "0", "stream": "1",
		"common": NullHex, "listkeys": "bookmarks,phases", "other": "x"})
	if err != nil {
		t.Fatal(err)
	}
	is2, caps := g.bundle2()
	if !is2 || !caps.HasValue("stream", "v2") || g.flag("cg", true) || !g.flag("stream", false) ||
		len(g.common) != 1 || strings.Join(g.listkeys, " ") != "bookmarks phases" || len(g.unknown) != 1 {
		t.Errorf("decoded %+v", g)
	}
	if _, err := decodeGetbundleArgs(map[string]string{"heads": "zz"}); err == nil {
		t.Error("bad heads accepted")
	}
}

func FuzzParseBatch(f *testing.F) {
	f.Add("heads ;known nodes=" + strings.Repeat("0", 40))
	f.Add("listkeys namespace=a:eb:s:o:c")
	f.Add(";; =")
	f.Add("a b=c,d=e,,")
	f.Fuzz(func(t *testing.T, s string) {
		calls, err := parseBatch(s)
		if err != nil {
			return
		}
		if len(calls) > maxBatchCommands {
			t.Fatalf("%d calls", len(calls))
		}
		for _, c := range calls {
			for k, v := range c.args {
				if unescapeBatchArg(escapeBatchArg(k)) != k || unescapeBatchArg(escapeBatchArg(v)) != v {
					t.Fatalf("escape round trip fails for %q=%q", k, v)
				}
			}
		}
	})
}

func FuzzRequestArgs(f *testing.F) {
	f.Add("cmd=heads", "namespace=bookmarks", "", "0.1 0.2 comp=zstd,zlib,none")
	f.Add("cmd=getbundle", "bundlecaps=HG20%2Cbundle2%3DHG20%250Astream%253Dv2&cg=0&co", "mmon=0000&stream=1", "0.1")
	f.Add("%zz", "a=%", "&&=", "comp=")
	f.Fuzz(func(t *testing.T, query, h1, h2, proto string) {
		req, err := http.NewRequest("GET", "http://127.0.0.1/", nil)
		if err != nil {
			return
		}
		req.URL.RawQuery = query
		req.Header["X-Hgarg-1"] = []string{h1}
		req.Header["X-Hgarg-2"] = []string{h2}
		req.Header["X-Hgproto-1"] = []string{proto}
		args, err := requestArgs(req)
		if err == nil {
			if _, ok := args["cmd"]; ok {
				t.Fatal("cmd leaked into the arguments")
			}
			g, err := decodeGetbundleArgs(args)
			if err == nil {
				g.bundle2()
				for _, n := range append(g.heads, g.common...) {
					if !ValidHex(n) {
						t.Fatalf("invalid node %q accepted", n)
					}
				}
			}
		}
		if _, err := parseProtoCaps(req.Header); err != nil {
			t.Fatal(err)
		}
	})
}
