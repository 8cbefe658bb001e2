package unified

import (
	"bytes"
	"strings"
	"testing"
)

// TestLongTextChunkAsShort: a TextChunk whose content is long enough to be
// spliced in marshals to the same bytes as through encoding/json.
func TestLongTextChunkAsShort(t *testing.T) {
	role := RoleAssistant
	content := strings.Repeat(`plain text, "quoted" \ back <html> & é 漢 `+"\u2028\t\n\x01\xff", 2000)
	e := &TextChunk{Base: Base{ID: "ev-1", SessionID: "s", Timestamp: "2026-01-01T00:00:00Z"}, Content: content, IsPartial: true, Role: &role}
	if len(content) < longContent {
		t.Fatalf("content of %d bytes is not long", len(content))
	}
	got, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	type plain TextChunk
	want, err := marshalTyped(TypeTextChunk, (*plain)(e))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("long content marshals differently:\n got %.300s\nwant %.300s", got, want)
	}
}
