package streamclone

import (
	"errors"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/store"
)

func TestCheckSupported(t *testing.T) {
	if err := checkSupported(store.DefaultRequirements().List()); err != nil {
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
