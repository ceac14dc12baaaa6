//go:build linux

package mount

import (
	"os"
	"strings"
)

// Mounted is one hgfs mount in the mount table: what it serves (the
// cache directory or repository, its FsName) and where.
type Mounted struct {
	Source, Mountpoint string
}

// Mounts lists the hgfs mounts (type fuse.hgfs) in this process's mount
// namespace, from /proc/self/mountinfo (fields 5 and, after the " - "
// separator, 2; octal escapes undone).
func Mounts() ([]Mounted, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	unescape := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	var out []Mounted
	for _, line := range strings.Split(string(data), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 2 || g[0] != "fuse.hgfs" {
			continue
		}
		out = append(out, Mounted{Source: unescape.Replace(g[1]), Mountpoint: unescape.Replace(f[4])})
	}
	return out, nil
}
