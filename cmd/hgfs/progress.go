package main

// A terminal progress bar for long transfers (clone, pull, unbundle,
// checkout), in the manner of hg's progress extension: one line on
// stderr, first drawn after [progress] delay (3 s), redrawn in place at
// most every [progress] refresh (0.1 s), as wide as the terminal is now
// (less one column, so that no terminal wraps it), with hg's estimate of
// the time left (from the last [progress] estimateinterval), and erased
// when the work ends or a message is printed (ui clears it first, as hg's
// ui does). It is drawn only when stderr is a terminal (or [progress]
// assume-tty is set), and never with -q, --debug, [progress] disable or
// plain mode (HGPLAIN without "progress" in HGPLAINEXCEPT).
//
// A stream clone's bar counts files and bytes ("clone [===>  ] 1.23 MB/
// 4.56 MB 12/34 files 01m05s"); a changegroup's application reports hg's
// topics (changesets, manifests, files) in hg's default format,
// "topic [bar] pos/total estimate" (topicProgress).

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

// progressInterval bounds the redraw rate: [progress] refresh's default.
const progressInterval = 100 * time.Millisecond

// estimateInterval is [progress] estimateinterval's default: the
// estimate uses the rate of the last minute only.
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

	// counting: a topic's bar (topicProgress), pos of total items.
	counting   bool
	pos, total int64
	indet      int // hg's indetcount: the bouncing bar's step
	// notBefore is when the bar may first be drawn (hg's lastprint
	// after resetstate: now + [progress] delay).
	notBefore time.Time
	printed   bool // drawn since the last reset
	// From the configuration (newProgress); a bar built otherwise
	// (tests) has the defaults.
	configured  bool
	refresh     time.Duration
	estimateIvl time.Duration // <= 0: no calibration
	delay       time.Duration
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
	p := &progressBar{w: u.err, topic: topic, now: time.Now, configured: true,
		refresh:     configSeconds(u, config.ProgressRefresh),
		estimateIvl: configSeconds(u, config.ProgressEstimateInterval)}
	p.delay = configSeconds(u, config.ProgressDelay)
	p.notBefore = p.now().Add(p.delay)
	p.widthFn = func() int { return progressWidth(u) }
	u.bar = p
	return p
}

// configSeconds reads k as hg's float seconds; a value that is not a
// number counts as the default.
func configSeconds(u *ui, k config.Known) time.Duration {
	v, err := strconv.ParseFloat(strings.TrimSpace(u.cfg.Get(k)), 64)
	if err != nil {
		v, _ = strconv.ParseFloat(k.Default, 64)
	}
	return time.Duration(v * float64(time.Second))
}

// topicProgress returns an exchange.Options.Progress for u: the bar is
// made at the first report, each topic restarts the estimate, and a
// closed topic's bar is erased (hg's clear-complete), the next one
// waiting [progress] delay again, as hg's progbar resets.
func topicProgress(u *ui) func(topic string, pos, total int) {
	var p *progressBar
	made := false
	return func(topic string, pos, total int) {
		if !made {
			p, made = newProgress(u, topic), true
		}
		p.topicUpdate(topic, pos, total)
	}
}

// topicUpdate records topic at pos of total (0: unknown), or closes it
// (pos < 0).
func (p *progressBar) topicUpdate(topic string, pos, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if pos < 0 {
		if p.printed {
			p.clearLocked()
			p.printed = false
			p.notBefore = now.Add(p.delay)
		}
		p.started, p.counting, p.indet, p.last = false, false, 0, time.Time{}
		return
	}
	if !p.counting || topic != p.topic {
		p.topic, p.counting, p.started, p.indet = topic, true, false, 0
	}
	p.pos, p.total = int64(pos), int64(total)
	p.calibrate(now)
	if now.Before(p.notBefore) || now.Sub(p.last) < p.refreshEvery() {
		return
	}
	p.last = now
	p.drawLocked(now)
}

// refreshEvery is the least time between redraws.
func (p *progressBar) refreshEvery() time.Duration {
	if p.configured {
		return p.refresh
	}
	return progressInterval
}

// estimateEvery is hg's estimateinterval.
func (p *progressBar) estimateEvery() time.Duration {
	if p.configured {
		return p.estimateIvl
	}
	return estimateInterval
}

// progressWidth is hg's progbar.width: [progress] width, but no wider
// than the terminal ($COLUMNS, else the terminal's size as stderr, stdout
// or stdin reports it, else 80).
func progressWidth(u *ui) int {
	tw := termWidth(u)
	if w, err := u.cfg.GetInt(config.ProgressWidth); err == nil && w > 0 && w < tw {
		return w
	}
	return tw
}

// termWidth is hg's ui.termwidth: $COLUMNS, else the terminal's size as
// stderr, stdout or stdin reports it, else 80.
func termWidth(u *ui) int {
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
	if now.Before(p.notBefore) || now.Sub(p.last) < p.refreshEvery() {
		return
	}
	p.last = now
	p.drawLocked(now)
}

// position and its total are what the bar and the estimate measure: a
// topic's items; else bytes when their total is known, else files.
func (p *progressBar) position() (pos, total float64) {
	if p.counting {
		return float64(p.pos), float64(p.total)
	}
	if p.totalBytes > 0 {
		return float64(p.bytes), float64(p.totalBytes)
	}
	return float64(p.files), float64(p.totalFiles)
}

// calibrate is hg's _calibrateestimate: past estimateInterval, the
// reference point moves so that the estimate follows the recent rate.
func (p *progressBar) calibrate(now time.Time) {
	pos, _ := p.position()
	if !p.started {
		p.startTime, p.startVal, p.started = now, pos, true
		return
	}
	interval := p.estimateEvery()
	if interval <= 0 {
		return
	}
	elapsed := now.Sub(p.startTime)
	if elapsed <= interval {
		return
	}
	delta := pos - p.startVal
	newDelta := delta * float64(interval) / float64(elapsed)
	if newDelta < 0.1 {
		return
	}
	p.startVal = pos - newDelta
	p.startTime = now.Add(-interval)
}

// estimate is hg's progbar.estimate: the time left at the rate since the
// reference point, "" until there is a rate.
func (p *progressBar) estimate(now time.Time) string {
	pos, total := p.position()
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
	p.drawn, p.drawnWidth, p.printed = true, width, true
}

// render builds the line for a terminal of width columns: exactly
// width-1 of them (a full-width line makes some terminals wrap). What
// does not fit goes, least useful first: the bar, the file counts, then
// the end of the line.
func (p *progressBar) render(width int, now time.Time) string {
	avail := max(width-1, 1)
	if p.counting {
		return p.renderTopic(avail, now)
	}
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
	pos, total := p.position()
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

// renderTopic is hg's progbar.show in its default format, "topic bar
// number estimate", for a line of avail columns: the bar takes what the
// rest leaves (hg's "[" + bar + "]", bouncing "<=>" when the total is
// unknown), and is left out below 5 columns of it; what still does not
// fit is cut at the end, as hg's encoding.trim does.
func (p *progressBar) renderTopic(avail int, now time.Time) string {
	number := strconv.FormatInt(p.pos, 10)
	if p.total > 0 {
		t := strconv.FormatInt(p.total, 10)
		number = strings.Repeat(" ", max(len(t)-len(number), 0)) + number + "/" + t
	}
	head, tail := p.topic, spaceJoin(number, p.estimate(now))
	used := len(head) + 1
	if tail != "" {
		used += len(tail) + 1
	}
	progwidth := avail - used - 3
	var line string
	switch {
	case progwidth < 5:
		line = spaceJoin(head, tail)
	case p.total > 0 && p.pos <= p.total:
		amt := int(p.pos * int64(progwidth) / p.total)
		bar := strings.Repeat("=", max(amt-1, 0))
		if amt > 0 {
			bar += ">"
		}
		bar += strings.Repeat(" ", progwidth-amt)
		line = spaceJoin(head, "["+bar+"]", tail)
	default:
		progwidth -= 3
		p.indet++
		amt := p.indet%(2*progwidth) - progwidth
		if amt < 0 {
			amt = -amt
		}
		bar := strings.Repeat(" ", progwidth-amt) + "<=>" + strings.Repeat(" ", amt)
		line = spaceJoin(head, "["+bar+"]", tail)
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
