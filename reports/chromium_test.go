package reports

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
// (the filters count the rows, the dialog opens), the payload shows as
// text, no injected element exists and the title is unchanged. It takes a
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
	m := regexp.MustCompile(`<template id="d(\d+)" data-title="claude/single-tool/stall`).FindSubmatch(buf.Bytes())
	if m == nil {
		t.Fatal("no details for claude/single-tool/stall")
	}
	url := "file://" + filepath.ToSlash(page) + "#d" + string(m[1])

	dom := string(runChromium(t, exe, "--dump-dom", url))
	title := regexp.MustCompile(`(?s)<title>(.*?)</title>`).FindStringSubmatch(dom)
	if title == nil || title[1] != "agentconform results" {
		t.Errorf("title after load: %q; want it unchanged (no injected script ran)", title)
	}
	if strings.Contains(dom, "pwned</title>") || strings.Count(strings.ToLower(dom), "<script") != 1 || strings.Contains(dom, "<img") {
		t.Errorf("injected markup became elements:\n%s", dom)
	}
	if !strings.Contains(dom, `5 of 5 cases shown`) {
		t.Errorf("the page's script did not run (no row count)")
	}
	open := regexp.MustCompile(`<dialog[^>]*\bopen\b`).MatchString(dom)
	body := dom[strings.Index(dom, `id="dlg-body"`):]
	if !open || !strings.Contains(body, "claude/single-tool/stall") {
		t.Fatalf("the #d%s details did not open", m[1])
	}
	for _, want := range []string{
		`&lt;script&gt;document.title='pwned'&lt;/script&gt;&lt;/textarea&gt;&lt;img src=x onerror="document.title='pwned'"&gt;`,
		"Requirement of lifecycle/reports-failure.",
		`<span class="t">0.120s</span>`,
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
