package main

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgressRender(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	p := &progressBar{w: &buf, topic: "clone", width: 61, now: func() time.Time { return now }}
	p.setTotal(10, 2<<20)
	p.update(0, 0)
	now = now.Add(2 * time.Second)
	p.update(5, 1<<20)
	// Half done in 2 s: hg's estimate, elapsed*(target-delta)//delta + 1, is 3 s.
	// 60 columns: "clone [" + 21-column bar + "] " + counts + estimate.
	want := "\rclone [" + strings.Repeat("=", 10) + ">" + strings.Repeat(" ", 10) + "] 1.00 MB/2.00 MB 5/10 files 03s"
	if len(want) != 61 {
		t.Fatalf("bad expectation %d", len(want))
	}
	if got := buf.String()[strings.LastIndex(buf.String(), "\r"):]; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// No redraw within the interval.
	before := buf.String()
	p.update(6, 1<<20+1)
	if buf.String() != before {
		t.Errorf("redrawn too soon: %q", buf.String())
	}
	now = now.Add(progressInterval)
	p.update(10, 2<<20)
	if !strings.HasSuffix(buf.String(), "\rclone ["+strings.Repeat("=", 20)+"] 2.00 MB/2.00 MB 10/10 files 01s") {
		t.Errorf("final %q", buf.String())
	}
	p.done()
	if !strings.HasSuffix(buf.String(), "\r"+strings.Repeat(" ", 60)+"\r") {
		t.Errorf("not cleared: %q", buf.String())
	}
	var nilBar *progressBar
	nilBar.update(1, 1) // a nil bar ignores calls
	nilBar.clear()
	nilBar.done()
}

// TestProgressNarrow: at any width the line is width-1 columns (never
// wrapped); what does not fit goes bar first, then the file counts, and
// the estimate stays as long as there is room for it.
func TestProgressNarrow(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, width := range []int{20, 30, 40, 50, 80, 200} {
		p := &progressBar{topic: "clone", now: func() time.Time { return now }}
		p.setTotal(20000, 300<<20)
		p.started, p.startTime = true, now.Add(-10*time.Second)
		p.files, p.bytes = 1234, 100<<20
		line := p.render(width, now)
		if len(line) != width-1 {
			t.Errorf("width %d: %d columns: %q", width, len(line), line)
		}
		if width >= 40 && !strings.Contains(line, " 21s") {
			t.Errorf("width %d: no estimate: %q", width, line)
		}
		if width >= 80 != strings.Contains(line, "[") {
			t.Errorf("width %d: bar shown wrongly: %q", width, line)
		}
	}
}

func TestFormatRemaining(t *testing.T) {
	// Values from hg's progress.fmtremaining.
	for s, want := range map[int64]string{
		0: "00s", 59: "59s", 60: "1m00s", 3599: "59m59s", 3600: "1h01m",
		29*3600 + 58*60: "29h59m", 30 * 3600: "1d07h", 20 * 86400: "3w00d", 400 * 86400: "1y06w",
	} {
		if got := formatRemaining(s); got != want {
			t.Errorf("formatRemaining(%d) = %q, want %q", s, got, want)
		}
	}
}

// TestProgressClearedByMessages: a message printed while the bar is drawn
// erases it first and is written at once, not held in stdout's buffer.
func TestProgressClearedByMessages(t *testing.T) {
	var out, errb bytes.Buffer
	u := &ui{out: bufio.NewWriter(&out), err: &errb, cfg: nil}
	now := time.Unix(1000, 0)
	p := &progressBar{w: &errb, topic: "clone", width: 40, now: func() time.Time { return now }}
	u.bar = p
	p.setTotal(10, 0)
	p.update(3, 0)
	if !p.drawn {
		t.Fatal("not drawn")
	}
	u.status("adding changesets\n")
	if out.String() != "adding changesets\n" {
		t.Errorf("status held back: %q", out.String())
	}
	if p.drawn || !strings.HasSuffix(errb.String(), "\r"+strings.Repeat(" ", 39)+"\r") {
		t.Errorf("bar not erased before the message: %q", errb.String())
	}
	// The next update draws it again at once.
	p.update(4, 0)
	if !p.drawn {
		t.Error("not redrawn")
	}
}
