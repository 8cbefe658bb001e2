package conformance

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// srcOptIn is the section that says an opt-in stream an adapter asks for
// reaches its caller.
const srcOptIn = "docs/protocols/unified.md#opt-in-streams; docs/protocols/claude.md#partial-messages; docs/protocols/claude.md#replay-user-messages"

// CheckOptIn is lossless/opt-in-streams: what an adapter asked the CLI to
// write besides its messages reaches the caller. An adapter that starts
// Claude with --include-partial-messages and hands on only the whole
// messages passes every other lossless check (the text is all there), yet
// its caller waits for each block in full, which is what it asked the CLI
// not to do.
var CheckOptIn = register(&Check{Family: FamilyLossless, Rule: rule("lossless/opt-in-streams", "MUST",
	"What the adapter asked the CLI for reaches its caller: where it started Claude with --include-partial-messages, text comes through as it streamed (some run of a block's deltas shorter than the whole block is found in the events, as a value of its own); with --replay-user-messages, the user messages the CLI echoes back. Judged on what the adapter's own argv asked for, native adapters included.", srcOptIn),
	Applies: func(c *Case, h *Hello) (bool, string) {
		if c.Agent != "claude" {
			return false, "applies to claude only (the other CLIs have no opt-in streams)"
		}
		return losslessApplies(c, h)
	}, Judge: judgeOptIn})

// maxDeltaRuns bounds the deltas of a block whose runs are tried (a run
// is any stretch of consecutive deltas; a block of more deltas is judged
// on its first maxDeltaRuns).
const maxDeltaRuns = 64

func judgeOptIn(o *Observation) Outcome {
	partial, replay := false, false
	for _, w := range o.Wire {
		if formatOf("claude", w.Argv) != formatStream {
			continue
		}
		partial = partial || slices.Contains(w.Argv, "--include-partial-messages")
		replay = replay || slices.Contains(w.Argv, "--replay-user-messages")
	}
	if !partial && !replay {
		return Outcome{Skip: true, Actual: "the adapter asked the CLI for no opt-in stream (--include-partial-messages, --replay-user-messages)"}
	}
	leaves := map[string]bool{}
	for _, e := range o.Events {
		eachString(e.Obj, func(s string) {
			if n := normText(s); n != "" {
				leaves[n] = true
			}
		})
	}
	var problems []string
	judged := 0
	if partial {
		for _, b := range streamedBlocks(o) {
			runs, whole := deltaRuns(b.deltas)
			if len(runs) == 0 {
				continue // one delta, or pieces of white space: nothing to tell apart from the whole
			}
			judged++
			found := false
			for _, r := range runs {
				if leaves[r] {
					found = true
					break
				}
			}
			if !found {
				problems = append(problems, fmt.Sprintf("text block %s streamed in %d deltas (--include-partial-messages): no piece of it shorter than the whole reached the caller", strconv.Quote(clip(whole, 120)), len(b.deltas)))
			}
		}
	}
	if replay {
		idx := o.infoIndex()
		for _, lines := range o.wireLines() {
			for _, l := range lines {
				if l.Obj == nil || l.Obj["type"] != "user" || l.Obj["isReplay"] != true {
					continue
				}
				judged++
				text := userText(l.Obj)
				if text != "" && !idx.hasAtom(text) {
					problems = append(problems, fmt.Sprintf("the CLI's echo of the user message %s (--replay-user-messages) did not reach the caller", strconv.Quote(clip(text, 120))))
				}
			}
		}
	}
	if len(problems) > 0 {
		return Outcome{Expected: "the opt-in streams the adapter asked the CLI for, in its events", Actual: strings.Join(problems, "\n")}
	}
	if judged == 0 {
		return Outcome{Skip: true, Actual: "the CLI streamed no text block in more than one delta and echoed no user message"}
	}
	return pass()
}

// streamedBlock is one text block as Claude streamed it under
// --include-partial-messages: its text deltas in order.
type streamedBlock struct {
	deltas []string
}

// streamedBlocks returns the text blocks of the Claude stream_event lines,
// per process, message and content index.
func streamedBlocks(o *Observation) []*streamedBlock {
	var out []*streamedBlock
	for _, lines := range o.wireLines() {
		msg := ""
		open := map[string]*streamedBlock{}
		for _, l := range lines {
			if l.Obj == nil || l.Obj["type"] != "stream_event" {
				continue
			}
			ev, _ := l.Obj["event"].(map[string]any)
			switch str(ev, "type") {
			case "message_start":
				msg = str(ev, "message", "id")
			case "content_block_delta":
				if str(ev, "delta", "type") != "text_delta" {
					continue
				}
				key := msg + "#" + fmt.Sprint(ev["index"])
				b := open[key]
				if b == nil {
					b = &streamedBlock{}
					open[key] = b
					out = append(out, b)
				}
				b.deltas = append(b.deltas, str(ev, "delta", "text"))
			}
		}
	}
	return out
}

// deltaRuns returns the normalised texts of every run of consecutive
// deltas that is not the whole block (and not empty once white space is
// folded), and the whole block normalised.
func deltaRuns(deltas []string) ([]string, string) {
	whole := normText(strings.Join(deltas, ""))
	deltas = deltas[:min(len(deltas), maxDeltaRuns)]
	seen := map[string]bool{}
	var runs []string
	for i := range deltas {
		var acc strings.Builder
		for j := i; j < len(deltas); j++ {
			acc.WriteString(deltas[j])
			n := normText(acc.String())
			if n == "" || n == whole || seen[n] {
				continue
			}
			seen[n] = true
			runs = append(runs, n)
		}
	}
	return runs, whole
}
