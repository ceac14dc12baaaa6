//go:build linux || windows

package mount

import (
	"log"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
)

// Panics in FUSE handlers. fsnode turns a panic inside bbolt (a damaged
// index) into an EIO error where it happens, before any lock is left
// held; what still panics in a handler is answered here, once per
// adapter: go-fuse calls handlerPanic through MountOptions.PanicHandler
// (mountOptions), the cgofuse adapter from a deferred cgoFS.recovered.
// The request gets EIO, the log one line naming the operation and the
// panic (the stack too with HGFS_DEBUG set), and the mount keeps serving.

// debugPanics: HGFS_DEBUG is set; handler panics are logged with stacks.
var debugPanics = os.Getenv("HGFS_DEBUG") != ""

// handlerPanics counts the panics recovered from handlers (for tests).
var handlerPanics atomic.Int64

// handlerPanic logs a panic recovered from a FUSE handler. It must run in
// the deferred function that recovered, while the panicking frames are
// still on the stack: the operation is the outermost adapter method
// there (the handler the library called).
func handlerPanic(r any) {
	handlerPanics.Add(1)
	log.Printf("hgfs mount: %s: recovered panic, answered EIO: %v", panicOp(), r)
	if debugPanics {
		log.Printf("hgfs mount: stack:\n%s", debug.Stack())
	}
}

func panicOp() string {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	op := "unknown operation"
	for {
		fr, more := frames.Next()
		for _, recv := range []string{"mount.(*rawFS).", "mount.(*cgoFS)."} {
			if i := strings.Index(fr.Function, recv); i >= 0 {
				op = fr.Function[i+len(recv):]
			}
		}
		if !more {
			return op
		}
	}
}
