package main

// A terminal progress bar for long transfers (clone), hand-rolled in the
// spirit of hg's progress extension: one line on stderr, redrawn at most
// ten times a second, erased when the work ends. It is drawn only when
// stderr is a terminal (or [progress] assume-tty is set), and never with
// -q, --debug or [progress] disable.

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hgfs/hgfs/config"
)

// progressInterval bounds the redraw rate.
const progressInterval = 100 * time.Millisecond

// progressBar draws "topic [=====>     ] 1.23 MB/4.56 MB 12/34 files".
// update is safe for concurrent use and cheap when no redraw is due.
type progressBar struct {
	w     io.Writer
	topic string
	width int

	mu         sync.Mutex
	totalFiles int64
	totalBytes int64
	files      int
	bytes      int64
	last       time.Time
	drawn      bool
	now        func() time.Time
}

// newProgress returns a bar for u's stderr, or nil when none should be
// drawn (a nil *progressBar ignores every call).
func newProgress(u *ui, topic string) *progressBar {
	if u.quiet || u.debug {
		return nil
	}
	if off, _ := u.cfg.GetBool(config.ProgressDisable); off {
		return nil
	}
	assume, _ := u.cfg.GetBool(config.ProgressAssumeTTY)
	if !assume && !isTerminal(u.err) {
		return nil
	}
	width := 80
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 20 {
		width = c
	}
	if w, err := u.cfg.GetInt(config.ProgressWidth); err == nil && w > 20 {
		width = w
	}
	return &progressBar{w: u.err, topic: topic, width: width, now: time.Now}
}

// isTerminal reports whether w is a character device (a terminal; hg's
// isatty). Portable without termios: /dev/null also qualifies, harmlessly.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// setTotal records the announced size of the work.
func (p *progressBar) setTotal(files, bytes int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.totalFiles, p.totalBytes = files, bytes
	p.mu.Unlock()
}

// update records cumulative counts and redraws if one is due.
func (p *progressBar) update(files int, bytes int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.files, p.bytes = files, bytes
	now := p.now()
	if now.Sub(p.last) < progressInterval {
		return
	}
	p.last = now
	p.drawLocked()
}

func (p *progressBar) drawLocked() {
	line := p.render()
	fmt.Fprintf(p.w, "\r%s", line)
	p.drawn = true
}

// render builds the line, exactly width-1 columns (a full-width line makes
// some terminals wrap).
func (p *progressBar) render() string {
	counts := formatBytes(float64(p.bytes))
	if p.totalBytes > 0 {
		counts += "/" + formatBytes(float64(p.totalBytes))
	}
	counts += fmt.Sprintf(" %d", p.files)
	if p.totalFiles > 0 {
		counts += fmt.Sprintf("/%d", p.totalFiles)
	}
	counts += " files"
	avail := p.width - 1
	barWidth := avail - len(p.topic) - len(counts) - 4 // spaces and brackets
	var line string
	if barWidth >= 10 && p.totalBytes > 0 {
		frac := float64(p.bytes) / float64(p.totalBytes)
		frac = min(max(frac, 0), 1)
		done := int(frac * float64(barWidth))
		bar := strings.Repeat("=", done)
		if done < barWidth {
			bar += ">" + strings.Repeat(" ", barWidth-done-1)
		}
		line = p.topic + " [" + bar + "] " + counts
	} else {
		line = p.topic + " " + counts
	}
	if len(line) > avail {
		line = line[:avail]
	}
	return line + strings.Repeat(" ", avail-len(line))
}

// done erases the bar if it was drawn.
func (p *progressBar) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width-1))
		p.drawn = false
	}
}

// formatBytes is Mercurial's util.bytecount: three significant figures,
// binary multiples, decimal-looking unit names (keep in sync with
// mercurial/util.py bytecount).
func formatBytes(n float64) string {
	units := []struct {
		mult, div float64
		format    string
	}{
		{100, 1 << 30, "%.0f GB"},
		{10, 1 << 30, "%.1f GB"},
		{1, 1 << 30, "%.2f GB"},
		{100, 1 << 20, "%.0f MB"},
		{10, 1 << 20, "%.1f MB"},
		{1, 1 << 20, "%.2f MB"},
		{100, 1 << 10, "%.0f KB"},
		{10, 1 << 10, "%.1f KB"},
		{1, 1 << 10, "%.2f KB"},
		{1, 1, "%.0f bytes"},
	}
	abs := n
	if abs < 0 {
		abs = -abs
	}
	for _, u := range units {
		if abs >= u.mult*u.div {
			return fmt.Sprintf(u.format, n/u.div)
		}
	}
	return fmt.Sprintf("%.0f bytes", n)
}
