package hgview

import (
	"sort"
	"strings"
	"sync"

	"github.com/hgfs/hgfs/revlog"
)

// Prefetching a changeset's tree one level ahead of a walk.
//
// A walk of .hgfs/rev/REV (grep -r, diff -r, tar) lists a directory,
// reads its files, then descends. Listing a changeset directory
// reconstructs its files anyway (their sizes are attributes), one after
// the other while the walker waits. Prefetch moves the next level's
// reconstruction off that path: when an adapter opens a changeset
// directory it asks for the files of that directory's subdirectories,
// which one background goroutine reconstructs into the cache while the
// walker reads the current level; by the time the walker lists a
// subdirectory its files are there. Only one level is taken, and at most
// prefetchBudget bytes per request, so a listing of a tree's root costs
// its children's files, never the whole tree; requests that find the
// goroutine busy are dropped (the listing reconstructs as before).

const (
	// prefetchBudget bounds the bytes one request reconstructs: far
	// below the cache (64 MiB by default), so what is prefetched is
	// still there when it is listed.
	prefetchBudget = 8 << 20
	// prefetchQueue is how many requests may wait for the goroutines.
	prefetchQueue = 64
	// prefetchWorkers reconstruct requests side by side: one, as a
	// second made a first grep -r of the bench tree no faster (0.89-0.99
	// s against 1.02-1.04 s) on two cores, where the walker needs one.
	prefetchWorkers = 1
)

// Batched index reads (batch_linux.go; elsewhere each index is read
// alone).
const (
	// indexChunk is how many indexes a batch reads.
	indexChunk = 64
	// indexSlot is the most read of one index: a larger one is read
	// the ordinary way.
	indexSlot = 16 << 10
)

type prefetcher struct {
	once sync.Once
	q    chan *Node
	stop chan struct{}
	wg   sync.WaitGroup
	done chan struct{} // closed once every goroutine ended
}

// Prefetch asks for the files of dir's subdirectories (dir being a
// changeset or a directory in one) to be reconstructed into the cache in
// the background. It never blocks and never fails: a request that
// cannot be queued or reconstructed is dropped.
func (v *View) Prefetch(dir *Node) {
	if !dir.ListsFixed() {
		return
	}
	p := &v.prefetch
	p.once.Do(func() {
		p.q = make(chan *Node, prefetchQueue)
		p.stop = make(chan struct{})
		p.done = make(chan struct{})
		p.wg.Add(prefetchWorkers)
		for range prefetchWorkers {
			go v.prefetchLoop()
		}
		go func() { p.wg.Wait(); close(p.done) }()
	})
	select {
	case <-p.stop:
	case p.q <- dir:
	default:
	}
}

// stopPrefetch ends the goroutine, if it started; Close calls it.
func (v *View) stopPrefetch() {
	p := &v.prefetch
	p.once.Do(func() {}) // none can start any more
	if p.stop == nil {
		return
	}
	close(p.stop)
	<-p.done
}

func (v *View) prefetchLoop() {
	p := &v.prefetch
	defer p.wg.Done()
	ir := newIndexReader(v.storeDir) // nil: each index read alone
	if ir != nil {
		defer ir.close()
	}
	for {
		select {
		case <-p.stop:
			return
		case dir := <-p.q:
			v.prefetchLevel(dir, ir, p.stop)
		}
	}
}

// prefetchLevel reconstructs the files exactly one directory below dir
// that the cache does not hold, reading their indexes a chunk at a time
// through ir if there is one.
func (v *View) prefetchLevel(dir *Node, ir *indexReader, stop <-chan struct{}) {
	m, err := v.manifest(dir.cs)
	if err != nil {
		return
	}
	prefix := ""
	if dir.path != "" {
		prefix = dir.path + "/"
	}
	budget := int64(prefetchBudget)
	chunk := 1
	if ir != nil {
		chunk = ir.chunk()
	}
	var todo []revlog.ManifestEntry
	var names []string
	// take reconstructs todo; false once stopped or over budget.
	take := func() bool {
		var index [][]byte
		if ir != nil {
			names = names[:0]
			for _, e := range todo {
				names = append(names, v.layout.Encode("data/"+e.Path+".i"))
			}
			index = ir.read(names)
		}
		for i, e := range todo {
			select {
			case <-stop:
				return false
			default:
			}
			var pre *preread
			if index != nil {
				pre = &preread{name: names[i], index: index[i]}
			}
			b, err := v.fileTextWith(e, pre)
			if err != nil {
				continue // its lookup reports it
			}
			if budget -= int64(len(b)); budget <= 0 {
				return false
			}
		}
		todo = todo[:0]
		return true
	}
	start := sort.Search(len(m), func(i int) bool { return m[i].Path >= prefix })
	for _, e := range m[start:] {
		if !strings.HasPrefix(e.Path, prefix) {
			break // manifests are sorted: past the directory
		}
		rest := e.Path[len(prefix):]
		i := strings.IndexByte(rest, '/')
		if i < 0 || strings.IndexByte(rest[i+1:], '/') >= 0 {
			continue // in dir itself, or deeper than one level
		}
		if _, ok := v.cache.get(textKey(e)); ok {
			continue
		}
		if todo = append(todo, e); len(todo) == chunk && !take() {
			return
		}
	}
	take()
}
