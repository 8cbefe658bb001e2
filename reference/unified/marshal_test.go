package unified

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzToolCompletedMarshal holds ToolCompleted's hand-written result
// member to what encoding/json writes for the same struct: the same bytes,
// or an error for both.
func FuzzToolCompletedMarshal(f *testing.F) {
	f.Add("t1", []byte(`{"output":"ok"}`), "", true)
	f.Add("t2", []byte(` { "a" : [1, 2] } `), "boom <&> \u2028 é", false)
	f.Add("t3", []byte(`null`), "", false)
	f.Add("t4", []byte(``), "denied", false)
	f.Add("t5", []byte(`{"a":`), "", true)
	f.Add("t6", []byte(`"line\nline"`), "", true)
	f.Add("t7", []byte("{\"q\":\"\xff\xfeok\"}"), "\xff", true)
	f.Fuzz(func(t *testing.T, id string, result []byte, errText string, ok bool) {
		e := &ToolCompleted{Base: Base{ID: "ev-1", SessionID: "s", Timestamp: "2026-01-01T00:00:00Z"}, ToolID: id, Success: ok, Result: result, Error: errText}
		type plain ToolCompleted
		want, werr := marshalTyped(TypeToolCompleted, (*plain)(e))
		want = ValidUTF8(want)
		got, gerr := e.MarshalJSON()
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("result %q: MarshalJSON error %v, encoding/json error %v", result, gerr, werr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("result %q:\n got %s\nwant %s", result, got, want)
		}
		if gerr == nil && (!json.Valid(got) || !utf8.Valid(got)) {
			t.Fatalf("invalid JSON or UTF-8: %q", got)
		}
	})
}
