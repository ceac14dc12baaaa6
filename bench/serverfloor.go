//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/wireproto"
)

// The server's floor for a changegroup clone: the work no server sending
// hg's wire format can skip. A changegroup carries uncompressed deltas,
// so every stored chunk is decompressed once, and the response is
// compressed at the level hg's server uses (server.zstdlevel, 3). This
// bench binary does just that in a child mode (serverFloorFlag): every
// revision of every revlog of the store, its chunk decompressed
// (revlog.RawChunk, the revlogs read whole into memory first) and written
// with the 84-byte header a cg2 delta has, in bundle2 payload chunks, into
// the response encoder hgfs serve uses (wireproto.NewZstdResponseEncoder),
// whose output is discarded. It prints its CPU time over that work, not its start-up or
// the store's listing; the serving table compares hgfs serve's CPU with
// it, and it with hg serve's, which says how far the CPU goal is from
// what can be reached.

const serverFloorFlag = "-child-server-floor"

// serverFloorName names the floor in the serving table.
const serverFloorName = "decompressing every stored chunk, zstd level 3 of the deltas"

// serverFloorCmd is the floor's command for the repository at root.
func serverFloorCmd(env *Env, root string) *exec.Cmd {
	c := exec.Command(env.Self, serverFloorFlag, root, strconv.Itoa(wireproto.DefaultServerConfig().ZstdLevel))
	c.Env = env.HgEnv
	return c
}

var serverFloorRe = regexp.MustCompile(`(?m)^server-floor cpu-us=(\d+) in=(\d+) out=(\d+)$`)

// parseServerFloor is the CPU time a floor run printed.
func parseServerFloor(out []byte) (time.Duration, error) {
	m := serverFloorRe.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no server floor figures in the output %q", out)
	}
	us, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return time.Duration(us) * time.Microsecond, nil
}

func runServerFloor(args []string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "bench %s: %v\n", serverFloorFlag, err)
		return 1
	}
	if len(args) != 2 {
		return fail(fmt.Errorf("want REPO LEVEL"))
	}
	level, err := strconv.Atoi(args[1])
	if err != nil {
		return fail(err)
	}
	st, err := store.Open(args[0])
	if err != nil {
		return fail(err)
	}
	files, err := st.Walk()
	if err != nil {
		return fail(err)
	}
	var indexes []string
	for _, f := range files {
		if strings.HasSuffix(f.Name, ".i") {
			indexes = append(indexes, f.Path)
		}
	}
	// The second pass is timed: as the servers are warmed up before the
	// timed clones, the decoders and encoder exist and the heap has grown.
	var cpu time.Duration
	var in, out int64
	for range 2 {
		if cpu, in, out, err = serverFloorPass(st, indexes, level); err != nil {
			return fail(err)
		}
	}
	fmt.Printf("server-floor cpu-us=%d in=%d out=%d\n", cpu.Microseconds(), in, out)
	return 0
}

// serverFloorPass does the floor's work once and returns its CPU time
// and the bytes compressed and produced.
func serverFloorPass(st *store.Store, indexes []string, level int) (cpu time.Duration, in, out int64, err error) {
	cw := &countingWriter{}
	zw, err := wireproto.NewZstdResponseEncoder(cw, level)
	if err != nil {
		return 0, 0, 0, err
	}
	// The server's writes reach its encoder in bundle2 payload chunks.
	enc := bufio.NewWriterSize(zw, bundle2.PayloadChunkSize)
	cpu0 := selfCPU()
	header := make([]byte, 0, 84)
	for _, p := range indexes {
		index, err := fs.ReadFile(st.FS(), p)
		if err != nil {
			return 0, 0, 0, err
		}
		var data []byte
		if !revlog.IndexInline(index) {
			if data, err = fs.ReadFile(st.FS(), strings.TrimSuffix(p, ".i")+".d"); err != nil {
				return 0, 0, 0, err
			}
		}
		rl, err := revlog.FromBytes(p, index, data)
		if err != nil {
			return 0, 0, 0, err
		}
		for rev := 0; rev < rl.Len(); rev++ {
			chunk, err := rl.RawChunk(rev)
			if err != nil {
				return 0, 0, 0, err
			}
			e := rl.Entry(rev)
			header = append(header[:0], e.Node[:]...)
			for _, r := range []int{e.P1, e.P2, rl.DeltaParent(rev)} {
				n := rl.Node(r)
				header = append(header, n[:]...)
			}
			header = append(header, e.Node[:]...) // the link node's 20 bytes
			if _, err := enc.Write(header); err != nil {
				return 0, 0, 0, err
			}
			if _, err := enc.Write(chunk); err != nil {
				return 0, 0, 0, err
			}
			in += int64(len(header) + len(chunk))
		}
	}
	if err := enc.Flush(); err != nil {
		return 0, 0, 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, 0, 0, err
	}
	return selfCPU() - cpu0, in, cw.n, nil
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// selfCPU is this process's user+system time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
