package mount

// The virtual working copy's control channel: the extended attribute
// user.hgfs.virtual of a regular file of a cache mount. Reading it
// answers whether the file is virtual (fsnode's virtual.go) and which
// file revision it shows ("NODEHEX PATH"; ENODATA for a file whose
// contents are in the cache); setting it to "NODEHEX SIZE MTIME PATH"
// (MTIME in unix nanoseconds) makes the file that revision, SIZE bytes,
// modified at MTIME, without writing its bytes: how hgfs update moves a
// mounted working copy. The daemon invalidates the kernel's pages and
// attributes of the file before it answers. The attribute is never
// stored and never listed.

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/revlog"
)

// VirtualXattr is the control channel's attribute name.
const VirtualXattr = "user.hgfs.virtual"

// VirtualSet is a request to make a file virtual.
type VirtualSet struct {
	Ref   fsnode.VirtualRef
	Size  uint64
	Mtime time.Time
}

// Encode returns the attribute value that asks for s.
func (s VirtualSet) Encode() []byte {
	return fmt.Appendf(nil, "%x %d %d %s", s.Ref.Node, s.Size, s.Mtime.UnixNano(), s.Ref.Path)
}

// ParseVirtualSet parses a value set on VirtualXattr.
func ParseVirtualSet(v []byte) (VirtualSet, error) {
	var s VirtualSet
	f := strings.SplitN(string(v), " ", 4)
	if len(f) != 4 || len(f[0]) != 40 || f[3] == "" {
		return s, fmt.Errorf("%s: want \"NODEHEX SIZE MTIME PATH\"", VirtualXattr)
	}
	if _, err := hex.Decode(s.Ref.Node[:], []byte(f[0])); err != nil {
		return s, fmt.Errorf("%s: node: %w", VirtualXattr, err)
	}
	size, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return s, fmt.Errorf("%s: size: %w", VirtualXattr, err)
	}
	mt, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return s, fmt.Errorf("%s: mtime: %w", VirtualXattr, err)
	}
	s.Ref.Path, s.Size, s.Mtime = f[3], size, time.Unix(0, mt)
	return s, nil
}

// MaxVirtualBatch bounds one value set on the mount's root: the kernel's
// XATTR_SIZE_MAX.
const MaxVirtualBatch = 64 << 10

// EncodeVirtualBatch returns the values that, set on VirtualXattr of the
// mount's root, make each file of sets (at the reference's path under
// the root) virtual: one line per file as VirtualSet.Encode, at most
// MaxVirtualBatch bytes a value. One request per value instead of one
// per file is what lets hgfs update cost little more than its dirstate.
func EncodeVirtualBatch(sets []VirtualSet) [][]byte {
	var out [][]byte
	var cur []byte
	for _, s := range sets {
		line := append(s.Encode(), '\n')
		if len(cur)+len(line) > MaxVirtualBatch && len(cur) > 0 {
			out, cur = append(out, cur), nil
		}
		cur = append(cur, line...)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// ParseVirtualBatch parses a value set on the root's VirtualXattr.
func ParseVirtualBatch(v []byte) ([]VirtualSet, error) {
	var out []VirtualSet
	for _, line := range strings.Split(strings.TrimSuffix(string(v), "\n"), "\n") {
		s, err := ParseVirtualSet([]byte(line))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// UpdateXattr prefixes the name of the attribute read from a cache
// mount's root to have its daemon move the virtual working copy at the
// root (hgfs update): UpdateXattr + "NODEHEX.UMASK.FLAGS", where UMASK
// is the caller's in octal and FLAGS "C" for -C (discard changes) or
// "-". The daemon does the whole update in the cache, with no request
// through the kernel per file, or declines it (the reply says why, and
// the caller updates through the mount's files as before). The value
// read is the reply (UpdateReply). A read, not a set: the kernel holds
// the root's lock during setxattr(2), and the daemon invalidates names
// in the root's directory entries as it changes them. The attribute is
// never listed and never stored.
const UpdateXattr = "user.hgfs.update."

// InfoXattr names the attribute read from a cache mount's root for what
// its stats file says of the mount itself (Info without the counters,
// as JSON): who serves it, from where, whether it takes virtual files.
// hgfs update asks before every update; the stats file is generated
// anew for every reader, with the cache's counters, and read in four
// requests (0.45-0.7 ms on the 20,000-file working copy, 4% of an
// update), the attribute in one, answered from bytes made at mount
// time. Never listed, never stored; other nodes have no such attribute.
const InfoXattr = "user.hgfs.info"

// UpdateRequest is what hgfs update asks of the daemon.
type UpdateRequest struct {
	Target revlog.Node // the changeset to move to
	Umask  uint32      // the caller's: new files and directories get 0666 and 0777 without it
	Clean  bool        // discard uncommitted changes (hg update -C)
}

// Name returns the attribute name that asks for q.
func (q UpdateRequest) Name() string {
	flags := "-"
	if q.Clean {
		flags = "C"
	}
	return fmt.Sprintf("%s%x.%o.%s", UpdateXattr, q.Target[:], q.Umask&0o777, flags)
}

// ParseUpdateRequest parses an attribute name that starts with
// UpdateXattr.
func ParseUpdateRequest(name string) (UpdateRequest, error) {
	var q UpdateRequest
	f := strings.Split(strings.TrimPrefix(name, UpdateXattr), ".")
	if len(f) != 3 || len(f[0]) != 2*revlog.NodeLen || (f[2] != "-" && f[2] != "C") {
		return q, fmt.Errorf("%s: want NODEHEX.UMASK.FLAGS", UpdateXattr)
	}
	if _, err := hex.Decode(q.Target[:], []byte(f[0])); err != nil {
		return q, fmt.Errorf("%s: node: %w", UpdateXattr, err)
	}
	u, err := strconv.ParseUint(f[1], 8, 32)
	if err != nil || u > 0o777 {
		return q, fmt.Errorf("%s: umask %q", UpdateXattr, f[1])
	}
	q.Umask, q.Clean = uint32(u), f[2] == "C"
	return q, nil
}

// UpdateReply is the daemon's answer to an UpdateRequest: done (the
// counts hg's summary line gives and the target's branch), declined
// (Declined says why), refused for uncommitted changes (Dirty, the first
// paths in order and whether there were more), or failed (Failed, the
// error in words; the working copy is then as an interrupted update
// leaves it).
type UpdateReply struct {
	Updated, Removed int
	Branch           string
	Declined         string
	Dirty            []string
	MoreDirty        bool
	Failed           string
}

// Encode returns the reply's value: "ok UPDATED REMOVED BRANCH",
// "declined REASON", "failed ERROR", or "dirty MORE" and a line per path.
func (p UpdateReply) Encode() []byte {
	switch {
	case p.Failed != "":
		return []byte("failed " + p.Failed)
	case p.Declined != "":
		return []byte("declined " + p.Declined)
	case len(p.Dirty) > 0:
		out := fmt.Appendf(nil, "dirty %t", p.MoreDirty)
		for _, d := range p.Dirty {
			out = append(append(out, '\n'), d...)
		}
		return out
	}
	return fmt.Appendf(nil, "ok %d %d %s", p.Updated, p.Removed, p.Branch)
}

// ParseUpdateReply parses the value read from an UpdateXattr name.
func ParseUpdateReply(v []byte) (UpdateReply, error) {
	var p UpdateReply
	s := string(v)
	bad := fmt.Errorf("%s: unknown reply %q", UpdateXattr, s)
	switch {
	case strings.HasPrefix(s, "failed "):
		p.Failed = strings.TrimPrefix(s, "failed ")
		return p, nil
	case strings.HasPrefix(s, "declined "):
		p.Declined = strings.TrimPrefix(s, "declined ")
		return p, nil
	case strings.HasPrefix(s, "dirty "):
		lines := strings.Split(s, "\n")
		more, err := strconv.ParseBool(strings.TrimPrefix(lines[0], "dirty "))
		if err != nil || len(lines) < 2 {
			return p, bad
		}
		p.Dirty, p.MoreDirty = lines[1:], more
		return p, nil
	case strings.HasPrefix(s, "ok "):
		f := strings.SplitN(strings.TrimPrefix(s, "ok "), " ", 3)
		if len(f) != 3 {
			return p, bad
		}
		var err1, err2 error
		p.Updated, err1 = strconv.Atoi(f[0])
		p.Removed, err2 = strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			return p, bad
		}
		p.Branch = f[2]
		return p, nil
	}
	return p, bad
}
