package dirstate_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/hgfs/hgfs/dirstate"
)

// ReadBackV1 makes a dirstate ParseV1 of its AppendV1, entry for
// entry, for entries of every kind: each combination of the three
// tracking bits, with and without mode and size, mtimes with
// nanoseconds, ambiguous or absent, copy sources, v2 fallback bits, and
// entries v1 cannot record.
func TestReadBackV1(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 500 {
		d := &dirstate.Dirstate{}
		d.Parents[0][0], d.Parents[1][1] = byte(round), byte(round>>8)
		for i := range rng.IntN(30) {
			e := dirstate.Entry{
				Path:      fmt.Sprintf("d%d/f%d", rng.IntN(4), i),
				WCTracked: rng.IntN(2) == 0, P1Tracked: rng.IntN(2) == 0, P2Info: rng.IntN(4) == 0,
				Fallback: uint16(rng.IntN(3)),
			}
			if rng.IntN(4) > 0 {
				e.HasModeSize, e.Mode, e.Size = true, dirstate.ModeRegular|0o644|uint32(rng.IntN(2))*0o111, int32(rng.IntN(1<<20))
				if rng.IntN(5) == 0 {
					e.Mode = dirstate.ModeSymlink | 0o777
				}
			}
			if rng.IntN(4) > 0 {
				e.HasMtime = true
				e.Mtime = dirstate.Timestamp{Sec: int32(rng.IntN(1 << 30)), Nsec: uint32(rng.IntN(1e9)), SecondAmbiguous: rng.IntN(4) == 0}
			}
			if rng.IntN(6) == 0 {
				e.Copy = fmt.Sprintf("src%d", rng.IntN(9))
			}
			d.Entries = append(d.Entries, e)
		}
		bad := round%50 == 49 && len(d.Entries) > 0
		if bad {
			d.Entries[0].Path += "\x00"
			d.Entries[0].WCTracked = true
		}
		v1, encErr := d.AppendV1(nil)
		got := &dirstate.Dirstate{Parents: d.Parents, Entries: slices.Clone(d.Entries)}
		err := got.ReadBackV1()
		if (err != nil) != (encErr != nil) || bad != (err != nil) {
			t.Fatalf("round %d: ReadBackV1 error %v, AppendV1's %v", round, err, encErr)
		}
		if err != nil {
			continue
		}
		want, err := dirstate.ParseV1(v1)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Entries) == 0 {
			want.Entries = got.Entries[:0] // an empty slice either way
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d:\n got %+v\nwant %+v", round, got, want)
		}
	}
}
