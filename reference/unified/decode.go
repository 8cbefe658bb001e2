package unified

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrUnknownType is returned by Decode for a JSON object whose "type" is
// not one of the eight unified event types.
var ErrUnknownType = errors.New("unified: unknown event type")

// New returns a zero event of type t, or nil if t is not a unified type.
func New(t Type) Event {
	switch t {
	case TypeSessionStarted:
		return &SessionStarted{}
	case TypeTextChunk:
		return &TextChunk{}
	case TypeToolStarted:
		return &ToolStarted{}
	case TypeToolProgress:
		return &ToolProgress{}
	case TypeToolCompleted:
		return &ToolCompleted{}
	case TypeFileChanged:
		return &FileChanged{}
	case TypeTurnCompleted:
		return &TurnCompleted{}
	case TypeSessionEnded:
		return &SessionEnded{}
	}
	return nil
}

// Decode reads one event (one JSON line) into the struct of its type.
// Unknown fields are ignored, as the open schema allows; an unknown type is
// ErrUnknownType.
func Decode(line []byte) (Event, error) {
	var head struct {
		Type Type `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return nil, fmt.Errorf("unified: decoding event: %w", err)
	}
	ev := New(head.Type)
	if ev == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownType, head.Type)
	}
	if err := json.Unmarshal(line, ev); err != nil {
		return nil, fmt.Errorf("unified: decoding %s event: %w", head.Type, err)
	}
	return ev, nil
}
