package main

import (
	"bufio"
	"bytes"
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
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

// TestProgressTopicRender: a changegroup topic's line is hg's default
// format, "topic [bar] pos/total estimate", width-1 columns; the bar
// goes when it would be narrower than 5 columns; an unknown total draws
// hg's bouncing "<=>".
func TestProgressTopicRender(t *testing.T) {
	now := time.Unix(1000, 0)
	var buf bytes.Buffer
	p := &progressBar{w: &buf, width: 61, now: func() time.Time { return now }}
	p.topicUpdate("changesets", 1, 2971)
	now = now.Add(2 * time.Second)
	p.topicUpdate("changesets", 1486, 2971)
	// hg's line at 60 columns (head "changesets", tail "1486/2971 03s",
	// progwidth 60-11-14-3), padded to the 60 columns hgfs draws at 61.
	want := "\rchangesets [" + strings.Repeat("=", 15) + ">" + strings.Repeat(" ", 16) + "] 1486/2971 03s "
	if got := buf.String()[strings.LastIndex(buf.String(), "\r"):]; got != want || len(got) != 61 {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// Right-aligned position, as hg's "%*d/%d".
	p.topicUpdate("manifests", 7, 2971)
	if got := p.render(61, now); !strings.HasPrefix(got, "manifests [") || !strings.Contains(got, "]    7/2971") {
		t.Errorf("manifests: %q", got)
	}
	for _, width := range []int{10, 20, 30, 50, 200} {
		if got := p.render(width, now); len(got) != width-1 {
			t.Errorf("width %d: %d columns: %q", width, len(got), got)
		}
	}
	if got := strings.TrimRight(p.render(25, now), " "); got != "manifests    7/2971" {
		t.Errorf("narrow: %q", got)
	}
	p.topicUpdate("files", 3, 0)
	if got := p.render(40, now); !strings.HasPrefix(got, "files [") || !strings.Contains(got, "<=>") || !strings.Contains(got, "] 3") {
		t.Errorf("unknown total: %q", got)
	}
	// Closing the topic erases the bar.
	p.topicUpdate("files", -1, 0)
	if p.drawn || !strings.HasSuffix(buf.String(), "\r"+strings.Repeat(" ", 60)+"\r") {
		t.Errorf("not erased: %q", buf.String())
	}
}

// TestProgressDelay: nothing is drawn before [progress] delay, and after
// a drawn topic closes the next one waits the delay again (hg's
// resetstate); [progress] refresh spaces the redraws.
func TestProgressDelay(t *testing.T) {
	now := time.Unix(1000, 0)
	var buf bytes.Buffer
	p := &progressBar{w: &buf, width: 60, now: func() time.Time { return now }, configured: true,
		delay: 3 * time.Second, refresh: time.Second, estimateIvl: estimateInterval}
	p.notBefore = now.Add(p.delay)
	for i := 1; i <= 29; i++ {
		p.topicUpdate("changesets", i, 100)
		now = now.Add(100 * time.Millisecond)
	}
	if buf.Len() != 0 {
		t.Fatalf("drawn before the delay: %q", buf.String())
	}
	draws := 0
	for i := 30; i <= 80; i++ { // 3 s to 8 s: one draw a second
		p.topicUpdate("changesets", i, 100)
		now = now.Add(100 * time.Millisecond)
	}
	draws = strings.Count(buf.String(), "\rchangesets")
	if draws < 5 || draws > 6 {
		t.Errorf("%d draws in 5 s at refresh 1 s: %q", draws, buf.String())
	}
	p.topicUpdate("changesets", -1, 0)
	n := buf.Len()
	p.topicUpdate("manifests", 1, 100)
	now = now.Add(2 * time.Second)
	p.topicUpdate("manifests", 2, 100)
	if buf.Len() != n {
		t.Errorf("next topic drawn before the delay: %q", buf.String()[n:])
	}
	now = now.Add(time.Second)
	p.topicUpdate("manifests", 3, 100)
	if !strings.Contains(buf.String()[n:], "\rmanifests [") {
		t.Errorf("next topic not drawn after the delay: %q", buf.String()[n:])
	}
}

// progressTopics reads a progress bar's output (hg's or hgfs's):
// the topics drawn in order, each with its total and the last position
// drawn.
func progressTopics(t *testing.T, stderr string) (order []string, total, last map[string]int) {
	line := regexp.MustCompile(`^(\w+) (?:\[[^\]]*\] )? *(\d+)/(\d+)`)
	total, last = map[string]int{}, map[string]int{}
	for _, seg := range strings.Split(stderr, "\r") {
		m := line.FindStringSubmatch(seg)
		if m == nil {
			continue
		}
		if len(order) == 0 || order[len(order)-1] != m[1] {
			order = append(order, m[1])
		}
		pos, _ := strconv.Atoi(m[2])
		tot, _ := strconv.Atoi(m[3])
		if total[m[1]] != 0 && total[m[1]] != tot {
			t.Errorf("topic %s: total %d then %d", m[1], total[m[1]], tot)
		}
		total[m[1]], last[m[1]] = tot, pos
	}
	return order, total, last
}

// TestProgressTopics: a changegroup clone draws hg's topics in hg's
// order with hg's totals (changesets: the part's nbchanges; manifests:
// the changesets added; files: the files they touch), as hg 6.3 and
// hg 7 draw them for the same clone (every update drawn: refresh 0).
// The clone is over HTTP: a local hg clone --pull also draws the
// generating side's topics.
func TestProgressTopics(t *testing.T) {
	t.Setenv("COLUMNS", "")
	src := testenv.Serve(t, testenv.CorpusRepo(t, testenv.CorpusHistory))
	dir := t.TempDir()
	cfg := []string{"--config", "progress.assume-tty=true", "--config", "progress.delay=0",
		"--config", "progress.refresh=0", "--config", "progress.width=80"}
	var o, e bytes.Buffer
	code := run(append(append([]string{"--cwd", dir}, cfg...), "clone", "-U", src, "d"), strings.NewReader(""), &o, &e)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, o.String(), e.String())
	}
	order, total, last := progressTopics(t, e.String())
	if !slices.Equal(order, []string{"changesets", "manifests", "files"}) {
		t.Fatalf("hgfs topics %q\n%q", order, e.String())
	}
	if !strings.HasSuffix(e.String(), "\r"+strings.Repeat(" ", 79)+"\r") {
		t.Errorf("bar not erased at the end: %q", e.String()[max(e.Len()-200, 0):])
	}
	for _, hg := range testenv.Mercurials(t) {
		t.Run(hg.Name, func(t *testing.T) {
			cmd := exec.Command(hg.Path, append(append([]string{"--cwd", dir}, cfg...), "clone", "-U", src, "h"+hg.Name)...)
			cmd.Env = append(testenv.HgEnv(), "HGPLAINEXCEPT=progress")
			var he bytes.Buffer
			cmd.Stderr = &he
			if out, err := cmd.Output(); err != nil {
				t.Fatalf("%v\n%s%s", err, out, he.String())
			}
			horder, htotal, hlast := progressTopics(t, he.String())
			if !slices.Equal(order, horder) || !maps.Equal(total, htotal) || !maps.Equal(last, hlast) {
				t.Errorf("hgfs: %q totals %v last %v\n%s: %q totals %v last %v", order, total, last, hg.Name, horder, htotal, hlast)
			}
		})
	}
}
