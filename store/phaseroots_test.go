package store

import (
	"strings"
	"testing"
)

func TestPhaseRoots(t *testing.T) {
	a, b := strings.Repeat("ab", 20), strings.Repeat("01", 20)
	in := "2 " + a + "\n1 " + a + "\n1 " + b + "\n\n1 " + b + "\n"
	roots, err := ParsePhaseRoots([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(roots[1]) != 3 || len(roots[2]) != 1 {
		t.Fatalf("roots %v", roots)
	}
	// phasecache._write: phases in order, nodes sorted, each once.
	want := "1 " + b + "\n1 " + a + "\n2 " + a + "\n"
	if got := string(roots.Format()); got != want {
		t.Errorf("Format:\n%s\nwant:\n%s", got, want)
	}
	for _, bad := range []string{
		"1\n", "1 " + a + " x\n", "x " + a + "\n", "3 " + a + "\n", "-1 " + a + "\n",
		"1 " + a[:38] + "\n", "1 " + strings.Repeat("zz", 20) + "\n",
	} {
		if _, err := ParsePhaseRoots([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if roots, err := ParsePhaseRoots(nil); err != nil || len(roots) != 0 {
		t.Errorf("empty: %v %v", roots, err)
	}
}
