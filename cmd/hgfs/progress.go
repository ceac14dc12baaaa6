package main

// A terminal progress bar for long transfers (clone, checkout), in the
// manner of hg's progress extension: one line on stderr, redrawn in place
// at most ten times a second, as wide as the terminal is now (less one
// column, so that no terminal wraps it), with hg's estimate of the time
// left, and erased when the work ends or a message is printed (ui clears
// it first, as hg's ui does). It is drawn only when stderr is a terminal
// (or [progress] assume-tty is set), and never with -q, --debug,
// [progress] disable or plain mode (HGPLAIN without "progress" in
// HGPLAINEXCEPT).

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

// progressInterval bounds the redraw rate (hg's progress.refresh).
const progressInterval = 100 * time.Millisecond

// estimateInterval is hg's progress.estimateinterval: the estimate uses
// the rate of the last minute only.
const estimateInterval = 60 * time.Second

// progressBar draws "topic [=====>     ] 1.23 MB/4.56 MB 12/34 files 01m05s".
// update is safe for concurrent use and cheap when no redraw is due.
type progressBar struct {
	w       io.Writer
	topic   string
	width   int        // columns; 0: ask widthFn at each redraw
	widthFn func() int // the terminal's width now

	mu         sync.Mutex
	totalFiles int64
	totalBytes int64
	files      int
	bytes      int64
	last       time.Time
	drawn      bool
	drawnWidth int
	now        func() time.Time
	// The estimate's reference point (hg's starttimes and startvals):
	// moved forward so that only the last estimateInterval counts.
	startTime time.Time
	startVal  float64
	started   bool
}

// newProgress returns a bar for u's stderr, or nil when none should be
// drawn (a nil *progressBar ignores every call). While it is drawn, u's
// messages erase it before they print.
func newProgress(u *ui, topic string) *progressBar {
	if u.quiet || u.debug || plainMode("progress") {
		return nil
	}
	if off, _ := u.cfg.GetBool(config.ProgressDisable); off {
		return nil
	}
	assume, _ := u.cfg.GetBool(config.ProgressAssumeTTY)
	if !assume && !isTerminal(u.err) {
		return nil
	}
	p := &progressBar{w: u.err, topic: topic, now: time.Now}
	p.widthFn = func() int { return progressWidth(u) }
	u.bar = p
	return p
}

// progressWidth is hg's progbar.width: [progress] width, but no wider
// than the terminal ($COLUMNS, else the terminal's size as stderr, stdout
// or stdin reports it, else 80).
func progressWidth(u *ui) int {
	tw := 0
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		tw = c
	}
	for _, f := range []any{u.err, u.stdout, u.in} {
		if tw > 0 {
			break
		}
		if f, ok := f.(*os.File); ok {
			tw, _ = terminalWidth(f)
		}
	}
	if tw <= 0 {
		tw = 80
	}
	if w, err := u.cfg.GetInt(config.ProgressWidth); err == nil && w > 0 && w < tw {
		return w
	}
	return tw
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
	p.calibrate(now)
	if now.Sub(p.last) < progressInterval {
		return
	}
	p.last = now
	p.drawLocked(now)
}

// pos and total are what the bar and the estimate measure: bytes when
// their total is known, else files.
func (p *progressBar) pos() (pos, total float64) {
	if p.totalBytes > 0 {
		return float64(p.bytes), float64(p.totalBytes)
	}
	return float64(p.files), float64(p.totalFiles)
}

// calibrate is hg's _calibrateestimate: past estimateInterval, the
// reference point moves so that the estimate follows the recent rate.
func (p *progressBar) calibrate(now time.Time) {
	pos, _ := p.pos()
	if !p.started {
		p.startTime, p.startVal, p.started = now, pos, true
		return
	}
	elapsed := now.Sub(p.startTime)
	if elapsed <= estimateInterval {
		return
	}
	delta := pos - p.startVal
	newDelta := delta * float64(estimateInterval) / float64(elapsed)
	if newDelta < 0.1 {
		return
	}
	p.startVal = pos - newDelta
	p.startTime = now.Add(-estimateInterval)
}

// estimate is hg's progbar.estimate: the time left at the rate since the
// reference point, "" until there is a rate.
func (p *progressBar) estimate(now time.Time) string {
	pos, total := p.pos()
	if total <= 0 || !p.started {
		return ""
	}
	target := total - p.startVal
	delta := pos - p.startVal
	if delta <= 0 {
		return ""
	}
	elapsed := now.Sub(p.startTime).Seconds()
	seconds := int64(elapsed*(target-delta)/delta) + 1
	return formatRemaining(seconds)
}

// formatRemaining is hg's progress.fmtremaining.
func formatRemaining(seconds int64) string {
	if seconds < 60 {
		return fmt.Sprintf("%02ds", seconds)
	}
	minutes := seconds / 60
	if minutes < 60 {
		return fmt.Sprintf("%dm%02ds", minutes, seconds-minutes*60)
	}
	minutes++
	hours := minutes / 60
	minutes -= hours * 60
	if hours < 30 {
		return fmt.Sprintf("%dh%02dm", hours, minutes)
	}
	hours++
	days := hours / 24
	hours -= days * 24
	if days < 15 {
		return fmt.Sprintf("%dd%02dh", days, hours)
	}
	days++
	weeks := days / 7
	days -= weeks * 7
	if weeks < 55 {
		return fmt.Sprintf("%dw%02dd", weeks, days)
	}
	weeks++
	years := weeks / 52
	weeks -= years * 52
	return fmt.Sprintf("%dy%02dw", years, weeks)
}

func (p *progressBar) drawLocked(now time.Time) {
	width := p.width
	if width <= 0 {
		width = p.widthFn()
	}
	line := p.render(width, now)
	fmt.Fprintf(p.w, "\r%s", line)
	p.drawn, p.drawnWidth = true, width
}

// render builds the line for a terminal of width columns: exactly
// width-1 of them (a full-width line makes some terminals wrap). What
// does not fit goes, least useful first: the bar, the file counts, then
// the end of the line.
func (p *progressBar) render(width int, now time.Time) string {
	avail := max(width-1, 1)
	size := formatBytes(float64(p.bytes))
	if p.totalBytes > 0 {
		size += "/" + formatBytes(float64(p.totalBytes))
	}
	files := strconv.Itoa(p.files)
	if p.totalFiles > 0 {
		files += "/" + strconv.FormatInt(p.totalFiles, 10)
	}
	files += " files"
	if p.totalBytes <= 0 && p.bytes == 0 {
		size = ""
	}
	eta := p.estimate(now)
	pos, total := p.pos()
	full := spaceJoin(size, files, eta)
	var line string
	if barWidth := avail - len(p.topic) - len(full) - 4; barWidth >= 10 && total > 0 {
		// "topic [" + bar + "] " + the rest.
		done := int(min(max(pos/total, 0), 1) * float64(barWidth))
		bar := strings.Repeat("=", done)
		if done < barWidth {
			bar += ">" + strings.Repeat(" ", barWidth-done-1)
		}
		line = p.topic + " [" + bar + "] " + full
	} else if line = spaceJoin(p.topic, full); len(line) > avail && size != "" {
		line = spaceJoin(p.topic, size, eta)
	}
	if len(line) > avail {
		line = line[:avail]
	}
	return line + strings.Repeat(" ", avail-len(line))
}

// spaceJoin is hg's progress.spacejoin: the non-empty parts, blank
// separated.
func spaceJoin(parts ...string) string {
	var nonEmpty []string
	for _, s := range parts {
		if s != "" {
			nonEmpty = append(nonEmpty, s)
		}
	}
	return strings.Join(nonEmpty, " ")
}

// clear erases the bar if it is drawn; the next update draws it again.
func (p *progressBar) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
}

func (p *progressBar) clearLocked() {
	if p.drawn {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", max(p.drawnWidth-1, 0)))
		p.drawn = false
		p.last = time.Time{}
	}
}

// done erases the bar if it was drawn.
func (p *progressBar) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
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
