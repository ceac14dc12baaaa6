package main

// The mount helper form: mount(8) and /etc/fstab mount a filesystem of
// type fuse.hgfs through mount.fuse3, which runs "hgfs CACHE MOUNTPOINT
// -o OPTIONS" (with no PATH in its environment). helperForm turns that
// into "hgfs mount [flags] -- CACHE MOUNTPOINT"; the mount goes to the
// background as usual, which is what mount.fuse3 waits for.

import (
	"strings"
)

// helperForm recognises the helper's command line: two absolute paths
// first (no command name starts with "/"), then -o options. It returns
// the equivalent hgfs mount command line.
func helperForm(args []string) ([]string, bool, error) {
	if len(args) < 2 || !strings.HasPrefix(args[0], "/") || !strings.HasPrefix(args[1], "/") {
		return nil, false, nil
	}
	out := []string{"mount"}
	for i := 2; i < len(args); i++ {
		var list string
		switch a := args[i]; {
		case a == "-o" && i+1 < len(args):
			i++
			list = args[i]
		case strings.HasPrefix(a, "-o") && len(a) > 2:
			list = a[2:]
		default:
			return nil, false, abortf("mount helper: unexpected argument %q", a).withHint("mount.fuse3 runs: hgfs CACHE MOUNTPOINT -o OPTIONS")
		}
		for _, o := range strings.Split(list, ",") {
			flags, err := helperOption(o)
			if err != nil {
				return nil, false, err
			}
			out = append(out, flags...)
		}
	}
	return append(out, "--", args[0], args[1]), true, nil
}

// helperOption translates one -o option into hgfs mount's flags. The
// generic options mount(8) or the kernel deal with, or that say nothing
// to hgfs, are accepted and dropped; anything else unknown is an error,
// never silently ignored.
func helperOption(o string) ([]string, error) {
	key, val, hasVal := strings.Cut(o, "=")
	switch key {
	case "", "rw", "defaults", "dev", "nodev", "suid", "nosuid", "exec", "noexec",
		"atime", "noatime", "relatime", "strictatime", "diratime", "nodiratime",
		"auto", "noauto", "user", "nouser", "users", "owner", "_netdev", "nofail", "async":
		if !hasVal {
			return nil, nil
		}
	case "comment":
		return nil, nil
	case "ro":
		if !hasVal {
			return []string{"--read-only"}, nil
		}
	case "allow_other":
		if !hasVal {
			return []string{"--allow-other"}, nil
		}
	case "create":
		if !hasVal {
			return []string{"--create"}, nil
		}
	case "allow_non_empty", "nonempty":
		if !hasVal {
			return []string{"--allow-non-empty"}, nil
		}
	case "log":
		if val != "" {
			return []string{"--log", val}, nil
		}
	case "backend":
		if val != "" {
			return []string{"--backend", val}, nil
		}
	case "config":
		if val != "" {
			return []string{"--config", val}, nil
		}
	default:
		if strings.HasPrefix(key, "x-") {
			return nil, nil // for other programs (x-systemd.automount, ...)
		}
	}
	return nil, abortf("mount helper: unsupported option '%s'", o).
		withHint("hgfs takes ro, allow_other, create, allow_non_empty, log=FILE, backend=NAME, config=SECTION.NAME=VALUE and the generic mount options")
}
