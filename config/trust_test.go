package config

import (
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// nobody gives path to the system's nobody user and its group (as root)
// and returns their names.
func nobody(t *testing.T, path string) (owner, group string) {
	t.Helper()
	if os.Getuid() != 0 {
		testenv.Missing(t, "root (the test gives a file to another user)")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
	return userName(uid), groupName(gid)
}

// TestUntrustedFile follows ui.readconfig: a file owned by another user
// is read into the untrusted view only, with hg's warning; its includes
// and %unset stay there too; a parse error in it is a warning.
func TestUntrustedFile(t *testing.T) {
	dir := t.TempDir()
	inc := write(t, filepath.Join(dir, "inc.rc"), "[ui]\nssh = included\n")
	hgrc := write(t, filepath.Join(dir, "repo", ".hg", "hgrc"),
		"%include ../../inc.rc\n[ui]\nremotecmd = untrusted\n%unset username\n[trusted]\nusers = *\nbad line\n[ui]\nafter = parse error\n")
	owner, group := nobody(t, hgrc)

	base := New()
	base.Set("ui", "username", "trusted user", "--config")
	var warned []string
	base.Warn = func(m string) { warned = append(warned, m) }

	c := base.Copy()
	if err := c.ReadFile(hgrc); err != nil {
		t.Fatalf("a parse error in an untrusted file must not abort: %v", err)
	}
	want := []string{
		"not trusting file " + hgrc + " from untrusted user " + owner + ", group " + group + "\n",
		"ignored " + hgrc + ":7: bad line\n",
	}
	if !reflect.DeepEqual(warned, want) {
		t.Errorf("warnings %q, want %q", warned, want)
	}
	for _, k := range [][2]string{{"ui", "ssh"}, {"ui", "remotecmd"}, {"trusted", "users"}, {"ui", "after"}} {
		if it, ok := c.Lookup(k[0], k[1]); ok {
			t.Errorf("%s.%s = %q from an untrusted file", k[0], k[1], it.Value)
		}
	}
	if v := c.String("ui", "username", ""); v != "trusted user" {
		t.Errorf("untrusted %%unset reached the trusted value: %q", v)
	}
	if got := c.Untrusted().String("ui", "ssh", ""); got != "included" {
		t.Errorf("untrusted view ui.ssh = %q", got)
	}
	if it, ok := c.Untrusted().Lookup("ui", "ssh"); !ok || it.Source != inc+":2" {
		t.Errorf("untrusted view ui.ssh source %q", it.Source)
	}
	if _, ok := c.Untrusted().Lookup("ui", "username"); ok {
		t.Errorf("%%unset missed the untrusted view")
	}
	if got := c.Ignored("ui"); !reflect.DeepEqual(got, []string{"ssh", "remotecmd"}) {
		t.Errorf("Ignored(ui) = %q", got)
	}
	var debug []string
	c.Debug = func(m string) { debug = append(debug, m) }
	c.String("ui", "ssh", "ssh")
	if want := []string{"ignoring untrusted configuration option ui.ssh = included\n"}; !reflect.DeepEqual(debug, want) {
		t.Errorf("debug %q, want %q", debug, want)
	}
	// [trusted] users = * in the untrusted file trusted nothing.
	if c.trust.users["*"] {
		t.Errorf("an untrusted file extended [trusted]")
	}

	// ui.report_untrusted=false silences the warning, --debug brings it back.
	for _, tc := range []struct {
		set  [][2]string
		warn bool
	}{{[][2]string{{"report_untrusted", "false"}}, false}, {[][2]string{{"report_untrusted", "false"}, {"debug", "true"}}, true}} {
		c := base.Copy()
		warned = nil
		for _, kv := range tc.set {
			c.Set("ui", kv[0], kv[1], "--config")
		}
		if err := c.ReadFile(hgrc); err != nil {
			t.Fatal(err)
		}
		if got := len(warned) > 0 && strings.HasPrefix(warned[0], "not trusting"); got != tc.warn {
			t.Errorf("%v: warned %q", tc.set, warned)
		}
		if _, ok := c.Lookup("ui", "ssh"); ok {
			t.Errorf("%v: untrusted value used", tc.set)
		}
	}

	// Trusted by [trusted] users or groups, by name or '*', from a
	// trusted file or --config: values used, no warning.
	for _, rc := range []string{"users = " + owner, "groups = " + group, "users = *", "groups = *", "users = alice, \"" + owner + "\""} {
		c := New()
		warned = nil
		c.Warn = base.Warn
		if err := c.Parse("trusted.rc", []byte("[trusted]\n"+rc+"\n")); err != nil {
			t.Fatal(err)
		}
		c.noteTrust() // as readFile does after a trusted file
		if err := c.ReadFile(hgrc); err == nil {
			t.Errorf("%s: a trusted file's parse error was not reported", rc)
		}
		if len(warned) != 0 || c.String("ui", "ssh", "") != "included" || c.String("ui", "remotecmd", "") != "untrusted" {
			t.Errorf("%s: warned %q, ui.ssh %q", rc, warned, c.String("ui", "ssh", ""))
		}
	}
	c = New()
	c.Set("trusted", "users", owner, "--config")
	if write(t, hgrc, "[ui]\nssh = x\n"); c.ReadFile(hgrc) != nil || c.String("ui", "ssh", "") != "x" {
		t.Errorf("--config trusted.users did not trust the file")
	}
	// The trusted sets only grow, as hg's: a later file setting other
	// users does not take back the earlier ones.
	c = New()
	c.Set("trusted", "users", owner, "a.rc")
	c.Set("trusted", "users", "alice", "b.rc")
	if c.ReadFile(hgrc); c.String("ui", "ssh", "") != "x" {
		t.Errorf("trusted users shrank")
	}
}

// TestOwnFileTrusted: a file the current user owns needs no [trusted].
func TestOwnFileTrusted(t *testing.T) {
	p := write(t, filepath.Join(t.TempDir(), "hgrc"), "[ui]\nssh = mine\n")
	c := New()
	c.Warn = func(m string) { t.Errorf("warned %q", m) }
	if err := c.ReadFile(p); err != nil || c.String("ui", "ssh", "") != "mine" {
		t.Errorf("own file: %v, %q", err, c.String("ui", "ssh", ""))
	}
}

// TestParseList compares ParseList with hg's stringutil.parselist.
func TestParseList(t *testing.T) {
	inputs := []string{
		"", " ", ",", "a", "a b", "a,b", "a, b ,c", "this,is \"a small\" ,test",
		"\"\"", "\"a\" \"b\"", "\"unterminated", "a \"unterminated b", "\"a\\\"b\" c",
		"a\\\"b", "\"a\"b", "\"a\" ,\"", "\"a\"\"", "\n a\tb\n", " ,, a,,b ,,", "\"\" a", "\"a, b\", c",
		"\"a b", "x\"y z\"", "\"", "\"\"\"", "a,\"b c\"d", "'a b'", "\"a\" \"\"",
	}
	data, _ := json.Marshal(inputs)
	script := `import json, sys
from mercurial.utils import stringutil
out = [[p.decode('latin1') for p in stringutil.parselist(s.encode('latin1'))] for s in json.loads(sys.argv[1])]
print(json.dumps(out))`
	cmd := testenv.HgPython(t, script, string(data))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hg's parselist: %v", err)
	}
	var want [][]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, in := range inputs {
		got := ParseList(in)
		if len(got) == 0 && len(want[i]) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("ParseList(%q) = %q, hg %q", in, got, want[i])
		}
	}
}
