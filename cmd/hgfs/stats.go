package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"sort"

	"github.com/hgfs/hgfs/mount"
)

func init() {
	register(&command{
		name:     "stats",
		synopsis: "[--json] MOUNTPOINT",
		help: `show the state of an hgfs mount

Prints the daemon's pid and source, and for a cache mount the background
committer's counters (queue depth and capacity, commits, batches) and the
data files' (their count, live and dead bytes, compaction runs). The
figures come from MOUNTPOINT/.hgfs/stats, a file the mount serves (and
keeps out of directory listings); --json prints it as is.`,
		options: []option{{0, "json", optBool, "", "print the raw JSON"}},
		run: func(ctx context.Context, c *cmdContext, args []string) error {
			if len(args) != 1 {
				return &usageError{msg: "invalid arguments"}
			}
			mp := c.abs(args[0])
			if c.opts.Bool("json") {
				data, err := os.ReadFile(mount.StatsPath(mp))
				if err != nil {
					return abortf("%s is not an hgfs mount", args[0])
				}
				c.ui.write("%s", data)
				return nil
			}
			info, err := mount.ReadInfo(mp)
			if errors.Is(err, mount.ErrNotMounted) {
				return abortf("%s is not an hgfs mount", args[0])
			}
			if err != nil {
				return abortf("%s: %v", args[0], errorsCause(err))
			}
			c.ui.write("mountpoint: %s\n", info.Mountpoint)
			c.ui.write("source: %s (%s)\n", info.Source, info.Kind)
			c.ui.write("pid: %d\n", info.Pid)
			if info.Stats == nil {
				return nil
			}
			// Print every counter fsnode reports, not only the ones
			// known here, sorted by name.
			raw, err := json.Marshal(info.Stats)
			if err != nil {
				return err
			}
			var m map[string]any
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber() // print counters as integers, not 3e+06
			if err := dec.Decode(&m); err != nil {
				return err
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				c.ui.write("%s: %v\n", k, m[k])
			}
			return nil
		},
	})
}
