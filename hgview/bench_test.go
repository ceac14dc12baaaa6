package hgview

import (
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// BenchmarkTreeRead looks up and reads every file of tip with a fresh
// view (nothing cached), without FUSE: the view's own share of a first
// grep -r over .hgfs/rev/tip.
//
//	go test -run '^$' -bench TreeRead -benchtime 3x ./hgview/
func BenchmarkTreeRead(b *testing.B) {
	repo := testenv.Generate(b, testenv.Large(3000))
	var walkDir func(v *View, d *Node) int
	walkDir = func(v *View, d *Node) int {
		ents, err := v.ReadDir(d)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, e := range ents {
			c, err := v.Lookup(d, e.Name)
			if err != nil {
				b.Fatal(err)
			}
			if c.IsDir() {
				n += walkDir(v, c)
				continue
			}
			if _, err := v.GetAttr(c); err != nil {
				b.Fatal(err)
			}
			if _, err := v.Content(c); err != nil {
				b.Fatal(err)
			}
			n++
		}
		return n
	}
	for i := 0; i < b.N; i++ {
		v, err := OpenDir(repo, Options{})
		if err != nil {
			b.Fatal(err)
		}
		tip, err := v.Lookup(v.fixed(offRev, kindRevDir, ""), "tip")
		if err != nil {
			b.Fatal(err)
		}
		files := walkDir(v, tip)
		v.Close()
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(files*(i+1)), "ns/file")
	}
}
