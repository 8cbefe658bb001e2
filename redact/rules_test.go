package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseRules(t *testing.T) {
	rules, err := ParseRules(strings.NewReader(`# Acme's rules
acme-token     acme_(?:live|test)_[0-9a-f]{8}

acme-password	key:(?i)^internal_pass(word)?$
ticket         key:^ticket$ ([0-9]{4,}) and more
`), "acme.rules")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 3 || rules[0].Name != "acme-token" || rules[0].Key != nil || rules[1].Key == nil || rules[1].Regexp != nil ||
		rules[2].Key.String() != "^ticket$" || rules[2].Regexp.String() != "([0-9]{4,}) and more" {
		t.Fatalf("rules = %+v", rules)
	}
	_, err = ParseRules(strings.NewReader("ok x+\nBad_Name x\nno-regexp\nbad-re a(b\nbad-key key:(\nempty ()\nkeyonly key:\n"), "r.txt")
	for _, want := range []string{
		`r.txt:2: rule name "Bad_Name"`, "r.txt:3: rule no-regexp has no regexp", "r.txt:4: regexp: error parsing regexp",
		"r.txt:5: key regexp:", `r.txt:6: regexp "()" matches the empty string`, "r.txt:7: key: needs a regexp",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if err != nil && strings.Contains(err.Error(), "r.txt:1:") {
		t.Errorf("a good line was refused: %v", err)
	}
}

// TestRulesRedact: a user's rules find values by regexp anywhere, and by
// the names of JSON fields (also nested in a string) and assignments;
// their names are the placeholders' kinds.
func TestRulesRedact(t *testing.T) {
	rules, err := ParseRules(strings.NewReader(`acme-token acme_live_[0-9a-f]{8}
acme-password key:(?i)^internal_pass(word)?$
ticket key:^ticket$ T-([0-9]{4,})
`), "acme.rules")
	if err != nil {
		t.Fatal(err)
	}
	r := New(Options{Rules: rules})
	inner, _ := json.Marshal(map[string]string{"internal_password": "zebra-cloud", "ticket": "T-4711"})
	line, _ := json.Marshal(map[string]any{"text": "token acme_live_0123abcd\nINTERNAL_PASS = zebra-sky\nticket: T-815 (short)",
		"internal_password": "zebra-moon", "file": string(inner)})
	got := r.String(string(line))
	for _, gone := range []string{"acme_live_0123abcd", "zebra-sky", "zebra-moon", "zebra-cloud", "4711"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q survived: %s", gone, got)
		}
	}
	for _, want := range []string{"<redacted:acme-token:1>", "<redacted:acme-password:", "T-<redacted:ticket:1>", "T-815"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %s", got, want)
		}
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(got), &back); err != nil || len(back) != 3 {
		t.Errorf("not the same JSON: %v %s", err, got)
	}
	if again := r.String(got); again != got {
		t.Errorf("second pass changed it:\n%s\n%s", got, again)
	}
}

// TestLinesSplitDeltas: a secret split across streamed deltas (Claude's
// text deltas, Gemini's delta messages) is found in their joined text;
// the delta it starts in shows the placeholder and the rest of it is
// gone from the next. Lines without one are left as String leaves them.
func TestLinesSplitDeltas(t *testing.T) {
	key := "AK" + "IA" + "FAKE" + "SPLITEXAMPLE"
	gem := func(text string) string {
		b, _ := json.Marshal(map[string]any{"type": "message", "role": "assistant", "content": text, "delta": true})
		return string(b)
	}
	claude := func(text string, index int) string {
		b, _ := json.Marshal(map[string]any{"type": "stream_event", "event": map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "text_delta", "text": text}}})
		return string(b)
	}
	in := []string{
		`{"type":"init","session_id":"s"}`,
		gem("The id is " + key[:6]), gem(key[6:12]), gem(key[12:] + ", and"), gem(" that is all."),
		`{"type":"result","status":"success"}`,
		claude("key "+key[:10], 0), claude(key[10:], 1), // two blocks: not one text
	}
	r := New(Options{})
	out := r.Lines(in)
	joined := ""
	for _, l := range out[1:5] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %s", l)
		}
		joined += m["content"].(string)
	}
	if joined != "The id is <redacted:aws-key:1>, and that is all." {
		t.Errorf("joined deltas: %q\n%s", joined, strings.Join(out, "\n"))
	}
	if out[0] != in[0] || out[5] != in[5] || out[4] != in[4] {
		t.Errorf("lines without a secret changed:\n%s", strings.Join(out, "\n"))
	}
	// Across content blocks nothing is joined (and neither half is a
	// key by itself).
	if out[6] != in[6] || out[7] != in[7] {
		t.Errorf("deltas of different blocks were joined:\n%s\n%s", out[6], out[7])
	}
	if rep := r.Report(); rep.Total() != 1 {
		t.Errorf("report = %v", rep)
	}
}
