package config

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestGetent: the user and group names /etc/passwd and /etc/group lack
// come from getent(1), which knows them however the system keeps them
// (here a getent of the test's own on PATH answers for numbers no file
// has, as NSS would for LDAP users); a number nobody names stays a
// number, as in hg.
func TestGetent(t *testing.T) {
	if _, err := exec.LookPath("getent"); err != nil {
		testenv.Missing(t, "getent is not on PATH (package libc-bin)")
	}
	if got := getent("passwd", "0"); got != "root" {
		t.Errorf("getent passwd 0: %q, want root", got)
	}
	if got := getent("group", "0"); got != "root" {
		t.Errorf("getent group 0: %q, want root", got)
	}
	bin := t.TempDir()
	script := `#!/bin/sh
case "$1 $2" in
"passwd 2147480011") echo "ldapuser:*:2147480011:2147480012::/home/ldapuser:/bin/sh" ;;
"group 2147480012") echo "ldapgroup:*:2147480012:" ;;
*) exit 2 ;;
esac
`
	if err := os.WriteFile(filepath.Join(bin, "getent"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if got := userName(2147480011); got != "ldapuser" {
		t.Errorf("userName of a user only getent knows: %q, want ldapuser", got)
	}
	if got := groupName(2147480012); got != "ldapgroup" {
		t.Errorf("groupName of a group only getent knows: %q, want ldapgroup", got)
	}
	if got := userName(2147480013); got != "2147480013" {
		t.Errorf("userName of a number nobody names: %q", got)
	}
}
