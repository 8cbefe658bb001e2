package reference

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/agentconform/agentconform/jsonstr"
	"github.com/agentconform/agentconform/jsonvalid"
	"github.com/agentconform/agentconform/reference/unified"
)

// streamMin is the size from which lineWriter writes a unified event's
// long member straight to the runner instead of into the event's line
// first: a 64 MiB text or tool result is then not copied into a fresh
// buffer of its size (16,000 page faults) to be written once.
const streamMin = 1 << 20

// streamPiece is how much of a long text is encoded at a time.
const streamPiece = 1 << 20

// spliceMin is the text from which lineWriter writes a unified textChunk
// from a buffer of its own, used again line after line, instead of the
// fresh one MarshalJSON returns: a 64 MiB text streams as 4,096 deltas.
const spliceMin = 1 << 10

// appendJSONer is an event that can append its line to a buffer (the
// shim's text lines), as its MarshalJSON writes it.
type appendJSONer interface {
	appendJSON(b []byte) []byte
}

// streamed writes ev, when it is a unified event with a long text or
// result, as the bytes its MarshalJSON gives, in pieces, or when it is
// a text (an appendJSONer, a unified textChunk of spliceMin or more)
// from w.buf; it reports whether it did (false: the caller marshals ev
// as usual). The caller holds w.mu.
func (w *lineWriter) streamed(ev json.Marshaler) (bool, error) {
	switch e := ev.(type) {
	case appendJSONer:
		w.buf = append(e.appendJSON(w.buf[:0]), '\n')
		_, err := w.w.Write(w.buf)
		return true, err
	case *unified.TextChunk:
		if len(e.Content) < spliceMin {
			return false, nil
		}
		// TextChunk.MarshalJSON splices a long content into the event
		// marshalled without it: the same, into w.buf, or piece by
		// piece.
		head := *e
		head.Content = ""
		b, err := head.MarshalJSON()
		if err != nil {
			return false, nil
		}
		const member, empty = `"content":`, `""`
		i := bytes.Index(b, []byte(member+empty))
		if i < 0 {
			return false, nil
		}
		i += len(member)
		if len(e.Content) < streamMin {
			w.buf = jsonstr.Append(append(w.buf[:0], b[:i]...), e.Content)
			w.buf = append(append(w.buf, b[i+len(empty):]...), '\n')
			_, err = w.w.Write(w.buf)
			return true, err
		}
		return true, w.writeAll(b[:i], nil, e.Content, b[i+len(empty):])
	case *unified.ToolCompleted:
		if len(e.Result) < streamMin || !jsonvalid.Compact(e.Result) || !utf8.Valid(e.Result) {
			return false, nil
		}
		// ToolCompleted.MarshalJSON appends a compact, valid result as
		// it is: the event with a result of 0 marks where it goes.
		c := *e
		c.Result = json.RawMessage("0")
		b, err := c.MarshalJSON()
		if err != nil {
			return false, nil
		}
		c.Result, c.Error = nil, ""
		h, err := c.MarshalJSON()
		if err != nil || len(h) == 0 {
			return false, nil
		}
		const member = `,"result":`
		i := len(h) - 1 // where the head's '}' was
		if !bytes.HasPrefix(b[i:], []byte(member+"0")) {
			return false, nil
		}
		i += len(member)
		return true, w.writeAll(b[:i], e.Result, "", b[i+1:])
	}
	return false, nil
}

// writeAll writes head, raw as it is, text (unless raw is set) as a JSON
// string, tail and the newline.
func (w *lineWriter) writeAll(head, raw []byte, text string, tail []byte) error {
	if _, err := w.w.Write(head); err != nil {
		return err
	}
	var err error
	if raw != nil {
		_, err = w.w.Write(raw)
	} else {
		err = w.writeText(text)
	}
	if err != nil {
		return err
	}
	_, err = w.w.Write(append(tail[:len(tail):len(tail)], '\n'))
	return err
}

// writeText writes text as a JSON string, encoded as jsonstr.Append
// encodes it, streamPiece bytes at a time into a buffer kept for the
// next.
func (w *lineWriter) writeText(text string) error {
	if _, err := w.w.Write([]byte{'"'}); err != nil {
		return err
	}
	for len(text) > 0 {
		n := pieceEnd(text, streamPiece)
		w.buf = jsonstr.Append(w.buf[:0], text[:n])
		if _, err := w.w.Write(w.buf[1 : len(w.buf)-1]); err != nil {
			return err
		}
		text = text[n:]
	}
	_, err := w.w.Write([]byte{'"'})
	return err
}

// pieceEnd is where to cut text at most max bytes in so that each side
// encodes as it does within the whole: at a byte that starts a UTF-8
// sequence (or is ASCII), since no sequence runs across one; failing
// that within the three bytes before, at max, which then no valid
// sequence runs across either.
func pieceEnd(text string, max int) int {
	n := min(len(text), max)
	if n == len(text) {
		return n
	}
	for c := n; c > 0 && c > n-utf8.UTFMax; c-- {
		if utf8.RuneStart(text[c]) {
			return c
		}
	}
	return n
}
