package fakecli

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/jsonstr"
	"github.com/agentconform/agentconform/transcript"
)

// Partial messages (--include-partial-messages) for a transcript that
// recorded none. The real CLI then wraps each raw event of the model's
// stream in a stream_event line, and writes, for one API message (observed
// on 2.1.329 and 2.1.331, in this order):
//
//	system/status "requesting"
//	message_start
//	content_block_start, content_block_delta... , the assistant line for
//	the block, content_block_stop (for each block)
//	message_delta, message_stop
//
// The fake makes these from each assistant line: its content block gives
// the start event and the deltas (text split into a few text_delta,
// thinking into thinking_delta and a signature_delta, a tool's input into
// input_json_delta pieces after an empty one), its message the
// message_start, and the next transcript line tells whether the message
// ends after the block (another assistant line of the same message id
// follows, or not). The shapes are those of the partial-messages fixture.

// streamEvent is the stream_event wrapper, in the real CLI's key order.
type streamEvent struct {
	Type            string  `json:"type"`
	Event           any     `json:"event"`
	SessionID       string  `json:"session_id"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	UUID            string  `json:"uuid"`
	TTFTMs          *int64  `json:"ttft_ms,omitempty"`
	APIMessageID    string  `json:"api_message_id,omitempty"`
}

type messageStartEvent struct {
	Type    string           `json:"type"`
	Message messageStartBody `json:"message"`
}

type messageStartBody struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Model        string          `json:"model"`
	Content      []any           `json:"content"`
	StopReason   *string         `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        json.RawMessage `json:"usage,omitempty"`
}

type blockStartEvent struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock any    `json:"content_block"`
}

type blockDeltaEvent struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	Delta any    `json:"delta"`
}

type blockStopEvent struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

type messageDeltaEvent struct {
	Type  string         `json:"type"`
	Delta messageDelta   `json:"delta"`
	Usage messageDeltaUs `json:"usage"`
}

type messageDelta struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

type messageDeltaUs struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

type typeOnly struct {
	Type string `json:"type"`
}

type textStart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type thinkingStart struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type toolUseStart struct {
	Type  string         `json:"type"`
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

type textDelta struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type thinkingDelta struct {
	Type     string `json:"type"`
	Thinking string `json:"thinking"`
}

type signatureDelta struct {
	Type      string `json:"type"`
	Signature string `json:"signature"`
}

type inputJSONDelta struct {
	Type        string `json:"type"`
	PartialJSON string `json:"partial_json"`
}

type statusRequesting struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	Status    string `json:"status"`
	SessionID string `json:"session_id"`
	UUID      string `json:"uuid"`
}

// streamedAssistant is what partial messages need of an assistant line.
type streamedAssistant struct {
	id     string
	model  string
	parent *string
	usage  json.RawMessage
	nums   map[string]any
	blocks []json.RawMessage
	objs   []map[string]any // the blocks decoded (nil: decode them)
}

// parseStreamed reads an assistant line; ok is false for a line the real
// CLI does not stream (a synthetic API error message, or no content). The
// line is read in place (its long strings and raw members share its
// memory), and the last line read is remembered: partialBefore,
// partialAfter and messageEnds read the same line, which a ladder case
// makes 64 MiB long.
func parseStreamed(text string) (a streamedAssistant, ok bool) {
	streamedMemo.Lock()
	defer streamedMemo.Unlock()
	// A kept line first: it is let go even when the last line read has
	// the same text (a test process replays the same ladder line again).
	for i, k := range streamedMemo.long {
		if len(k.text) == len(text) && unsafe.StringData(k.text) == unsafe.StringData(text) {
			// Now the last line read, and kept as that one only.
			streamedMemo.long = slices.Delete(streamedMemo.long, i, i+1)
			streamedMemo.text, streamedMemo.a, streamedMemo.ok, streamedMemo.set = k.text, k.a, k.ok, true
			return k.a, k.ok
		}
	}
	if m := &streamedMemo; m.set && len(m.text) == len(text) && m.text == text {
		return m.a, m.ok
	}
	a, ok = parseStreamedLine(text)
	streamedMemo.text, streamedMemo.a, streamedMemo.ok, streamedMemo.set = text, a, ok, true
	return a, ok
}

// streamedMemo is the last line parseStreamed read, and the long
// assistant lines classifyClaude read (keepStreamed).
var streamedMemo struct {
	sync.Mutex
	set  bool
	text string
	a    streamedAssistant
	ok   bool
	long []streamedLine
}

// streamedLine is an assistant line read.
type streamedLine struct {
	text string
	a    streamedAssistant
	ok   bool
}

// keepMin is the length from which classifyClaude hands an assistant
// line it parsed to parseStreamed (keepStreamed), and keepMax how many
// such lines not yet read it keeps (a line read is let go as the last
// one read is): a 64 MiB ladder line is then parsed once, not twice.
const (
	keepMin = 64 << 10
	keepMax = 2
)

// keepStreamed remembers the assistant line text, which obj is (parsed as
// parseStreamedLine parses it), for parseStreamed to find by identity.
func keepStreamed(text string, obj map[string]any) {
	a, ok := streamedOf(unsafe.Slice(unsafe.StringData(text), len(text)), obj) // read only
	streamedMemo.Lock()
	defer streamedMemo.Unlock()
	m := &streamedMemo
	if len(m.long) == keepMax {
		m.long = slices.Delete(m.long, 0, 1)
	}
	m.long = append(m.long, streamedLine{text, a, ok})
}

func parseStreamedLine(text string) (a streamedAssistant, ok bool) {
	line := unsafe.Slice(unsafe.StringData(text), len(text)) // read only
	obj, _ := jsonl.Parse(line, jsonl.ParseOptions{ShareMin: 1})
	return streamedOf(line, obj)
}

// streamedOf is parseStreamedLine's reading of line, parsed into obj.
func streamedOf(line []byte, obj map[string]any) (a streamedAssistant, ok bool) {
	if obj == nil || obj["type"] != "assistant" || obj["error"] != nil || obj["is_api_error_message"] == true {
		return a, false
	}
	msg, _ := obj["message"].(map[string]any)
	a.id, _ = msg["id"].(string)
	a.model, _ = msg["model"].(string)
	if msg == nil || a.id == "" || a.model == "<synthetic>" {
		return a, false
	}
	if p, isStr := obj["parent_tool_use_id"].(string); isStr {
		a.parent = &p
	}
	a.nums, _ = msg["usage"].(map[string]any)
	rawMsg := rawMember(line, "message")
	a.usage = rawMember(rawMsg, "usage")
	blocks, ok := rawElements(rawMember(rawMsg, "content"))
	if !ok || len(blocks) == 0 {
		return a, false
	}
	a.blocks = blocks
	// The blocks decoded: those of the parsed line, when they are the
	// same ones (the first "message" member, as rawMember reads) and all
	// objects; otherwise streamBlock decodes each.
	if content, _ := msg["content"].([]any); len(content) == len(blocks) {
		objs := make([]map[string]any, len(blocks))
		for k, c := range content {
			if objs[k], _ = c.(map[string]any); objs[k] == nil {
				return a, true
			}
		}
		a.objs = objs
	}
	return a, true
}

func (c *claudeState) streamEv(e *engine, a *streamedAssistant, ev any, ttft bool) flow {
	w := streamEvent{Type: "stream_event", Event: ev, SessionID: c.sessionID, ParentToolUseID: a.parent,
		UUID: newUUID(c.rng), APIMessageID: a.id}
	if ttft {
		ms := time.Since(c.turnStart).Milliseconds()
		w.TTFTMs = &ms
	}
	if line, ok := spliceDelta(w, c.deltaBuf[:0]); ok {
		c.deltaBuf = nil
		f := c.emitLine(e, unsafe.String(unsafe.SliceData(line), len(line)))
		if e.format == nil || e.format.passes() {
			c.deltaBuf = line // written (copied) and not kept: its memory is free again
		}
		return f
	}
	return c.emit(e, w)
}

// spliceMin is the delta text from which spliceDelta writes a delta.
const spliceMin = 1 << 10

// spliceDelta marshals a stream_event whose event is a text or thinking
// delta of spliceMin bytes or more as encoding/json does, appended to buf,
// but with the text encoded by package jsonstr into a buffer of the
// line's size and spliced into the event marshalled without it: a 64 MiB
// block streams as 4,096 deltas of 16 KiB, and encoding/json looked at
// every byte through a table into a buffer that doubled its way up to
// each one.
func spliceDelta(w streamEvent, buf []byte) ([]byte, bool) {
	d, ok := w.Event.(blockDeltaEvent)
	if !ok {
		return nil, false
	}
	var text, member string
	switch td := d.Delta.(type) {
	case textDelta:
		text, member = td.Text, `"type":"text_delta","text":""`
		td.Text = ""
		d.Delta = td
	case thinkingDelta:
		text, member = td.Thinking, `"type":"thinking_delta","thinking":""`
		td.Thinking = ""
		d.Delta = td
	default:
		return nil, false
	}
	if len(text) < spliceMin {
		return nil, false
	}
	w.Event = d
	b, err := marshalJSON(w)
	// The member is there once: a quote in a string value is escaped.
	if err != nil || strings.Count(unsafe.String(unsafe.SliceData(b), len(b)), member) != 1 {
		return nil, false
	}
	i := strings.Index(unsafe.String(unsafe.SliceData(b), len(b)), member) + len(member) - len(`""`)
	out := slices.Grow(buf, len(b)+len(text)+len(text)/32+2)
	out = jsonstr.Append(append(out, b[:i]...), text)
	return append(out, b[i+len(`""`):]...), true
}

// partialBefore writes the partial messages that come before an
// assistant line (and the echo of the user message, which the real CLI
// writes after the "requesting" status).
func (c *claudeState) partialBefore(e *engine, text string) flow {
	a, ok := parseStreamed(text)
	if !ok {
		return c.flushEcho(e)
	}
	if a.id != c.streamMsg {
		c.streamMsg, c.streamIndex, c.streamTool, c.streamOut = a.id, 0, false, 0
		if f := c.emit(e, statusRequesting{Type: "system", Subtype: "status", Status: "requesting",
			SessionID: c.sessionID, UUID: newUUID(c.rng)}); f != flowNone {
			return f
		}
		if f := c.flushEcho(e); f != flowNone {
			return f
		}
		start := messageStartEvent{Type: "message_start", Message: messageStartBody{ID: a.id, Type: "message",
			Role: "assistant", Model: a.model, Content: []any{}, Usage: a.usage}}
		if f := c.streamEv(e, &a, start, true); f != flowNone {
			return f
		}
	} else if f := c.flushEcho(e); f != flowNone {
		return f
	}
	for k, raw := range a.blocks {
		idx := c.streamIndex + k
		if f := c.streamBlock(e, &a, idx, k, raw); f != flowNone {
			return f
		}
		if k < len(a.blocks)-1 {
			if f := c.streamEv(e, &a, blockStopEvent{Type: "content_block_stop", Index: idx}, false); f != flowNone {
				return f
			}
		}
	}
	return flowNone
}

// streamBlock writes content_block_start and the deltas of one block.
func (c *claudeState) streamBlock(e *engine, a *streamedAssistant, idx, k int, raw json.RawMessage) flow {
	var blk map[string]any
	if a.objs != nil {
		blk = a.objs[k]
	} else if json.Unmarshal(raw, &blk) != nil {
		return flowNone
	}
	var start any = raw
	var deltas []any
	switch blk["type"] {
	case "text":
		s, _ := blk["text"].(string)
		start = textStart{Type: "text"}
		for _, ch := range splitChunks(s, deltaPieces(s)) {
			deltas = append(deltas, textDelta{Type: "text_delta", Text: ch})
		}
		c.streamOut += estimateTokens(s)
	case "thinking":
		s, _ := blk["thinking"].(string)
		sig, _ := blk["signature"].(string)
		start = thinkingStart{Type: "thinking"}
		for _, ch := range splitChunks(s, deltaPieces(s)) {
			deltas = append(deltas, thinkingDelta{Type: "thinking_delta", Thinking: ch})
		}
		if sig != "" {
			deltas = append(deltas, signatureDelta{Type: "signature_delta", Signature: sig})
		}
		c.streamOut += estimateTokens(s)
	case "tool_use":
		id, _ := blk["id"].(string)
		name, _ := blk["name"].(string)
		start = toolUseStart{Type: "tool_use", ID: id, Name: name, Input: map[string]any{}}
		input := string(rawMember(raw, "input"))
		if input == "" {
			input = "{}"
		}
		deltas = append(deltas, inputJSONDelta{Type: "input_json_delta", PartialJSON: ""})
		for _, ch := range splitChunks(input, deltaPieces(input)) {
			deltas = append(deltas, inputJSONDelta{Type: "input_json_delta", PartialJSON: ch})
		}
		c.streamTool = true
		c.streamOut += estimateTokens(input)
	}
	if f := c.streamEv(e, a, blockStartEvent{Type: "content_block_start", Index: idx, ContentBlock: start}, false); f != flowNone {
		return f
	}
	for _, d := range deltas {
		if f := c.streamEv(e, a, blockDeltaEvent{Type: "content_block_delta", Index: idx, Delta: d}, false); f != flowNone {
			return f
		}
	}
	return flowNone
}

// partialAfter writes what follows an assistant line: its block's
// content_block_stop and, when the API message ends with this block,
// message_delta and message_stop.
func (c *claudeState) partialAfter(e *engine, i int, text string) flow {
	a, ok := parseStreamed(text)
	if !ok || a.id != c.streamMsg {
		return flowNone
	}
	idx := c.streamIndex + len(a.blocks) - 1
	c.streamIndex += len(a.blocks)
	if f := c.streamEv(e, &a, blockStopEvent{Type: "content_block_stop", Index: idx}, false); f != flowNone {
		return f
	}
	if !c.messageEnds(e, i, a.id) {
		return flowNone
	}
	stop := "end_turn"
	if c.streamTool {
		stop = "tool_use"
	}
	num := func(k string) int { f, _ := a.nums[k].(float64); return int(f) }
	md := messageDeltaEvent{Type: "message_delta", Delta: messageDelta{StopReason: stop},
		Usage: messageDeltaUs{InputTokens: num("input_tokens"), CacheCreationInputTokens: num("cache_creation_input_tokens"),
			CacheReadInputTokens: num("cache_read_input_tokens"), OutputTokens: max(c.streamOut, 1)}}
	c.streamMsg = ""
	if f := c.streamEv(e, &a, md, false); f != flowNone {
		return f
	}
	return c.streamEv(e, &a, typeOnly{Type: "message_stop"}, false)
}

// messageEnds reports whether the API message id ends with the assistant
// line at step i: the next line the transcript writes (following gotos,
// past lines the fake leaves out) is not another assistant line of the
// same message.
func (c *claudeState) messageEnds(e *engine, i int, id string) bool {
	j := i + 1
	for n := 0; j >= 0 && j < len(e.steps) && n <= len(e.steps); n++ {
		st := &e.steps[j]
		switch st.Op {
		case transcript.OpOut:
			switch c.lines[j].kind {
			case kindPartial, kindSessionState:
				j++
				continue
			case kindAssistant:
				a, ok := parseStreamed(st.Text)
				return !ok || a.id != id
			}
			return true
		case transcript.OpGoto:
			j = e.labels[st.Label]
			continue
		case transcript.OpLabel, transcript.OpOnSignal, transcript.OpDelay, transcript.OpErr:
			j++
			continue
		}
		return true
	}
	return true
}

// splitChunks cuts s into at most n pieces of about equal length, at
// spaces where it can (each piece after the first starts with the space,
// as streamed text does) and never inside a UTF-8 sequence.
func splitChunks(s string, n int) []string {
	if s == "" {
		return nil
	}
	if len(s) < 2*n {
		return []string{s}
	}
	var out []string
	start := 0
	for k := 1; k < n; k++ {
		target := len(s) * k / n
		if target <= start {
			continue
		}
		cut := -1
		if sp := strings.IndexByte(s[target:len(s)*(k+1)/n], ' '); sp >= 0 {
			cut = target + sp
		} else if sp := strings.LastIndexByte(s[start+1:target], ' '); sp >= 0 {
			cut = start + 1 + sp
		} else {
			cut = target
			for cut > start && !utf8.RuneStart(s[cut]) {
				cut--
			}
		}
		if cut <= start || cut >= len(s) {
			continue
		}
		out = append(out, s[start:cut])
		start = cut
	}
	return append(out, s[start:])
}

// estimateTokens is a rough output token count for streamed text.
func estimateTokens(s string) int { return (len(s) + 3) / 4 }

// maxDelta bounds one synthesized delta: the model streams text a few
// tokens at a time, so no delta line of the real CLI is long (a 64 MiB
// block cut in three made three 22 MiB lines no client ever meets). 16 KiB
// keeps every delta line far below the 64 KiB a small reading buffer
// holds, while a 64 MiB block takes 4,096 lines, not 16,384: with 4 KiB
// deltas, judging those lines took half the CPU of a 64 MiB Claude case.
const maxDelta = 16 << 10

// deltaPieces is how many deltas s is streamed in: three, or as many as
// keep each within maxDelta.
func deltaPieces(s string) int {
	return max(3, (len(s)+maxDelta-1)/maxDelta)
}
