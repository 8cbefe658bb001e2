package fakecli

import (
	"strings"
	"testing"
)

// FuzzSpliceDelta holds spliceDelta to encoding/json: a long text or
// thinking delta's stream_event marshals to the same bytes.
func FuzzSpliceDelta(f *testing.F) {
	for _, s := range []string{"plain", `"q" \ <&> "text":""`, "é 漢 \u2028\u2029\t\n\x01\x7f\xff", "\xed\xa0\x80"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, thinking bool) {
		text := strings.Repeat(s, spliceMin/max(len(s), 1)+1)
		parent := "toolu_1"
		var d any = textDelta{Type: "text_delta", Text: text}
		if thinking {
			d = thinkingDelta{Type: "thinking_delta", Thinking: text}
		}
		w := streamEvent{Type: "stream_event", Event: blockDeltaEvent{Type: "content_block_delta", Index: 3, Delta: d},
			SessionID: `s"text":""`, ParentToolUseID: &parent, UUID: "u", APIMessageID: "msg_1"}
		got, ok := spliceDelta(w)
		want, err := marshalJSON(w)
		if err != nil {
			t.Fatal(err)
		}
		if len(text) >= spliceMin && text != "" && !ok {
			t.Fatalf("%q: not spliced", s)
		}
		if ok && got != string(want) {
			t.Fatalf("%q:\n got %.300s\nwant %.300s", s, got, want)
		}
	})
}
