//go:build unix

package reports

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cdpBrowser is a headless Chromium driven over the DevTools protocol on
// a pipe (--remote-debugging-pipe: it reads NUL-terminated JSON commands
// on fd 3 and writes responses and events on fd 4), attached to its one
// page. It runs in a process group of its own, killed with the group when
// the test ends.
type cdpBrowser struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      *os.File // Chromium's fd 3, written here
	out     *os.File // Chromium's fd 4, read here
	rd      *bufio.Reader
	id      int
	session string
	events  []cdpMessage
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    any             `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`
}

// cdpDeadline bounds every exchange with the browser (a loaded machine
// takes seconds to start it; nothing takes a minute).
const cdpDeadline = 90 * time.Second

func startCDP(t *testing.T, exe string) *cdpBrowser {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*cdpDeadline)
	cmd := exec.CommandContext(ctx, exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage", "--window-size=1280,900",
		"--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{inR, outW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("chromium: %v", err)
	}
	inR.Close()
	outW.Close()
	b := &cdpBrowser{t: t, cmd: cmd, in: inW, out: outR, rd: bufio.NewReaderSize(outR, 1<<20)}
	t.Cleanup(func() {
		b.send("", "Browser.close", map[string]any{})
		inW.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		outR.Close()
		cancel()
	})
	var targets struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
		} `json:"targetInfos"`
	}
	b.call("", "Target.getTargets", map[string]any{}, &targets)
	for _, ti := range targets.TargetInfos {
		if ti.Type == "page" {
			var att struct {
				SessionID string `json:"sessionId"`
			}
			b.call("", "Target.attachToTarget", map[string]any{"targetId": ti.TargetID, "flatten": true}, &att)
			b.session = att.SessionID
		}
	}
	if b.session == "" {
		t.Fatalf("chromium has no page to attach to\n%s", stderr.String())
	}
	b.call(b.session, "Page.enable", map[string]any{}, nil)
	return b
}

func (b *cdpBrowser) send(session, method string, params any) int {
	b.id++
	msg, _ := json.Marshal(cdpMessage{ID: b.id, Method: method, Params: params, SessionID: session})
	if _, err := b.in.Write(append(msg, 0)); err != nil {
		return -1
	}
	return b.id
}

// read returns the next message, failing the test after cdpDeadline.
func (b *cdpBrowser) read() cdpMessage {
	b.t.Helper()
	b.out.SetReadDeadline(time.Now().Add(cdpDeadline))
	line, err := b.rd.ReadBytes(0)
	if err != nil {
		b.t.Fatalf("reading from chromium: %v", err)
	}
	var m cdpMessage
	if err := json.Unmarshal(bytes.TrimSuffix(line, []byte{0}), &m); err != nil {
		b.t.Fatalf("chromium sent %.200q: %v", line, err)
	}
	return m
}

// call sends a command and decodes its result into out (if not nil);
// events that come in between are kept for wait.
func (b *cdpBrowser) call(session, method string, params, out any) {
	b.t.Helper()
	id := b.send(session, method, params)
	for {
		m := b.read()
		if m.ID == 0 {
			b.events = append(b.events, m)
			continue
		}
		if m.ID != id {
			continue
		}
		if m.Error != nil {
			b.t.Fatalf("%s: %s", method, m.Error)
		}
		if out != nil {
			if err := json.Unmarshal(m.Result, out); err != nil {
				b.t.Fatalf("%s: %v", method, err)
			}
		}
		return
	}
}

// wait returns once the page's session has sent event method.
func (b *cdpBrowser) wait(method string) {
	b.t.Helper()
	for i, e := range b.events {
		if e.Method == method && e.SessionID == b.session {
			b.events = append(b.events[:i], b.events[i+1:]...)
			return
		}
	}
	for {
		if m := b.read(); m.Method == method && m.SessionID == b.session {
			return
		}
	}
}

// eval evaluates a JavaScript expression in the page (a promise is
// awaited) and decodes its JSON string value into out.
func (b *cdpBrowser) eval(expr string, out any) {
	b.t.Helper()
	var res struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
		ExceptionDetails any `json:"exceptionDetails"`
	}
	b.call(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &res)
	if res.ExceptionDetails != nil {
		b.t.Fatalf("evaluating %.80s: %v", expr, res.ExceptionDetails)
	}
	if err := json.Unmarshal([]byte(res.Result.Value), out); err != nil {
		b.t.Fatalf("evaluating %.80s: %q: %v", expr, res.Result.Value, err)
	}
}

// pageTiming is how long a page took to draw, in milliseconds since the
// navigation began (the page's Navigation and Paint Timing).
type pageTiming struct {
	// DCL is the end of DOMContentLoaded: parsed, the page's script run.
	DCL float64 `json:"dcl"`
	// Load is the end of the load event.
	Load float64 `json:"load"`
	// FCP is the first contentful paint; LCP the largest.
	FCP float64 `json:"fcp"`
	LCP float64 `json:"lcp"`
	// Shown is the matrix's row count, as the page's script wrote it.
	Shown string `json:"shown"`
}

// timingJS reads the timing once the page has painted after its load.
const timingJS = `new Promise(function(res){ requestAnimationFrame(function(){ setTimeout(function(){
  var n = performance.getEntriesByType('navigation')[0], p = {}, lcp = 0;
  performance.getEntriesByType('paint').forEach(function(e){ p[e.name] = e.startTime; });
  try { new PerformanceObserver(function(l){ l.getEntries().forEach(function(e){ lcp = e.startTime; }); }).observe({type: 'largest-contentful-paint', buffered: true}); } catch (e) {}
  setTimeout(function(){
    var c = document.getElementById('f-count');
    res(JSON.stringify({dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd, fcp: p['first-contentful-paint'] || 0, lcp: lcp, shown: c ? c.textContent : ''}));
  }, 50);
}, 0); }); })`

// openJS opens the details of the first failing cell (or the first cell)
// as a click does, and says how long building them took and what the
// dialog then holds.
const openJS = `(function(){
  var td = document.querySelector('#m td.v-FAIL[data-d]') || document.querySelector('#m td[data-d]');
  var t0 = performance.now();
  td.click();
  var body = document.getElementById('dlg-body');
  body.getBoundingClientRect();
  return JSON.stringify({ms: performance.now() - t0, open: document.getElementById('dlg').open, title: document.getElementById('dlg-title').textContent,
    checks: body.querySelectorAll('.check, table.passed tr').length, wire: body.querySelectorAll('pre.wire').length});
})()`

// TestPublishedExampleDraws loads the published example
// (reports/examples/index.html) in headless Chromium several times and
// prints how long it takes to draw (DOMContentLoaded, load, first and
// largest contentful paint) and to build a case's details when it is
// opened, with the machine's load average: the speed goal (drawn in under
// a second on a 2-core machine) is a measurement this test prints, never
// an assertion. It asserts only what works: the script ran (the row
// count), and a click opens details built from the data.
func TestPublishedExampleDraws(t *testing.T) {
	page, err := filepath.Abs(filepath.Join("examples", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(page)
	if err != nil {
		t.Skip("no reports/examples/index.html (agentconform report publish writes it)")
	}
	exe := chromiumPath(t)
	b := startCDP(t, exe)
	url := "file://" + filepath.ToSlash(page)
	const runs = 5
	var lines []string
	for i := 0; i < runs; i++ {
		b.call(b.session, "Page.navigate", map[string]any{"url": url}, nil)
		b.wait("Page.loadEventFired")
		var pt pageTiming
		b.eval(timingJS, &pt)
		if !strings.HasSuffix(pt.Shown, "cases shown") {
			t.Fatalf("the page's script did not run: row count %q", pt.Shown)
		}
		lines = append(lines, fmt.Sprintf("load %4.0f ms  DOMContentLoaded %4.0f ms  first paint %4.0f ms  largest paint %4.0f ms", pt.Load, pt.DCL, pt.FCP, pt.LCP))
	}
	var open struct {
		MS     float64 `json:"ms"`
		Open   bool    `json:"open"`
		Title  string  `json:"title"`
		Checks int     `json:"checks"`
		Wire   int     `json:"wire"`
	}
	b.eval(openJS, &open)
	if !open.Open || open.Title == "" || open.Checks == 0 || open.Wire != 1 {
		t.Errorf("a click did not open the case's details: %+v", open)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("published example: %s, %d bytes; load average %s", page[strings.LastIndex(page, "reports"):], st.Size(), strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
	for i, l := range lines {
		t.Logf("  run %d: %s", i+1, l)
	}
	t.Logf("  opening %s: details built in %.0f ms (%d checks)", open.Title, open.MS, open.Checks)
}

// filterJS sets the matrix's filters as a reader does (each select, then
// its change event; the case search, then its input event) and returns
// the row count the page then shows, with what the first body row's
// cells show and whether they are hidden.
const filterJS = `(function(f){
  f = f || {};
  var set = function(id, v){ var el = document.getElementById(id); el.value = v; el.dispatchEvent(new Event(id === 'f-search' ? 'input' : 'change')); };
  ['f-adapter', 'f-cli', 'f-version', 'f-family', 'f-verdict', 'f-search'].forEach(function(id){ set(id, f[id] || ''); });
  var shown = [];
  document.querySelectorAll('#m tbody tr').forEach(function(tr){
    if (tr.hidden) return;
    var cells = [];
    for (var i = 3; i < tr.cells.length; i++) cells.push((tr.cells[i].hidden ? '(' : '') + tr.cells[i].textContent + (tr.cells[i].hidden ? ')' : ''));
    shown.push(tr.getAttribute('data-case') + ' ' + cells.join(' '));
  });
  return JSON.stringify({count: document.getElementById('f-count').textContent, rows: shown});
})`

// TestHTMLFiltersInChromium drives the matrix's filters in a real
// browser: by verdict (failing, new failure), by check family (cells
// recolored by that family's verdict, "-" as SKIP), by adapter (the
// other columns hidden, and only its cells count), CLI, CLI version and
// case name; a cell pointed at gets its title.
func TestHTMLFiltersInChromium(t *testing.T) {
	exe := chromiumPath(t)
	var buf bytes.Buffer
	if err := WriteResultsHTML(&buf, testDoc(t), HTMLOptions{Generated: started}); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b := startCDP(t, exe)
	b.call(b.session, "Page.navigate", map[string]any{"url": "file://" + filepath.ToSlash(page)}, nil)
	b.wait("Page.loadEventFired")
	type result struct {
		Count string   `json:"count"`
		Rows  []string `json:"rows"`
	}
	for _, c := range []struct {
		filters map[string]string
		want    result
	}{
		{nil, result{"5 of 5 cases shown", []string{"claude/plain-text PASS NON-STRICT", "claude/single-tool/stall FAIL ·", "codex/single-tool/exit-mid-line FAIL PASS",
			"codex/single-tool/stall · TIMEOUT", "gemini/plain-text CRASH ·"}}},
		{map[string]string{"f-verdict": "failing"}, result{"4 of 5 cases shown", []string{"claude/single-tool/stall FAIL ·", "codex/single-tool/exit-mid-line FAIL PASS",
			"codex/single-tool/stall · TIMEOUT", "gemini/plain-text CRASH ·"}}},
		{map[string]string{"f-verdict": "new"}, result{"3 of 5 cases shown", []string{"codex/single-tool/exit-mid-line FAIL PASS", "codex/single-tool/stall · TIMEOUT", "gemini/plain-text CRASH ·"}}},
		{map[string]string{"f-family": "lifecycle"}, result{"5 of 5 cases shown", []string{"claude/plain-text SKIP SKIP", "claude/single-tool/stall FAIL ·",
			"codex/single-tool/exit-mid-line FAIL PASS", "codex/single-tool/stall · TIMEOUT", "gemini/plain-text SKIP ·"}}},
		{map[string]string{"f-family": "lifecycle", "f-verdict": "FAIL"}, result{"2 of 5 cases shown", []string{"claude/single-tool/stall FAIL ·", "codex/single-tool/exit-mid-line FAIL PASS"}}},
		{map[string]string{"f-adapter": "1", "f-verdict": "failing"}, result{"1 of 5 cases shown", []string{"codex/single-tool/stall (·) TIMEOUT"}}},
		{map[string]string{"f-cli": "codex", "f-version": "0.169.0"}, result{"2 of 5 cases shown", []string{"codex/single-tool/exit-mid-line FAIL PASS", "codex/single-tool/stall · TIMEOUT"}}},
		{map[string]string{"f-search": "STALL"}, result{"2 of 5 cases shown", []string{"claude/single-tool/stall FAIL ·", "codex/single-tool/stall · TIMEOUT"}}},
	} {
		arg, _ := json.Marshal(c.filters)
		var got result
		b.eval(filterJS+"("+string(arg)+")", &got)
		if got.Count != c.want.Count || strings.Join(got.Rows, "\n") != strings.Join(c.want.Rows, "\n") {
			t.Errorf("filters %v:\n got %s\n%s\nwant %s\n%s", c.filters, got.Count, strings.Join(got.Rows, "\n"), c.want.Count, strings.Join(c.want.Rows, "\n"))
		}
	}
	var title string
	b.eval(`(function(){ var td = document.querySelector('#m td.exp'); td.dispatchEvent(new MouseEvent('mouseover', {bubbles: true})); return JSON.stringify(td.title); })()`, &title)
	if want := "FAIL (expected by the baseline) · reference/unified · claude/single-tool/stall"; title != want {
		t.Errorf("a pointed cell's title %q, want %q", title, want)
	}
}
