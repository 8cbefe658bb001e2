package reference

import (
	"encoding/json"
	"testing"
)

// FuzzShimToolResultMarshal holds ShimToolResult's hand-written content
// member to what encoding/json writes for the same struct.
func FuzzShimToolResultMarshal(f *testing.F) {
	f.Add("t1", []byte(`"ok"`), false)
	f.Add("t2", []byte(` { "output" : "x <&>" } `), true)
	f.Add("t3", []byte(`null`), false)
	f.Add("t4", []byte(``), false)
	f.Add("t5", []byte(`[1,`), false)
	f.Fuzz(func(t *testing.T, id string, content []byte, isErr bool) {
		e := &ShimToolResult{ToolUseID: id, Content: content, IsError: isErr}
		type plain ShimToolResult
		c := *e
		if isNull(c.Content) {
			c.Content = json.RawMessage(`""`)
		}
		want, werr := marshalShim("tool_result", "", (*plain)(&c))
		got, gerr := e.MarshalJSON()
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("content %q: MarshalJSON error %v, encoding/json error %v", content, gerr, werr)
		}
		if werr == nil && string(got) != string(want) {
			t.Fatalf("content %q:\n got %s\nwant %s", content, got, want)
		}
	})
}
