package conformance

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestVerdictFailed(t *testing.T) {
	for _, tc := range []struct {
		v             Verdict
		loose, strict bool
	}{
		{Pass, false, false},
		{Skip, false, false},
		{Informational, false, false},
		{NonStrict, false, true},
		{Fail, true, true},
		{Crash, true, true},
		{Timeout, true, true},
	} {
		if got := tc.v.Failed(false); got != tc.loose {
			t.Errorf("%s.Failed(false) = %v, want %v", tc.v, got, tc.loose)
		}
		if got := tc.v.Failed(true); got != tc.strict {
			t.Errorf("%s.Failed(true) = %v, want %v", tc.v, got, tc.strict)
		}
	}
}

func TestMatchCase(t *testing.T) {
	for _, tc := range []struct {
		id    string
		globs []string
		want  bool
	}{
		{"codex/single-tool", nil, true},
		{"codex/single-tool", []string{"codex/single-tool"}, true},
		{"codex/single-tool/line-65536", []string{"codex/single-tool"}, false}, // a plain ID selects that case alone
		{"codex/single-tool/line-65536", []string{"codex/single-tool*"}, true}, // a glob selects the variants too
		{"codex/single-tool/line-65536", []string{"codex/single-tool/"}, true}, // and so does a prefix
		{"codex/single-tool", []string{"codex/single"}, false},                 // not a prefix of a name
		{"codex/single-tool", []string{"codex/*"}, true},
		{"codex/single-tool/line-65536", []string{"codex/*"}, true}, // codex/single-tool matches, so its variants do
		{"codex/single-tool/line-65536", []string{"codex/*/line-*"}, true},
		{"codex/single-tool/line-65536", []string{"*/plain-text"}, false},
		{"claude/single-tool", []string{"*"}, true},
		{"codex/single-tool", []string{"codex/"}, true},
		{"codex/single-tool", []string{"claude/"}, false},
		{"claude/interrupt", []string{"*/interrupt"}, true},
		{"claude/single-tool/interrupt-after-1", []string{"*/interrupt"}, false},
		{"claude/single-tool/interrupt-after-1", []string{"*/single-tool/interrupt-after-?"}, true},
		{"gemini/plain-text", []string{"codex/*", "gemini/plain-text"}, true},
		{"gemini/plain-text", []string{"["}, false}, // a bad pattern matches nothing
		{"transcript/claude/x.jsonl", []string{"transcript/"}, true},
	} {
		if got := matchCase(tc.id, tc.globs); got != tc.want {
			t.Errorf("matchCase(%q, %q) = %v, want %v", tc.id, tc.globs, got, tc.want)
		}
	}
}

// TestShards checks that, for any number of shards, every case of the
// battery runs in exactly one shard.
func TestShards(t *testing.T) {
	cases, err := Generate([]string{"claude", "codex", "gemini"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Fatalf("Generate: %d cases, want the whole battery", len(cases))
	}
	for of := 1; of <= 7; of++ {
		count := map[string]int{}
		sizes := make([]int, of)
		for shard := range of {
			for _, c := range cases {
				if inShard(c.ID, shard, of) {
					count[c.ID]++
					sizes[shard]++
				}
			}
		}
		for _, c := range cases {
			if count[c.ID] != 1 {
				t.Errorf("%d shards: case %s runs in %d shards", of, c.ID, count[c.ID])
			}
		}
		for shard, n := range sizes {
			if of > 1 && n == 0 {
				t.Errorf("%d shards: shard %d is empty", of, shard+1)
			}
		}
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.ID] {
			t.Errorf("case ID %s generated twice", c.ID)
		}
		seen[c.ID] = true
	}
}

func TestReproduce(t *testing.T) {
	c := &Case{ID: "codex/single-tool/line-65536"}
	for _, tc := range []struct {
		adapter Adapter
		c       *Case
		seed    int64
		want    string
	}{
		{Adapter{}, c, 1, "agentconform run --case codex/single-tool/line-65536 --seed 1 --keep"},
		{Adapter{Reproduce: "./my-adapter"}, c, 7, "agentconform run --adapter ./my-adapter --case codex/single-tool/line-65536 --seed 7 --keep"},
		{Adapter{Reproduce: "node driver.mjs"}, c, 1, "agentconform run --adapter 'node driver.mjs' --case codex/single-tool/line-65536 --seed 1 --keep"},
		{Adapter{Reproduce: "sh -c 'exec x'"}, c, 1, `agentconform run --adapter 'sh -c '\''exec x'\''' --case codex/single-tool/line-65536 --seed 1 --keep`},
		{Adapter{Reproduce: "a", SignalInterrupt: true}, c, 1, "agentconform run --adapter a --case codex/single-tool/line-65536 --seed 1 --keep --interrupt signal"},
		{Adapter{}, &Case{ID: "transcript/claude/my_file.jsonl", Transcript: "my dir/it's.jsonl"}, 1,
			`agentconform run --transcript 'my dir/it'\''s.jsonl' --case transcript/claude/my_file.jsonl --seed 1 --keep`},
	} {
		if got := reproduce(&Config{Adapter: tc.adapter, Seed: tc.seed}, tc.c); got != tc.want {
			t.Errorf("reproduce:\n got %s\nwant %s", got, tc.want)
		}
	}
}

// TestShellQuote has the shell read quoted words back.
func TestShellQuote(t *testing.T) {
	words := []string{"", "plain", "with space", "it's", `"double"`, `back\slash`, "$HOME", "`cmd`", "a;b|c&d", "new\nline", "*?[", "tab\there", "ünï", "--flag=x,y:z+1"}
	var script strings.Builder
	script.WriteString("printf '%s\\0'")
	for _, w := range words {
		script.WriteString(" " + shellQuote(w))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script.String())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh -c %q: %v", script.String(), err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if d := cmp.Diff(words, got); d != "" {
		t.Errorf("words through the shell (-want +got):\n%s", d)
	}
	for _, w := range []string{"plain", "a/b.c", "x=1", "v1.2-3_4"} {
		if q := shellQuote(w); q != w {
			t.Errorf("shellQuote(%q) = %q, want it unquoted", w, q)
		}
	}
}

func TestParseBaseline(t *testing.T) {
	in := `# expected failures
codex/single-tool/line-67108864 buffer/line-intact
claude/interrupt   # every check of the case

  codex/single-tool/line-67108864 buffer/line-intact
gemini/plain-text lossless/text # trailing comment
`
	b, err := ParseBaseline(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"codex/single-tool/line-67108864 buffer/line-intact", "claude/interrupt", "gemini/plain-text lossless/text"}
	if d := cmp.Diff(want, b.order); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
	for _, tc := range []struct {
		caseID, check string
		entry         string
		ok            bool
	}{
		{"codex/single-tool/line-67108864", "buffer/line-intact", "codex/single-tool/line-67108864 buffer/line-intact", true},
		{"codex/single-tool/line-67108864", "lifecycle/reaps-cli", "", false},
		{"claude/interrupt", "interrupt/passed-on", "claude/interrupt", true},
		{"claude/interrupt/x", "interrupt/passed-on", "", false},
	} {
		entry, ok := b.expects(tc.caseID, tc.check)
		if entry != tc.entry || ok != tc.ok {
			t.Errorf("expects(%q, %q) = %q, %v; want %q, %v", tc.caseID, tc.check, entry, ok, tc.entry, tc.ok)
		}
	}
	if _, ok := (*Baseline)(nil).expects("a", "b"); ok {
		t.Error("a nil baseline expects something")
	}
}

func TestParseBaselineErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a b c\n", "line 1: "},
		{"# ok\n\ncodex/x output/valid\ncodex/x output/valid extra # no\n", "line 4: "},
	} {
		_, err := ParseBaseline(strings.NewReader(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ParseBaseline(%q) = %v, want an error starting %q", tc.in, err, tc.want)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "baseline.txt")
	if err := os.WriteFile(path, []byte("ok check\none two three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadBaseline(path)
	if err == nil || !strings.Contains(err.Error(), path+": line 2: ") {
		t.Errorf("ReadBaseline: %v, want the file and line 2", err)
	}
	if _, err := ReadBaseline(filepath.Join(dir, "missing")); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("ReadBaseline of a missing file: %v, want a wrapped not-exist error", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}

// results builds Results from "case check verdict" triples.
func results(triples ...string) *Results {
	res := &Results{}
	byID := map[string]*CaseResult{}
	for _, tr := range triples {
		f := strings.Fields(tr)
		cr := byID[f[0]]
		if cr == nil {
			cr = &CaseResult{ID: f[0]}
			byID[f[0]] = cr
			res.Cases = append(res.Cases, cr)
		}
		cr.Checks = append(cr.Checks, CheckResult{Check: f[1], Verdict: Verdict(f[2])})
	}
	return res
}

func TestGate(t *testing.T) {
	base, err := ParseBaseline(strings.NewReader(`
codex/a output/valid       # still failing: expected
codex/b                    # the whole case: expected
codex/c lossless/text      # passes now: stale
codex/a lossless/usage     # passes now: stale
gemini/gone output/valid   # did not run: neither
codex/d buffer/line-intact # failing SHOULD, strict only
`))
	if err != nil {
		t.Fatal(err)
	}
	mk := func() *Results {
		return results(
			"codex/a output/valid FAIL",
			"codex/a lossless/usage PASS",
			"codex/b interrupt/passed-on CRASH",
			"codex/b interrupt/cancelled-ending TIMEOUT",
			"codex/c lossless/text PASS",
			"codex/d buffer/line-intact NON-STRICT",
			"codex/e output/records FAIL",
			"codex/e output/hello SKIP",
			"codex/e output/valid INFORMATIONAL",
		)
	}

	res := mk()
	g := gate(res, base, false)
	want := Gate{
		Passed:   false,
		Counts:   map[Verdict]int{Fail: 2, Pass: 2, Crash: 1, Timeout: 1, NonStrict: 1, Skip: 1, Informational: 1},
		New:      []string{"codex/e output/records"},
		Expected: []string{"codex/a output/valid", "codex/b interrupt/passed-on", "codex/b interrupt/cancelled-ending"},
		Stale:    []string{"codex/c lossless/text", "codex/a lossless/usage", "codex/d buffer/line-intact"},
	}
	if d := cmp.Diff(want, g); d != "" {
		t.Errorf("gate (-want +got):\n%s", d)
	}
	var baselined []string
	for _, c := range res.Cases {
		for _, r := range c.Checks {
			if r.Baselined {
				baselined = append(baselined, c.ID+" "+r.Check)
			}
		}
	}
	if d := cmp.Diff(want.Expected, baselined); d != "" {
		t.Errorf("results marked baselined (-want +got):\n%s", d)
	}

	// Under strict, the SHOULD failure is a failure the baseline expects.
	g = gate(mk(), base, true)
	if d := cmp.Diff([]string{"codex/c lossless/text", "codex/a lossless/usage"}, g.Stale); d != "" {
		t.Errorf("strict stale (-want +got):\n%s", d)
	}
	if !strings.Contains(strings.Join(g.Expected, ","), "codex/d buffer/line-intact") {
		t.Errorf("strict: expected %v, want the SHOULD failure among them", g.Expected)
	}

	// No baseline: every failure is new.
	g = gate(mk(), nil, false)
	if g.Passed || len(g.New) != 4 || len(g.Stale) != 0 || len(g.Expected) != 0 {
		t.Errorf("gate without baseline = %+v, want 4 new failures", g)
	}

	// Only expected failures: the gate passes.
	g = gate(results("codex/a output/valid FAIL", "codex/b x CRASH"), base, false)
	if !g.Passed || len(g.New) != 0 {
		t.Errorf("gate of expected failures = %+v, want passed", g)
	}
}

// TestWriteBaseline writes a run's failures and reads them back: the same
// run then passes its gate with no stale entry.
func TestWriteBaseline(t *testing.T) {
	res := results("codex/a output/valid FAIL", "codex/a lossless/text PASS", "codex/b output/records TIMEOUT", "codex/c x NON-STRICT")
	var buf bytes.Buffer
	if err := WriteBaseline(&buf, res, false); err != nil {
		t.Fatal(err)
	}
	b, err := ParseBaseline(&buf)
	if err != nil {
		t.Fatalf("reading back %q: %v", buf.String(), err)
	}
	if d := cmp.Diff([]string{"codex/a output/valid", "codex/b output/records"}, b.order); d != "" {
		t.Errorf("written entries (-want +got):\n%s", d)
	}
	g := gate(results("codex/a output/valid FAIL", "codex/a lossless/text PASS", "codex/b output/records TIMEOUT", "codex/c x NON-STRICT"), b, false)
	if !g.Passed || len(g.Stale) != 0 {
		t.Errorf("gate against its own baseline = %+v, want passed, nothing stale", g)
	}
}

// TestCodexReadsStdin holds the reading of codex argv to the real CLI's:
// only exec resume with a prompt other than "-" leaves stdin alone.
func TestCodexReadsStdin(t *testing.T) {
	for argv, want := range map[string]bool{
		"codex exec --json hi":                                    true,
		"codex exec --json -":                                     true,
		"codex exec --json resume 0199 hi":                        false,
		"codex exec --json -s read-only resume 0199 -c x=1 hi":    false,
		"codex exec --json resume 0199":                           true,
		"codex exec --json resume 0199 -":                         true,
		"codex exec --json resume --last hi":                      false,
		"codex exec --json resume --last":                         true,
		"codex exec --json hi resume 0199":                        false,
		"codex exec --json -m resume resume 0199 hi":              false,
		"codex exec --json --skip-git-repo-check resume --all 01": true,
	} {
		if got := codexReadsStdin(strings.Fields(argv)); got != want {
			t.Errorf("codexReadsStdin(%q) = %v, want %v", argv, got, want)
		}
	}
}
