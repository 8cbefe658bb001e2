package reference

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/reference/unified"
)

// TestStreamedEvents: a unified event with a long text or result is
// written, piece by piece, as the bytes of its MarshalJSON and a newline,
// whatever lies where the pieces are cut.
func TestStreamedEvents(t *testing.T) {
	base := unified.Base{ID: "ev-1", SessionID: "s", Timestamp: "2026-01-01T00:00:00Z"}
	role := unified.RoleAssistant
	at := func(s string, off int) string { // s placed to run across the first cut
		return strings.Repeat("a", streamPiece-off) + s + strings.Repeat(`b"\`, streamPiece)
	}
	var events []json.Marshaler
	for _, s := range []string{"漢", "é", "😀", "\u2028", "\xe6\xbc", "\x80\x80\x80\x80\x80", "\xf0\x9f\x98", "\n\x01", "\xff"} {
		for off := range 5 {
			events = append(events, &unified.TextChunk{Base: base, Content: at(s, off), Role: &role})
		}
	}
	events = append(events,
		&unified.TextChunk{Base: base, Content: strings.Repeat("\x80", 3*streamPiece), IsPartial: true},
		&unified.ToolCompleted{Base: base, ToolID: "t", Success: true, Result: jsonString(at("漢", 1))},
		&unified.ToolCompleted{Base: base, ToolID: "t", Success: false, Result: jsonString(at("x", 1)), Error: "exit <1> & \"2\""},
		&unified.ToolCompleted{Base: base, ToolID: "t", Result: json.RawMessage(`{"a":` + string(jsonString(at("x", 0))) + `}`)},
		&unified.ToolCompleted{Base: base, ToolID: "t", Result: json.RawMessage(`{"a": ` + string(jsonString(at("x", 0))) + `}`)},
		&unified.ToolCompleted{Base: base, ToolID: "t", Result: json.RawMessage(`"` + strings.Repeat("a", 2*streamPiece) + "\xff" + `"`)},
	)
	// All but the last two (a result spaced, or not UTF-8) stream; and
	// texts shorter than a piece are written from the writer's buffer
	// (a text shorter than spliceMin not).
	streams := len(events) - 2
	short := strings.Repeat(`short "text" é `, spliceMin/8)
	events = append(events[:streams], append([]json.Marshaler{
		&unified.TextChunk{Base: base, Content: short, IsPartial: true, Role: &role},
		&unified.TextChunk{Base: base, Content: short + "\xff\u2028"},
		&ShimText{Content: short}, &ShimThinking{IsThinking: true, Thought: short},
	}, events[streams:]...)...)
	streams += 4
	events = append(events, &unified.TextChunk{Base: base, Content: short[:spliceMin-1]})
	// One writer for all, as a session has: its buffer is used again.
	var out bytes.Buffer
	w := &lineWriter{w: &out}
	for i, ev := range events {
		want, err := ev.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := (&lineWriter{w: io.Discard}).streamed(ev); ok != (i < streams) {
			t.Errorf("event %d: streamed %v", i, ok)
		}
		out.Reset()
		w.event(ev)
		if err := w.failed(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), append(want, '\n')) {
			t.Errorf("event %d is written differently:\n got %.200q...\nwant %.200q...", i, out.Bytes(), want)
		}
	}
}
