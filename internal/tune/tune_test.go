package tune

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want: Settings.String()
		bad      []string
	}{
		{"", "", nil},
		{" , ,", "", nil},
		{"-uring", "-uring", nil},
		{"-uring,-yield,-schedbatch,-procs,-walkfork,-silencestderr", "-uring,-yield,-procs,-walkfork,-silencestderr", nil},
		{"schedbatch", "+schedbatch", nil},
		{"+schedbatch,-uring", "-uring,+schedbatch", nil},
		{"schedbatch=1,schedbatch=0", "", nil},
		{"-yield,yield", "", nil},
		{"-yield,+yield", "", nil},
		{"yield=0, walkfork=0", "-yield,-walkfork", nil},
		{"-walkfork,walkfork=1", "", nil},
		{"-bufpool,checkoutgc=0", "-bufpool,-checkoutgc", nil},
		{"-checkoutgc,+checkoutgc,bufpool", "", nil},
		{"-uring,-bogus", "-uring", []string{`"-bogus" (unknown trick)`}},
		{"yield=2,-procs", "-procs", []string{`"yield=2" (the value must be 0 or 1)`}},
		{"-Yield", "", []string{`"-Yield" (unknown trick)`}},
		{"-yield=0", "", []string{`"-yield=0" (unknown trick)`}},
	} {
		s, err := Parse(tc.in)
		if got := s.String(); got != tc.want {
			t.Errorf("Parse(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if len(tc.bad) == 0 {
			if err != nil {
				t.Errorf("Parse(%q): %v", tc.in, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Parse(%q): no error", tc.in)
			continue
		}
		for _, b := range tc.bad {
			if !strings.Contains(err.Error(), b) {
				t.Errorf("Parse(%q): error %q does not name %s", tc.in, err, b)
			}
		}
		if !strings.Contains(err.Error(), EnvVar) || !strings.Contains(err.Error(), strings.Join(Names(), ", ")) {
			t.Errorf("Parse(%q): error %q should name %s and list the tricks", tc.in, err, EnvVar)
		}
	}
}

func TestTricksRoundTrip(t *testing.T) {
	if len(Tricks()) != len(Names()) {
		t.Fatalf("%d tricks, %d names", len(Tricks()), len(Names()))
	}
	for _, tr := range Tricks() {
		got, ok := Lookup(tr.String())
		if !ok || got != tr {
			t.Errorf("Lookup(%q) = %v, %v", tr, got, ok)
		}
		var all Settings
		if !all.Enabled(tr) {
			t.Errorf("%s is off in the zero Settings", tr)
		}
		if Default().Enabled(tr) != tr.OnByDefault() || tr.OnByDefault() != (tr != SchedBatch) {
			t.Errorf("%s: on by default %v, in Default %v", tr, tr.OnByDefault(), Default().Enabled(tr))
		}
		off := all.With(tr, false)
		for _, other := range Tricks() {
			if off.Enabled(other) != (other != tr) {
				t.Errorf("With(%s, false).Enabled(%s) = %v", tr, other, off.Enabled(other))
			}
		}
		back, err := Parse(off.String())
		if err != nil || back != off {
			t.Errorf("Parse(%q) = %v, %v; want %v", off.String(), back, err, off)
		}
	}
}
