package streamclone

import (
	"errors"
	"strings"
	"testing"
)

func TestNewStreamCloneRequirements(t *testing.T) {
	for _, tc := range []struct {
		defaults, streamed []string
		want               string
	}{
		// zlib source: the local zstd default is dropped (stream-fixed).
		{DefaultRequirements(), []string{"generaldelta", "revlogv1", "sparserevlog"},
			"dotencode fncache generaldelta revlogv1 share-safe sparserevlog store"},
		{DefaultRequirements(), []string{"generaldelta", "revlog-compression-zstd", "revlogv1", "sparserevlog", "treemanifest"},
			"dotencode fncache generaldelta revlog-compression-zstd revlogv1 share-safe sparserevlog store treemanifest"},
		// Local choices that are not stream-fixed are kept.
		{[]string{"store", "fncache", "persistent-nodemap", "revlogv1"}, []string{"revlogv1"},
			"fncache persistent-nodemap revlogv1 store"},
	} {
		if got := strings.Join(NewStreamCloneRequirements(tc.defaults, tc.streamed), " "); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestRequiresFiles(t *testing.T) {
	wc, st := requiresFiles([]string{"store", "share-safe", "revlogv1", "dirstate-v2"})
	if wc != "dirstate-v2\nshare-safe\n" || st != "revlogv1\nstore\n" {
		t.Errorf("share-safe: %q %q", wc, st)
	}
	wc, st = requiresFiles([]string{"store", "revlogv1"})
	if wc != "revlogv1\nstore\n" || st != "" {
		t.Errorf("no share-safe: %q %q", wc, st)
	}
}

func TestCheckSupported(t *testing.T) {
	if err := checkSupported(DefaultRequirements()); err != nil {
		t.Fatal(err)
	}
	err := checkSupported([]string{"revlogv1", "zz-new", "", "aa-new"})
	if !errors.Is(err, ErrUnsupportedRequirement) || !strings.HasSuffix(err.Error(), "unsupported format: , aa-new, zz-new") {
		t.Fatalf("got %v", err)
	}
	if splitRequirements("") != nil || len(splitRequirements("a,b")) != 2 {
		t.Error("splitRequirements")
	}
}
