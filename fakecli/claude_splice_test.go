package fakecli

import (
	"reflect"
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
		got, ok := spliceDelta(w, []byte("left as it is"))
		want, err := marshalJSON(w)
		if err != nil {
			t.Fatal(err)
		}
		if len(text) >= spliceMin && text != "" && !ok {
			t.Fatalf("%q: not spliced", s)
		}
		if ok && string(got) != "left as it is"+string(want) {
			t.Fatalf("%q:\n got %.300s\nwant %.300s", s, got, want)
		}
	})
}

// TestKeptStreamedLine: a long assistant line classifyClaude read is read
// by parseStreamed as parseStreamedLine reads it.
func TestKeptStreamedLine(t *testing.T) {
	text := `{"type":"assistant","message":{"id":"msg_1","model":"m","content":[{"type":"text","text":"` +
		strings.Repeat("ladder ", keepMin/7+1) + `"}],"usage":{"input_tokens":3}},"parent_tool_use_id":null,"session_id":"s"}`
	text = strings.Clone(text)
	if cl := classifyClaude(text); cl.kind != kindAssistant {
		t.Fatalf("kind %v", cl.kind)
	}
	for range 2 { // kept, then the last line read
		got, gok := parseStreamed(text)
		want, wok := parseStreamedLine(text)
		if gok != wok || !reflect.DeepEqual(got, want) {
			t.Errorf("parseStreamed %v %+.200v, parseStreamedLine %v %+.200v", gok, got, wok, want)
		}
	}
	for _, k := range streamedMemo.long {
		if k.text == text {
			t.Errorf("the line is still kept once read")
		}
	}
}
