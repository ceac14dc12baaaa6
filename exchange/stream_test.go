package exchange

import (
	"net/url"
	"reflect"
	"testing"

	"github.com/hgfs/hgfs/wireproto"
)

// TestPlanStream: the stream a server's capabilities allow, as
// streamclone.canperformstreamclone decides it.
func TestPlanStream(t *testing.T) {
	b2v2 := "bundle2=" + url.QueryEscape("HG20\nstream=v2")
	for _, c := range []struct {
		name, caps string
		want       StreamPlan
	}{
		{"disabled", "lookup branchmap " + b2v2, StreamPlan{Disabled: true}},
		{"stream alone", "stream", StreamPlan{Kind: StreamV1}},
		{"streamreqs v1", "streamreqs=generaldelta,revlogv1", StreamPlan{Kind: StreamV1, Requirements: []string{"generaldelta", "revlogv1"}}},
		{"streamreqs v2", "streamreqs=generaldelta,revlogv1 " + b2v2, StreamPlan{Kind: StreamV2, Requirements: []string{"generaldelta", "revlogv1"}}},
		{"missing", "streamreqs=revlogv1,delta-info-revlog,zz-unknown " + b2v2,
			StreamPlan{Requirements: []string{"revlogv1", "delta-info-revlog", "zz-unknown"}, Missing: []string{"delta-info-revlog", "zz-unknown"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			caps, err := wireproto.ParseCaps([]byte(c.caps))
			if err != nil {
				t.Fatal(err)
			}
			got, err := PlanStream(caps)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("PlanStream(%q) = %+v, want %+v", c.caps, got, c.want)
			}
		})
	}
}
