package faults

import (
	"io"
	"strings"

	"github.com/agentconform/agentconform/transcript"
)

// Info describes one fault, for help texts and docs.
type Info struct {
	// Name is what a spec calls the fault ("slicer").
	Name string `json:"name"`
	// Kind is "pipe" (what the bytes and lines on the pipes look like),
	// "event" (the decoded events of the stream) or "process" (which
	// processes make up the CLI).
	Kind string `json:"kind"`
	// Params are the fault's parameters, in the order they are documented.
	Params []Param `json:"params,omitempty"`
	// Description says what the fault does and what it catches.
	Description string `json:"description"`
	// AliasOf names the fault this one is another name of, with some
	// parameters preset (the description says which); "" for most.
	AliasOf string `json:"alias_of,omitempty"`
}

// Param describes one parameter of a fault.
type Param struct {
	// Name is the key in the spec ("max").
	Name string `json:"name"`
	// Default is the value used when the spec gives none, or how the fault
	// chooses one ("chosen by the seed").
	Default string `json:"default"`
	// Meaning says what the value does.
	Meaning string `json:"meaning"`
}

// Catalog lists every fault Parse knows: pipe faults, event faults, then
// process faults.
func Catalog() []Info {
	out := make([]Info, 0, len(defs))
	for _, d := range defs {
		info := Info{Name: d.name, Kind: d.kind, Description: d.desc}
		if d.aliasOf != nil {
			info.AliasOf = d.aliasOf.name
		}
		for _, pd := range d.params {
			info.Params = append(info.Params, Param{Name: pd.name, Default: pd.dflt, Meaning: pd.meaning})
		}
		out = append(out, info)
	}
	return out
}

type paramKind int

const (
	kindInt    paramKind = iota // a whole number from min to max
	kindSignal                  // a signal name, normalised to "SIGKILL"
	kindWord                    // a non-empty string, trimmed
	kindText                    // any string, untrimmed
)

// paramDef is one parameter of a fault.
type paramDef struct {
	name  string
	kind  paramKind
	min   int64
	max   int64
	dflt  string // for Info; the default value itself when fixed
	fixed bool   // dflt is a value (else the fault chooses one)
	// multiple, when set, is what an integer value must be a multiple of.
	multiple int64
	// words, when set, are the only values a word parameter takes.
	words   []string
	meaning string
}

// faultDef is one fault: its documentation and what it does. A fault has
// steps (a step rewrite), wrap (a stdout writer), or both; start_delay
// has neither (the fake asks Plan.StartDelay).
type faultDef struct {
	name   string
	kind   string
	desc   string
	params []paramDef
	steps  func(c *stepCtx, steps []transcript.Step) []transcript.Step
	wrap   func(p *Plan, f *fault, w io.Writer, end *ender) io.Writer
	// aliasOf, when set, is the fault this name is another name of, with
	// the parameters preset fixed (rpc.go: the acp_* names of the
	// JSON-RPC faults).
	aliasOf *faultDef
	preset  map[string]string
}

func (d *faultDef) param(name string) *paramDef {
	for i := range d.params {
		if d.params[i].name == name {
			return &d.params[i]
		}
	}
	return nil
}

// paramList renders the parameter names for error messages.
func (d *faultDef) paramList() string {
	if len(d.params) == 0 {
		return "no parameters"
	}
	var names []string
	for _, pd := range d.params {
		names = append(names, pd.name)
	}
	return strings.Join(names, ", ")
}

func lookup(name string) *faultDef {
	for _, d := range defs {
		if d.name == name {
			return d
		}
	}
	return nil
}

func names() []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.name
	}
	return out
}

// Limits on sizes, so that a spec cannot ask for more memory than a test
// machine has.
const (
	maxLineSize  = 1 << 30 // ladder, slicer
	maxFloodSize = 1 << 28 // stderr_flood
	maxCount     = 1 << 31 // line numbers and counts
	maxMS        = 24 * 3600 * 1000
)

func intParam(name string, min, max int64, dflt string, fixed bool, meaning string) paramDef {
	return paramDef{name: name, kind: kindInt, min: min, max: max, dflt: dflt, fixed: fixed, meaning: meaning}
}

var (
	nthParam  = intParam("nth", 1, maxCount, "chosen by the seed", false, "which eligible event (1-based)")
	typeParam = paramDef{name: "type", kind: kindWord, dflt: "any", meaning: `only events whose "type" is this`}
)

// defs is the catalogue, in the order Catalog lists it.
var defs = []*faultDef{
	{name: "slicer", kind: "pipe", wrap: wrapSlicer,
		desc: "Splits every stdout line across several writes at offsets chosen by the seed, so a reader sees lines in pieces (max=1: one byte per write; utf8=1: inside every multibyte UTF-8 character instead, after its first byte). Catches adapters that treat one read as one line, and (utf8=1) adapters that decode each read by itself, which turns a character split across reads into U+FFFD.",
		params: []paramDef{
			intParam("max", 1, maxLineSize, "random, 1 to the line's length", false, "largest write in bytes"),
			intParam("delay_us", 0, 10_000_000, "0", true, "pause between the writes of one line, in microseconds"),
			intParam("utf8", 0, 1, "0", true, "1: cut each line after the first byte of every multibyte UTF-8 character, and nowhere else (max is then not used)"),
		}},
	{name: "latency", kind: "pipe", wrap: wrapLatency,
		desc: "Sleeps before every stdout line (line=N: before the Nth only; the process reads no stdin meanwhile, so what the client sends then is read after that line, as when an agent's request crosses the client's message). Catches adapters with too-short read timeouts, and clients that answer a request the agent sent after their cancel as if nothing had been cancelled.",
		params: []paramDef{
			intParam("ms", 0, maxMS, "100", true, "delay per line in milliseconds"),
			intParam("jitter", 0, maxMS, "0", true, "random extra delay of up to ± this many milliseconds (from the seed)"),
			intParam("line", 1, maxCount, "every line", false, "only before this stdout write (1-based: the Nth line, unless another fault cuts lines into pieces)"),
		}},
	{name: "bandwidth", kind: "pipe", wrap: wrapBandwidth,
		desc: "Throttles stdout to a number of bytes per second, writing big lines in pieces. Catches adapters that time out on big, slow lines.",
		params: []paramDef{
			intParam("bps", 1, 1<<40, "16384", true, "bytes (not bits) per second"),
		}},
	{name: "start_delay", kind: "pipe",
		desc: "Keeps the process silent for a while when it starts, as a CLI that is slow to load (MCP servers, plugins, a cold disk): it reads nothing, writes nothing and answers nothing, not even Claude's initialize, and a signal kills it as it kills a process with no handler yet. Catches adapters whose start-up or handshake timeout is too short, and those that give up on a slow CLI and leave it running.",
		params: []paramDef{
			intParam("ms", 0, maxMS, "2000", true, "how long the process stays silent, in milliseconds"),
		}},
	{name: "stall", kind: "pipe", steps: stepsStall,
		desc: "After N stdout lines, stops writing and stays alive (a 24-hour delay step, so signals and stdin are still handled). Catches adapters without an inactivity timeout.",
		params: []paramDef{
			intParam("after", 0, maxCount, "chosen by the seed, before the last line", false, "stdout lines written before the stall"),
		}},
	{name: "linger", kind: "pipe", steps: stepsLinger,
		desc: "Stalls after N stdout lines; on SIGINT or SIGTERM goes on writing the lines still to come (its terminal event aside), then ends as the CLI ends on that signal. Catches adapters that close their stream at the interrupt and crash on a line that comes after it.",
		params: []paramDef{
			intParam("after", 0, maxCount, "chosen by the seed, before the last line", false, "stdout lines written before the stall"),
			intParam("lines", 0, maxCount, "every line still to come", false, "how many lines to write after the signal"),
			intParam("ms", 0, maxMS, "20", true, "pause before each of them in milliseconds"),
		}},
	{name: "limit_data", kind: "pipe", wrap: wrapLimitData,
		desc: "Writes only the first N bytes of stdout (cutting a line), then closes stdout and exits 0, as toxiproxy's limit_data. Catches adapters that accept a truncated stream as complete.",
		params: []paramDef{
			intParam("bytes", 0, 1<<62, "4096", true, "stdout bytes written before the cut"),
		}},
	{name: "pipe_cut", kind: "pipe", wrap: wrapPipeCut,
		desc: "Cuts the first stdout line longer than N bytes after its first N bytes (a multiple of 64 KiB) and loses the rest of stdout, and goes on: stderr, the timing and the exit status stay the transcript's, so a successful run exits 0 with no final event. A quirk of the real Gemini CLI on a pipe: it calls process.exit right after its last write, without draining stdout, and what is still queued behind the full 64 KiB pipe buffer is lost (captured on 0.61.0: 196608 bytes into a 400 KB tool_result line, no result, exit 0). Catches adapters that take exit 0 for a complete stream, and adapters that wait for a result that never comes.",
		params: []paramDef{
			{name: "at", kind: kindInt, min: 64 << 10, max: 1 << 62, multiple: 64 << 10, dflt: "65536", fixed: true,
				meaning: "bytes of the cut line that get through (a multiple of 65536, the Linux pipe buffer)"},
		}},
	{name: "exit_mid_line", kind: "pipe", steps: stepsExitMidLine,
		desc: "Writes the first half of one stdout line without its newline, then exits. Catches adapters that drop or mis-parse a partial last line.",
		params: []paramDef{
			intParam("line", 1, maxCount, "the last stdout line", false, "which stdout line (1-based) is cut"),
			intParam("code", 0, 255, "1", true, "exit status"),
		}},
	{name: "exit_code", kind: "pipe", steps: stepsExitCode,
		desc: "Keeps the output but replaces the exit status of every exit step. Catches adapters that ignore the exit status (or trust it over the stream).",
		params: []paramDef{
			intParam("code", 0, 255, "1", true, "exit status"),
		}},
	{name: "die", kind: "pipe", steps: stepsDie,
		desc: "After N stdout lines, the process kills itself with a signal (no final event). Catches adapters that hang or report success when the CLI dies.",
		params: []paramDef{
			{name: "signal", kind: kindSignal, dflt: "SIGKILL", fixed: true, meaning: "the signal: " + strings.Join(signals, ", ")},
			intParam("after", 0, maxCount, "chosen by the seed, before the last line", false, "stdout lines written before dying"),
		}},
	{name: "ignore_signal", kind: "pipe", steps: stepsIgnoreSignal,
		desc: "The CLI ignores a signal from its first step on (as a transcript's on_signal can ask). Catches adapters that stop a CLI with SIGTERM alone and never escalate to SIGKILL.",
		params: []paramDef{
			{name: "signal", kind: kindSignal, dflt: "SIGTERM", fixed: true, meaning: "the signal to ignore (not SIGKILL): " + strings.Join(signals, ", ")},
		}},
	{name: "stderr_flood", kind: "pipe", steps: stepsStderrFlood,
		desc: "Writes this many bytes of stderr lines before the first stdout line. Catches adapters that never drain stderr: the fake blocks on the full pipe and the adapter waits forever.",
		params: []paramDef{
			intParam("bytes", 0, maxFloodSize, "4194304", true, "stderr bytes, newlines included"),
		}},
	{name: "banner", kind: "pipe", steps: stepsBanner,
		desc: "Puts a non-JSON line on stdout, as a CLI's warning banner does. Catches adapters that die on the first line that is not JSON.",
		params: []paramDef{
			{name: "text", kind: kindText, dflt: defaultBanner, fixed: true, meaning: `the line (escape "," and ";" with "\")`},
			intParam("at", 1, maxCount, "1", true, "the banner becomes this stdout line (1-based)"),
		}},
	{name: "ladder", kind: "pipe", steps: stepsLadder,
		desc: "Grows one text-bearing stdout event to exactly N bytes (newline excluded), padding its text with readable ASCII; the line stays valid JSON of its CLI's schema. Sizes around buffer limits: 65536, 262144, 1048575, 1048576, 1048577, 8388608, 67108864.",
		params: []paramDef{
			intParam("size", 1, maxLineSize, "1048577", true, "the line's length in bytes"),
			intParam("nth", 1, maxCount, "chosen by the seed", false, "which text-bearing event (1-based)"),
		}},
	{name: "volume", kind: "pipe", steps: stepsVolume,
		desc: "Writes, before the first assistant text line (Claude's assistant text block, Codex's agent_message, Gemini's assistant message), copies of it with texts and ids of their own, each exactly line bytes, until they make bytes in all: one turn of many small lines, every line short and valid, the turn long. Catches adapters with a cap on what one turn (or one process) may write: a child process's maxBuffer, a byte limit on the collected output.",
		params: []paramDef{
			intParam("bytes", 0, maxLineSize, "9437184", true, "bytes the copies make in all, newlines included (0: none)"),
			intParam("line", 64, maxLineSize, "4096", true, "each copy's length in bytes (newline excluded)"),
		}},
	{name: "turns", kind: "event", steps: stepsTurns,
		desc: "Repeats the last turn of a Claude process (its last user message and what the CLI wrote for it) until the process takes n user messages, each copy with message ids of its own: a long session in one process. Codex and Gemini run a process per turn and the fakes replay a session's last process for every later resume, so a long session needs no fault there. Catches adapters that keep per-turn state they never release, or whose handlers pile up turn after turn.",
		params: []paramDef{
			intParam("n", 1, 10000, "16", true, "user turns the process takes in all"),
		}},
	{name: "invalid_utf8", kind: "pipe", steps: stepsInvalidUTF8,
		desc: `Inserts invalid UTF-8 bytes (\xff\xfe) inside a string value of one stdout line. Catches adapters that crash on, or silently mangle, bad encodings.`,
		params: []paramDef{
			intParam("nth", 1, maxCount, "chosen by the seed", false, "which JSON stdout line with a string value (1-based)"),
		}},
	{name: "crlf", kind: "pipe", steps: stepsCRLF,
		desc: `Ends every stdout line with "\r\n". Catches adapters that leave a "\r" on the line or reject it.`},
	{name: "no_final_newline", kind: "pipe", steps: stepsNoFinalNewline,
		desc: "Writes the last stdout line without its newline. Catches adapters that drop an unterminated last line."},

	{name: "drop", kind: "event", steps: stepsDrop,
		desc:   "Removes one stdout event. Catches adapters that assume every event comes.",
		params: []paramDef{typeParam, nthParam}},
	{name: "duplicate", kind: "event", steps: stepsDuplicate,
		desc:   "Writes one stdout event twice. Catches adapters that double-count.",
		params: []paramDef{typeParam, nthParam}},
	{name: "reorder", kind: "event", steps: stepsReorder,
		desc:   "Swaps one stdout event with the next stdout line. Catches adapters that rely on an order the CLI does not promise.",
		params: []paramDef{typeParam, nthParam}},
	{name: "unknown_type", kind: "event", steps: stepsUnknownType,
		desc: `Inserts an event of type "agentconform_unknown_event" (with the session id field of the CLI). The CLIs add event types over time; adapters must skip them.`,
		params: []paramDef{
			intParam("after", 0, maxCount, "chosen by the seed, between two lines", false, "stdout lines before the inserted event"),
		}},
	{name: "unknown_block", kind: "event", steps: stepsUnknownBlock,
		desc:   `Puts content of a kind no adapter knows inside a message: a block of type "agentconform_unknown_block" first in a Claude assistant message's content, an item of type "agentconform_unknown_item" in a Codex turn (Gemini has no such content: nothing changes). The CLIs add block and item types over time; adapters must skip them.`,
		params: []paramDef{nthParam}},
	{name: "unknown_field", kind: "event", steps: stepsUnknownField,
		desc:   `Adds "agentconform_unknown_field" to one event. The CLIs add fields over time; adapters must ignore them.`,
		params: []paramDef{typeParam, nthParam}},
	{name: "corrupt_type", kind: "event", steps: stepsCorruptType,
		desc: `Turns one string field of an event into a number, or a number into a string (session_id: "..." becomes 12345). Catches adapters that crash instead of reporting a schema error.`,
		params: []paramDef{typeParam, nthParam,
			{name: "field", kind: kindWord, dflt: "chosen by the seed", meaning: "the field's name (at any depth; not inside arrays of values)"}}},
	{name: "break_pair", kind: "event", steps: stepsBreakPair,
		desc:   "Changes one tool result's reference so it names no call (Claude tool_result.tool_use_id, Gemini tool_result.tool_id, Codex item.completed item.id of a started item). Catches adapters that trust pairing.",
		params: []paramDef{intParam("nth", 1, maxCount, "chosen by the seed", false, "which tool result (1-based)")}},
	{name: "repeat_id", kind: "event", steps: stepsRepeatID,
		desc:   "Makes a later tool call reuse the first call's id (its result follows). Catches adapters that key state by call id without checking for reuse.",
		params: []paramDef{intParam("nth", 2, maxCount, "chosen by the seed", false, "which tool call (2 or more, by order of first appearance) takes the first call's id")}},
}

// defaultBanner is a real-looking terminal warning.
const defaultBanner = "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience."
