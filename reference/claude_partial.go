package reference

import "hash/maphash"

// claudeDeltas reconciles the two forms in which Claude delivers a text
// block under --include-partial-messages: stream_event text (or thinking)
// deltas first, then the assistant message carrying the whole block
// (docs/protocols/claude.md#partial-messages). The deltas become partial text facts as they come;
// the whole block then adds only what the deltas did not already deliver,
// so the concatenated text equals the CLI's text exactly once.
type claudeDeltas struct {
	msgID   string                // the message being streamed
	open    map[int]*streamedText // blocks by index within msgID
	pending []*streamedText       // streamed blocks not yet matched by an assistant message
}

// streamedText is one block's deltas so far: their length and hash, which
// is all complete compares (a block streamed in 4 KiB deltas may be 64 MiB
// long: its text is not kept a second time). The hash is seeded afresh in
// every process, so that no text can be made to collide with another.
type streamedText struct {
	msgID   string
	kind    textKind
	n       int
	sum     maphash.Hash
	matched bool
}

// write adds a delta's text.
func (b *streamedText) write(text string) {
	if b.n == 0 {
		b.sum.SetSeed(deltaSeed)
	}
	b.sum.WriteString(text)
	b.n += len(text)
}

// deltaSeed seeds the hashes of streamed text.
var deltaSeed = maphash.MakeSeed()

// prefixOf reports whether the streamed text is a prefix of text (or all
// of it).
func (b *streamedText) prefixOf(text string) bool {
	if b.n > len(text) {
		return false
	}
	if b.n == 0 {
		return true
	}
	var h maphash.Hash
	h.SetSeed(deltaSeed)
	h.WriteString(text[:b.n])
	return h.Sum64() == b.sum.Sum64()
}

func (d *claudeDeltas) reset() {
	d.msgID, d.open, d.pending = "", nil, nil
}

// message notes a message_start.
func (d *claudeDeltas) message(id string) {
	d.msgID = id
	d.open = map[int]*streamedText{}
}

// start notes a content_block_start of a text or thinking block.
func (d *claudeDeltas) start(index int, kind textKind) {
	if d.open == nil {
		d.open = map[int]*streamedText{}
	}
	b := &streamedText{msgID: d.msgID, kind: kind}
	d.open[index] = b
	d.pending = append(d.pending, b)
}

// delta turns a text or thinking delta into a partial text fact.
func (d *claudeDeltas) delta(index int, kind textKind, text string) []fact {
	b := d.open[index]
	if b == nil || b.kind != kind {
		// A delta without its block start: stream it all the same.
		d.start(index, kind)
		b = d.open[index]
	}
	if text == "" {
		return nil
	}
	b.write(text)
	return []fact{factText{kind: kind, text: text, partial: true}}
}

// complete handles a whole block from an assistant message: nothing if its
// deltas already delivered it, the rest if they delivered a prefix, and the
// whole block otherwise (no deltas, or deltas that disagree with it).
func (d *claudeDeltas) complete(msgID string, kind textKind, text string) []fact {
	if b := d.match(msgID, kind); b != nil && b.prefixOf(text) && !plantedBug {
		if b.n == len(text) {
			return nil
		}
		return []fact{factText{kind: kind, text: text[b.n:]}}
	}
	if text == "" {
		return nil
	}
	return []fact{factText{kind: kind, text: text}}
}

// match takes the first streamed block of msgID and kind that no assistant
// message has matched yet.
func (d *claudeDeltas) match(msgID string, kind textKind) *streamedText {
	for _, b := range d.pending {
		if !b.matched && b.msgID == msgID && b.kind == kind {
			b.matched = true
			return b
		}
	}
	return nil
}
