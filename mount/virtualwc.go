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
