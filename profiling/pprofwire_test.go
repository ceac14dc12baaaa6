package profiling

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// pprofCosts is aggregate's result computed from google/pprof's reading
// of the same profile: per function name, flat and cum, and the total.
func pprofCosts(t *testing.T, data []byte) (map[string][2]int64, int64, string) {
	t.Helper()
	p, err := profile.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	vi := len(p.SampleType) - 1
	costs := map[string][2]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[vi]
		total += v
		seen := map[uint64]bool{}
		for li, loc := range s.Location {
			for lj, ln := range loc.Line {
				if ln.Function == nil {
					continue
				}
				c := costs[ln.Function.Name]
				if li == 0 && lj == 0 {
					c[0] += v
				}
				if !seen[ln.Function.ID] {
					seen[ln.Function.ID] = true
					c[1] += v
				}
				costs[ln.Function.Name] = c
			}
		}
	}
	return costs, total, p.SampleType[vi].Type + "/" + p.SampleType[vi].Unit
}

func costLines(costs map[string][2]int64) string {
	var lines []string
	for name, c := range costs {
		lines = append(lines, fmt.Sprintf("%s %d %d", name, c[0], c[1]))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// realProfiles are profiles this process writes: CPU (with inlined
// frames), heap, and goroutines, gzipped as runtime/pprof writes them
// and not.
func realProfiles(t *testing.T) map[string][]byte {
	t.Helper()
	var cpu bytes.Buffer
	if err := pprof.StartCPUProfile(&cpu); err != nil {
		t.Fatal(err)
	}
	sink := 0
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
		for i := range 100_000 {
			sink += i % 7
			if i%5000 == 0 {
				_ = fmt.Sprint(sink) // allocations, and calls below main
			}
		}
	}
	pprof.StopCPUProfile()
	runtime.GC()
	out := map[string][]byte{"cpu": cpu.Bytes()}
	for _, name := range []string{"heap", "goroutine", "allocs"} {
		var b bytes.Buffer
		if err := pprof.Lookup(name).WriteTo(&b, 0); err != nil {
			t.Fatal(err)
		}
		out[name] = b.Bytes()
	}
	zr, err := gzip.NewReader(bytes.NewReader(out["heap"]))
	if err != nil {
		t.Fatal(err)
	}
	if out["heap, not gzipped"], err = io.ReadAll(zr); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPprofReaderLikePprof: on real profiles, the reader here finds
// what google/pprof's finds (each function's flat and cumulative cost,
// the total and its unit), and a rewrite that drops no sample reads
// back the same.
func TestPprofReaderLikePprof(t *testing.T) {
	for name, data := range realProfiles(t) {
		t.Run(name, func(t *testing.T) {
			want, wantTotal, wantUnit := pprofCosts(t, data)
			p, err := parsePprof(data)
			if err != nil {
				t.Fatal(err)
			}
			funcs, total, unit := aggregate(p)
			got := map[string][2]int64{}
			for _, f := range funcs {
				c := got[f.name]
				got[f.name] = [2]int64{c[0] + f.flat, c[1] + f.cum}
			}
			if total != wantTotal || unit != wantUnit || costLines(got) != costLines(want) {
				t.Errorf("total %d %s, google/pprof %d %s; costs:\n%s\ngoogle/pprof:\n%s", total, unit, wantTotal, wantUnit, costLines(got), costLines(want))
			}
			if len(want) == 0 && name == "cpu" {
				t.Errorf("the CPU profile has no samples")
			}
			var rewritten bytes.Buffer
			if err := p.write(&rewritten, func(pprofSample) bool { return false }); err != nil {
				t.Fatal(err)
			}
			again, againTotal, _ := pprofCosts(t, rewritten.Bytes())
			if againTotal != wantTotal || costLines(again) != costLines(want) {
				t.Errorf("the rewritten profile reads differently")
			}
		})
	}
}

// FuzzParsePprof: any input is read or refused, never a panic, and
// what is read aggregates.
func FuzzParsePprof(f *testing.F) {
	var heap bytes.Buffer
	pprof.Lookup("heap").WriteTo(&heap, 0)
	zr, _ := gzip.NewReader(&heap)
	raw, _ := io.ReadAll(zr)
	f.Add(raw)
	f.Add([]byte{0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x32, 0x00, 0x32, 0x01, 0x78})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parsePprof(data)
		if err != nil {
			return
		}
		aggregate(p)
		var b bytes.Buffer
		if err := writeText(&b, data, 10); err != nil {
			t.Fatalf("read, then not written as text: %v", err)
		}
		if err := writeCallgrind(&b, data); err != nil {
			t.Fatalf("read, then not written for callgrind: %v", err)
		}
	})
}

// TestNextField: each wire type is cut at its end, and what is cut short
// or is not profile.proto's is an error.
func TestNextField(t *testing.T) {
	for _, c := range []struct {
		in        []byte
		num       uint64
		typ       wireType
		val, rest string
	}{
		{[]byte{0x08, 0x96, 0x01, 0xff}, 1, wireVarint, "\x96\x01", "\xff"},
		{[]byte{0x12, 0x02, 'a', 'b', 'c'}, 2, wireBytes, "ab", "c"},
		{[]byte{0x19, 1, 2, 3, 4, 5, 6, 7, 8}, 3, wireFixed64, "\x01\x02\x03\x04\x05\x06\x07\x08", ""},
		{[]byte{0x25, 1, 2, 3, 4}, 4, wireFixed32, "\x01\x02\x03\x04", ""},
	} {
		num, typ, val, rest, err := nextField(c.in)
		if err != nil || num != c.num || typ != c.typ || string(val) != c.val || string(rest) != c.rest {
			t.Errorf("nextField(%x) = %d %d %q %q %v", c.in, num, typ, val, rest, err)
		}
	}
	for _, in := range [][]byte{
		{},                             // no tag
		{0x08},                         // a varint cut short
		{0x08, 0x80},                   // a varint cut short
		{0x12, 0x05, 'a'},              // contents longer than the message
		{0x19, 1, 2},                   // a fixed64 cut short
		{0x0b},                         // a group
		{0x00, 0x01},                   // field number 0
		bytes.Repeat([]byte{0xff}, 11), // a tag over 64 bits
	} {
		if _, _, _, _, err := nextField(in); err == nil {
			t.Errorf("nextField(%x): no error", in)
		}
	}
}
