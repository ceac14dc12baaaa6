package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"unicode"

	"github.com/hgfs/hgfs/mount"
)

// statsLabels are the human names and units of fsnode.Stats's counters
// (by JSON name), in printing order. A counter not listed here is still
// printed, under its name in words.
var statsLabels = []struct {
	key, label string
	bytes      bool
}{
	{"QueueDepth", "inodes waiting to commit", false},
	{"QueueCap", "commit queue capacity (inodes)", false},
	{"Commits", "index commits", false},
	{"Batches", "group commits", false},
	{"Items", "inode records committed", false},
	{"DataBytes", "data written", true},
	{"InlineBytes", "inline data written", true},
	{"DataFiles", "data files", false},
	{"LiveBytes", "live data", true},
	{"DeadBytes", "dead data", true},
	{"Compactions", "compactions", false},
	{"CompactedBytes", "compaction copied", true},
	{"ReclaimedBytes", "compaction reclaimed", true},
	{"LoadedInodes", "inodes in memory", false},
	{"OpenHandles", "open file handles", false},
	{"VirtualFiles", "virtual files (contents not in the cache)", false},
	{"MaterializedFiles", "virtual files copied on write since mounted", false},
}

func init() {
	register(&command{
		name:     "stats",
		synopsis: "[-T json] MOUNTPOINT",
		help: `show the state of an hgfs mount

Prints the daemon's pid and source, and for a cache mount the background
committer's counters (inodes waiting to commit, index and group commits)
and the data files' (their count, live and dead data, compactions), the
virtual working copy's (files naming their revision, files copied into
the cache on their first write since mounted, hgfs updates the daemon
did itself), byte
counts in hg's units with the exact count in parentheses. The figures come
from MOUNTPOINT/.hgfs/stats, a file the mount serves (and keeps out of
directory listings); -T json (or --json) prints it as it is, for scripts.`,
		options: []option{
			{'T', "template", optString, "", "display with template (json only)"},
			{0, "json", optBool, "", "print the raw JSON (as -T json)"},
		},
		run: runStats,
	})
}

func runStats(ctx context.Context, c *cmdContext, args []string) error {
	if len(args) != 1 {
		return &usageError{msg: "invalid arguments"}
	}
	switch t := c.opts.String("template"); t {
	case "", "json":
	default:
		return abortf("hgfs stats: template %q is not supported", t).withHint("-T json prints the figures as JSON")
	}
	mp := c.abs(args[0])
	info, data, err := mount.ReadStats(mp)
	if errors.Is(err, mount.ErrNotMounted) {
		return abortf("%s is not an hgfs mount", args[0])
	}
	if err != nil {
		return abortf("%s: %v", args[0], errorsCause(err))
	}
	if c.opts.Bool("json") || c.opts.String("template") == "json" {
		c.ui.write("%s", data)
		return nil
	}
	c.ui.write("mountpoint: %s\n", info.Mountpoint)
	c.ui.write("source: %s (%s)\n", info.Source, info.Kind)
	c.ui.write("pid: %d\n", info.Pid)
	if info.URingRequests > 0 {
		c.ui.write("requests over io_uring: %d\n", info.URingRequests)
	}
	if info.Virtual {
		c.ui.write("hgfs updates done by the daemon: %d\n", info.Updates)
		c.ui.write("daemon updates that looked at every tracked file: %d\n", info.UpdateFullChecks)
	}
	if info.Stats == nil {
		return nil
	}
	raw, err := json.Marshal(info.Stats)
	if err != nil {
		return err
	}
	var m map[string]json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // counters as integers, not 3e+06
	if err := dec.Decode(&m); err != nil {
		return err
	}
	for _, l := range statsLabels {
		v, ok := m[l.key]
		if !ok {
			continue
		}
		delete(m, l.key)
		c.ui.write("%s: %s\n", l.label, statsValue(v, l.bytes))
	}
	rest := make([]string, 0, len(m))
	for k := range m {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	for _, k := range rest {
		c.ui.write("%s: %s\n", camelWords(k), m[k])
	}
	return nil
}

// statsValue prints a counter; a byte count as hg's bytecount with the
// exact number after it ("1.50 MB (1572864 bytes)").
func statsValue(v json.Number, isBytes bool) string {
	n, err := v.Int64()
	if !isBytes || err != nil {
		return v.String()
	}
	if n < 1024 {
		return formatBytes(float64(n))
	}
	return formatBytes(float64(n)) + " (" + v.String() + " bytes)"
}

// camelWords turns a counter's Go name into words: "LoadedInodes" is
// "loaded inodes".
func camelWords(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte(' ')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
