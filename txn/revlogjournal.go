package txn

import (
	"fmt"
	"strings"
)

// RevlogJournal is the journal one revlog writer is given
// (revlog.WriterOptions.Journal). The writer names its files as they are
// on disk ("data/_foo.txt.i", or a hashed "dh/..." name, and its .d),
// while hg's journal holds logical names ("data/Foo.txt.i"); a
// RevlogJournal knows the logical index name and maps the writer's .i
// and .d to it and its ".d" sibling (hg's hashed encoding keeps the
// extension, so the suffix tells which file is meant).
//
// Its Add buffers the line: the writer calls FlushJournal before any of
// its bytes reach a file (revlog.JournalFlusher), so the lines of all
// the revlogs written between two flushes cost one write(2). Replace
// writes at once.
type RevlogJournal struct {
	tx          *Tx
	index, data string
}

// RevlogJournal returns the journal for the revlog whose logical index
// name is index ("00changelog.i", "data/Foo.txt.i").
func (t *Tx) RevlogJournal(index string) *RevlogJournal {
	base := strings.TrimSuffix(index, ".i")
	return &RevlogJournal{tx: t, index: base + ".i", data: base + ".d"}
}

func (j *RevlogJournal) logical(name string) (string, error) {
	switch {
	case strings.HasSuffix(name, ".i"):
		return j.index, nil
	case strings.HasSuffix(name, ".d"):
		return j.data, nil
	}
	return "", fmt.Errorf("journal entry %s: not the .i or .d of %s", name, j.index)
}

// Add is Tx.Add of the logical name of the writer's file, buffered.
func (j *RevlogJournal) Add(name string, offset int64) error {
	l, err := j.logical(name)
	if err != nil {
		return err
	}
	return j.tx.add(l, offset, true)
}

// Replace is Tx.Replace of the logical name of the writer's file.
func (j *RevlogJournal) Replace(name string, offset int64) error {
	l, err := j.logical(name)
	if err != nil {
		return err
	}
	return j.tx.Replace(l, offset)
}

// FlushJournal is Tx.FlushJournal.
func (j *RevlogJournal) FlushJournal() error { return j.tx.FlushJournal() }
