package reports

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromiumPath finds a headless-capable Chromium (Debian's chromium
// package, which .ci/run installs). Without one the test skips, except
// under CI=true, where it fails.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (CI=true): .ci/run installs it with apt-get install chromium")
	}
	t.Skip("chromium is not installed; apt-get install chromium to run this test")
	return ""
}

// runChromium runs a headless Chromium with a fresh profile and no
// network chatter, and returns its stdout.
func runChromium(t *testing.T, exe string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, exe, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

// TestHTMLInChromium opens the report in a real browser on the details
// of a case whose transcript and adapter output carry <script>,
// </textarea> and an <img onerror> payload: the page's own script runs
// (the filters count the rows, the dialog opens with the details it
// built from the page's data: checks, requirement and linked source,
// diff, passed checks, reproduce command, wire with timing), the payload
// shows as text, no injected element exists and the title is unchanged. It takes a
// screenshot of the open details (kept in $AGENTCONFORM_SCREENSHOT_DIR if
// set).
func TestHTMLInChromium(t *testing.T) {
	exe := chromiumPath(t)
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := WriteResultsHTML(&buf, testDoc(t), HTMLOptions{Generated: started, Title: "agentconform results"}); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, data := splitPageData(t, buf.String())
	id := -1
	for i, c := range data.D {
		if c.ID == "claude/single-tool/stall" {
			id = i
		}
	}
	if id < 0 {
		t.Fatal("no details for claude/single-tool/stall")
	}
	url := "file://" + filepath.ToSlash(page) + "#d" + strconv.Itoa(id)

	dom := string(runChromium(t, exe, "--dump-dom", url))
	title := regexp.MustCompile(`(?s)<title>(.*?)</title>`).FindStringSubmatch(dom)
	if title == nil || title[1] != "agentconform results" {
		t.Errorf("title after load: %q; want it unchanged (no injected script ran)", title)
	}
	if strings.Contains(dom, "pwned</title>") || strings.Count(strings.ToLower(dom), "<script") != 2 ||
		strings.Count(dom, `<script type="application/json" id="data">`) != 1 || strings.Contains(dom, "<img") {
		t.Errorf("injected markup became elements:\n%s", dom)
	}
	if !strings.Contains(dom, `5 of 5 cases shown`) {
		t.Errorf("the page's script did not run (no row count)")
	}
	open := regexp.MustCompile(`<dialog[^>]*\bopen\b`).MatchString(dom)
	body := dom[strings.Index(dom, `id="dlg-body"`):]
	body = body[:strings.Index(body, "</dialog>")]
	if !open || !strings.Contains(dom, `<strong id="dlg-title">claude/single-tool/stall · reference/unified</strong>`) {
		t.Fatalf("the #d%d details did not open", id)
	}
	for _, want := range []string{
		`&lt;script&gt;document.title='pwned'&lt;/script&gt;&lt;/textarea&gt;&lt;img src=x onerror="document.title='pwned'"&gt;`,
		`<span class="badge v-FAIL">FAIL</span> <span class="muted">failure expected by the baseline</span> · 0.250s · claude `,
		` · fixture <code>claude/single-tool</code></p><p>Case claude/single-tool/stall.</p><dl class="kv"><dt>adapter</dt><dd>reference/unified</dd>`,
		`<dt>requirement</dt><dd>Requirement of lifecycle/reports-failure.</dd><dt>source</dt><dd><a href="https://github.com/agentconform/agentconform/blob/main/docs/protocols/unified.md#records">docs/protocols/unified.md#records</a>; an older source</dd>`,
		`<pre class="diff"><span class="del">-turn_end ok:false</span><span class="ins">+&lt;script&gt;`,
		`<span class="muted">MUST · lifecycle · expected by the baseline</span>`,
		`<table class="passed"><tbody><tr><td><span class="badge v-PASS">PASS</span></td><td><code>output/hello</code></td><td>Requirement of output/hello. <span class="muted">(MUST)</span></td></tr></tbody></table>`,
		`<span class="t">0.120s</span> adapter: turn_end ok=true (after 3 events)`,
		`<h3>Reproduce</h3><pre>agentconform run --case claude/single-tool/stall --seed 7 --keep</pre>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("open details lack %s", want)
		}
	}

	shot := filepath.Join(dir, "report.png")
	runChromium(t, exe, "--window-size=1280,900", "--hide-scrollbars", "--screenshot="+shot, url)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != 1280 || b.Dy() != 900 {
		t.Errorf("screenshot %v, want 1280x900", b)
	}
	colors := map[uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colors[r>>8<<16|g>>8<<8|bl>>8] = true
		}
	}
	if len(colors) < 8 {
		t.Errorf("the screenshot is nearly blank (%d colors)", len(colors))
	}
	if keep := os.Getenv("AGENTCONFORM_SCREENSHOT_DIR"); keep != "" {
		data, _ := os.ReadFile(shot)
		os.WriteFile(filepath.Join(keep, "report-details.png"), data, 0o644)
	}
}
