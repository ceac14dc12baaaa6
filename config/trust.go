package config

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"sync"
)

// Which hgrc files are trusted follows mercurial/ui.py (_trusted,
// readconfig, fixconfig; keep in sync). The system and user files, and
// HGRCPATH's, are always trusted; a repository's .hg/hgrc only when it
// is owned by the current user (root included: root trusts only what root
// owns), or its owner or group is listed in [trusted] users / groups ('*'
// for any) of the configuration read before it, or its owner has the
// current user's name. An untrusted file's values, and those of the files
// it includes, are read into the untrusted view only; hg warns
// "not trusting file FILE from untrusted user USER, group GROUP" unless
// ui.report_untrusted is off (--debug turns it back on), and a parse error
// in such a file is a warning ("ignored FILE:LINE: ...") instead of an
// abort.

// trust is the [trusted] users and groups seen so far. As in hg, the sets
// only grow: each trusted file and each --config adds what
// [trusted] then says.
type trust struct {
	users, groups map[string]bool
}

func (t trust) copy() trust {
	n := trust{users: map[string]bool{}, groups: map[string]bool{}}
	for k := range t.users {
		n.users[k] = true
	}
	for k := range t.groups {
		n.groups[k] = true
	}
	return n
}

// noteTrust adds the current [trusted] users and groups (fixconfig).
func (c *Config) noteTrust() {
	if c.trust.users == nil {
		c.trust = trust{users: map[string]bool{}, groups: map[string]bool{}}
	}
	for _, u := range c.List(TrustedUsers.Section, TrustedUsers.Name) {
		c.trust.users[u] = true
	}
	for _, g := range c.List(TrustedGroups.Section, TrustedGroups.Name) {
		c.trust.groups[g] = true
	}
}

// reportUntrusted is hg's ui._reportuntrusted.
func (c *Config) reportUntrusted() bool {
	debug, _ := c.GetBool(UIDebug)
	report, _ := c.GetBool(UIReportUntrusted)
	return debug || report
}

func (c *Config) warnf(format string, args ...any) {
	if c.Warn != nil {
		c.Warn(fmt.Sprintf(format, args...))
	}
}

// fileTrusted is ui._trusted for an open file: whether its values may
// be used, with hg's warning when not.
func (c *Config) fileTrusted(f *os.File, path string) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	uid, gid, ok := fileOwner(fi)
	if !ok || uid == os.Getuid() { // util.isowner; true where there are no owners
		return true, nil
	}
	if c.trust.users["*"] || c.trust.groups["*"] {
		return true, nil
	}
	owner, group := userName(uid), groupName(gid)
	if c.trust.users[owner] || c.trust.groups[group] || owner == userName(os.Getuid()) {
		return true, nil
	}
	if c.reportUntrusted() {
		c.warnf("not trusting file %s from untrusted user %s, group %s\n", path, owner, group)
	}
	return false, nil
}

// userName and groupName are util.username and util.groupname: the name,
// or the number when the system has no name for it. hgfs is built
// without cgo (the Makefile says why), so os/user reads /etc/passwd and
// /etc/group alone; a name only the system's other sources know (LDAP,
// systemd's userdb: the NSS modules hg's pwd and grp modules consult)
// comes from getent(1), asked only when those files lack the number.
func userName(uid int) string {
	id := strconv.Itoa(uid)
	if u, err := user.LookupId(id); err == nil {
		return u.Username
	}
	if name := getent("passwd", id); name != "" {
		return name
	}
	return id
}

func groupName(gid int) string {
	id := strconv.Itoa(gid)
	if g, err := user.LookupGroupId(id); err == nil {
		return g.Name
	}
	if name := getent("group", id); name != "" {
		return name
	}
	return id
}

// getent returns the name getent(1) gives for number id in database db
// (passwd or group), "" when it gives none or is not there. Answers are
// kept for the process: a user only NSS knows would otherwise cost a
// getent for each hgrc read that they do not own.
func getent(db, id string) string {
	key := db + " " + id
	if name, ok := getentNames.Load(key); ok {
		return name.(string)
	}
	name := ""
	if out, err := exec.Command("getent", db, id).Output(); err == nil {
		if n, _, ok := strings.Cut(string(out), ":"); ok {
			name = n
		}
	}
	getentNames.Store(key, name)
	return name
}

var getentNames sync.Map // "db id" -> name or ""
