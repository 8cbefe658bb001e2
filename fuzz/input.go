package fuzz

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/fixtures"
	asfixtures "github.com/agentconform/agentconform/fixtures/appserver"
	"github.com/agentconform/agentconform/transcript"
)

// An Input is what the structure-aware mutator makes of the fuzzer's
// bytes: a fixture, a seed for the faults' own random choices, and a list
// of mutations from the fakes' fault vocabulary (package fakecli/faults),
// plus the caller's interrupt. Every byte string decodes to a valid Input,
// so Go's engine explores transcripts instead of rejected byte strings.
//
// The encoding (Decode, Encode) is: one byte choosing the fixture, eight
// bytes of seed (little-endian), then one record per mutation: a byte
// choosing the operation, then that operation's parameter bytes. Missing
// bytes read as zero; a zero parameter byte leaves the choice to the seed
// (or to the fault's default), as an omitted parameter does in a spec.
type Input struct {
	// Fixture is the embedded fixture mutated ("codex/single-tool").
	Fixture string
	// Seed drives every choice the faults make themselves.
	Seed int64
	// Mutations apply in order, each to the result of the one before.
	Mutations []Mutation
}

// A Mutation is one fault of the fakes' catalogue with its parameters, or
// the caller's interrupt.
type Mutation struct {
	// Op is the fault's name ("drop"), or "interrupt".
	Op string
	// Params are the spec parameters, in the order the vocabulary lists
	// them; a parameter left to the seed is absent.
	Params []Param
}

// A Param is one key=value of a fault spec.
type Param struct{ Key, Value string }

// String renders the mutation as a fault spec item ("drop:type=result,nth=2").
func (m Mutation) String() string {
	if len(m.Params) == 0 {
		return m.Op
	}
	parts := make([]string, len(m.Params))
	for i, p := range m.Params {
		parts[i] = p.Key + "=" + escapeSpec(p.Value)
	}
	return m.Op + ":" + strings.Join(parts, ",")
}

// escapeSpec escapes the separators of a fault spec in a value.
func escapeSpec(s string) string {
	if !strings.ContainsAny(s, `;,\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == ';' || s[i] == ',' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// OpInterrupt is the mutation that is not a fault: the CLI stalls after a
// number of stdout lines (stall:after=N) and the caller interrupts the
// turn there, instead of waiting for its deadline.
const OpInterrupt = "interrupt"

// isTiming reports whether op only sleeps.
func isTiming(op string) bool {
	s, ok := opSpecOf(op)
	return ok && s.timing
}

// opSpecOf finds an operation of either vocabulary by name.
func opSpecOf(op string) (opSpec, bool) {
	for _, s := range vocabulary {
		if s.op == op {
			return s, true
		}
	}
	for _, s := range editVocabulary {
		if s.op == op {
			return s, true
		}
	}
	return opSpec{}, false
}

// maxMutations bounds the mutations one input holds, so that every
// execution stays small.
const maxMutations = 6

// Spec renders the mutations as the fault spec the fakes read
// (AGENTCONFORM_FAULTS); an interrupt becomes its stall.
func (in Input) Spec() string { return in.spec(true) }

// spec renders the fault spec, with or without the faults that only sleep
// (latency, bandwidth), which in-process targets leave out.
func (in Input) spec(timing bool) string {
	var items []string
	for _, m := range in.Mutations {
		if (!timing && isTiming(m.Op)) || isEdit(m.Op) {
			continue
		}
		if m.Op == OpInterrupt {
			items = append(items, Mutation{Op: "stall", Params: m.Params}.String())
			continue
		}
		items = append(items, m.String())
	}
	return strings.Join(items, ";")
}

// edits renders the input's JSON-RPC aware edits as a spec ("" for none).
func (in Input) edits() string {
	var edits []string
	for _, m := range in.Mutations {
		if isEdit(m.Op) {
			edits = append(edits, m.String())
		}
	}
	return strings.Join(edits, ";")
}

// Interrupts reports whether the input asks the caller to interrupt.
func (in Input) Interrupts() bool {
	for _, m := range in.Mutations {
		if m.Op == OpInterrupt {
			return true
		}
	}
	return false
}

// String renders the input for messages: fixture, seed, the JSON-RPC
// edits made to the transcript and the fault spec.
func (in Input) String() string {
	s := in.Fixture + " seed=" + strconv.FormatInt(in.Seed, 10)
	if edits := in.edits(); edits != "" {
		s += " edits=" + strconv.Quote(edits)
	}
	if spec := in.Spec(); spec != "" {
		s += " faults=" + strconv.Quote(spec)
	}
	if in.Interrupts() {
		s += " (interrupted at the stall)"
	}
	return s
}

// Agent is the agent of the input's fixture: its CLI ("codex"), or
// AgentAppServer for a fixture of `codex app-server`.
func (in Input) Agent() string {
	if asfixtures.IsName(in.Fixture) {
		return AgentAppServer
	}
	a, _, _ := strings.Cut(in.Fixture, "/")
	return a
}

// AgentAppServer is the agent of the adapters that drive `codex
// app-server` (JSON-RPC) instead of `codex exec`: with it among the
// agents, inputs choose the app-server fixtures (package
// fixtures/appserver) and the app-server surface's mutations.
const AgentAppServer = conformance.AgentAppServer

// paramKind says how a parameter byte becomes a value.
type paramKind int

const (
	pNth     paramKind = iota // 0: the seed's choice; else 1..16
	pNth2                     // repeat_id: 0: the seed's; else 2..9
	pAfter                    // 0: the seed's choice; else 0..31
	pLine                     // exit_mid_line: 0: the last line; else 1..32
	pCode                     // an exit status, 0..255
	pSignal                   // one of signalNames
	pType                     // 0: any; else an event type of the fixture's CLI
	pField                    // 0: the seed's choice; else one of corruptFields
	pSize                     // one of ladderSizes
	pSlice                    // 0: random; else 1..64
	pBytes16                  // two bytes, little-endian: 0..65535
	pFlood                    // stderr bytes: the byte times 256
	pBanner                   // one of bannerTexts
	pMS                       // latency: 0..7 ms
	pBPS                      // bandwidth: (1+byte) times 64 KiB per second
	pBlocks                   // pipe_cut: (1 + byte%4) times 64 KiB
)

// paramSpec is one parameter of a vocabulary entry.
type paramSpec struct {
	key  string
	kind paramKind
}

// opSpec is one entry of the vocabulary.
type opSpec struct {
	op     string
	params []paramSpec
	// timing marks faults that only sleep (latency, bandwidth): they change
	// nothing the in-process targets can see and are left out there.
	timing bool
}

// width is the number of bytes a parameter takes.
func (p paramSpec) width() int {
	if p.kind == pBytes16 {
		return 2
	}
	return 1
}

// vocabulary is the mutator's alphabet: every fault of the fakes'
// catalogue (a test checks that none is missing) and the interrupt. Its
// order is part of the encoding of committed corpora: append, never
// reorder.
var vocabulary = []opSpec{
	{op: "slicer", params: []paramSpec{{"max", pSlice}}},
	{op: "crlf"},
	{op: "no_final_newline"},
	{op: "banner", params: []paramSpec{{"at", pNth}, {"text", pBanner}}},
	{op: "invalid_utf8", params: []paramSpec{{"nth", pNth}}},
	{op: "ladder", params: []paramSpec{{"size", pSize}, {"nth", pNth}}},
	{op: "unknown_type", params: []paramSpec{{"after", pAfter}}},
	{op: "unknown_field", params: []paramSpec{{"type", pType}, {"nth", pNth}}},
	{op: "drop", params: []paramSpec{{"type", pType}, {"nth", pNth}}},
	{op: "duplicate", params: []paramSpec{{"type", pType}, {"nth", pNth}}},
	{op: "reorder", params: []paramSpec{{"type", pType}, {"nth", pNth}}},
	{op: "corrupt_type", params: []paramSpec{{"type", pType}, {"nth", pNth}, {"field", pField}}},
	{op: "break_pair", params: []paramSpec{{"nth", pNth}}},
	{op: "repeat_id", params: []paramSpec{{"nth", pNth2}}},
	{op: "exit_mid_line", params: []paramSpec{{"line", pLine}, {"code", pCode}}},
	{op: "exit_code", params: []paramSpec{{"code", pCode}}},
	{op: "die", params: []paramSpec{{"signal", pSignal}, {"after", pAfter}}},
	{op: "limit_data", params: []paramSpec{{"bytes", pBytes16}}},
	{op: "stall", params: []paramSpec{{"after", pAfter}}},
	{op: "stderr_flood", params: []paramSpec{{"bytes", pFlood}}},
	{op: "ignore_signal", params: []paramSpec{{"signal", pSignal}}},
	{op: OpInterrupt, params: []paramSpec{{"after", pAfter}}},
	{op: "latency", params: []paramSpec{{"ms", pMS}}, timing: true},
	{op: "bandwidth", params: []paramSpec{{"bps", pBPS}}, timing: true},
	{op: "pipe_cut", params: []paramSpec{{"at", pBlocks}}},
	{op: "linger", params: []paramSpec{{"after", pAfter}}},
	{op: "unknown_block", params: []paramSpec{{"nth", pNth}}},
	{op: "start_delay", params: []paramSpec{{"ms", pMS}}, timing: true},
	{op: "answer_twice", params: []paramSpec{{"nth", pNth}}},
	{op: "answer_never", params: []paramSpec{{"nth", pNth}}},
	{op: "unknown_method", params: []paramSpec{{"after", pAfter}}},
	{op: "acp_answer_twice", params: []paramSpec{{"nth", pNth}}},
	{op: "acp_no_response", params: []paramSpec{{"nth", pNth}}},
	{op: "acp_unknown_update", params: []paramSpec{{"nth", pNth}}},
	{op: "acp_unknown_field", params: []paramSpec{{"nth", pNth}}},
	{op: "acp_unknown_method", params: []paramSpec{{"after", pAfter}}},
	{op: "acp_unknown_request", params: []paramSpec{{"after", pAfter}}},
	{op: "volume", params: []paramSpec{{"bytes", pBytes16}}},
	{op: "turns", params: []paramSpec{{"n", pNth}}},
}

// ladderSizes are the line sizes ladder mutations choose from: both sides
// of the buffer limits adapters are known to have (bufio.Scanner's 64 KiB,
// 100 KiB, 256 KiB, the Python SDK's 1 MiB), kept at or below 1 MiB + 1 so
// that every execution stays fast (conformance's buffer cases go on to 8
// and 64 MiB). A parameter byte picks one of the big sizes only from
// bigLadderFrom on, so that most ladder mutations stay cheap (the seeds
// hold every size).
var (
	smallLadderSizes = []int{1000, 4096, 16 << 10, 32 << 10}
	bigLadderSizes   = []int{64<<10 - 1, 64 << 10, 64<<10 + 1, 100 << 10, 100<<10 + 1, 256 << 10, 1<<20 - 1, 1 << 20, 1<<20 + 1}
	ladderSizes      = append(append([]int(nil), bigLadderSizes...), smallLadderSizes...)
)

// bigLadderFrom is the first parameter byte that picks a big ladder size.
const bigLadderFrom = 256 - 9

// signalNames are the signals die and ignore_signal choose from.
var signalNames = []string{"SIGKILL", "SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGPIPE", "SIGUSR1", "SIGUSR2"}

// corruptFields are the fields corrupt_type chooses from (at any depth).
var corruptFields = []string{"session_id", "id", "tool_use_id", "tool_id", "thread_id", "text", "content", "is_error",
	"exit_code", "status", "subtype", "name", "input_tokens", "output_tokens", "role", "output", "aggregated_output", "message"}

// bannerTexts are the non-JSON lines banner chooses from.
var bannerTexts = []string{"", "Warning: terminal does not support 256 colors", "{", "[1,2,3]", "\x1b[31mred\x1b[0m", "data: {\"type\":\"x\"}", "null", `{"type":"result"`, "\xff\xfe not UTF-8"}

// eventTypes are the event types, per CLI, that typed mutations choose from.
var eventTypes = map[string][]string{
	"claude": {"assistant", "user", "result", "system", "stream_event", "control_request", "control_response"},
	"codex":  {"thread.started", "turn.started", "item.started", "item.updated", "item.completed", "turn.completed", "turn.failed", "error"},
	"gemini": {"init", "message", "tool_use", "tool_result", "result", "error"},
}

// fixtureList lists the embedded fixtures, the mutator's starting points.
// Like everything derived from the fixtures, it is loaded on first use:
// the agentconform binary imports this package, and its other commands
// must not pay for it.
var fixtureList = sync.OnceValue(func() []string {
	all, err := fixtures.All()
	if err != nil {
		panic(err)
	}
	names := make([]string, len(all))
	for i, f := range all {
		names[i] = f.Name
	}
	return names
})

// Fixtures lists the fixtures inputs start from, in encoding order.
func Fixtures() []string { return append([]string(nil), fixtureList()...) }

// loadedFixtures holds the loaded fixtures, the JSONL streams' and the
// app-server's (they are read-only).
var loadedFixtures = sync.OnceValue(func() map[string]*transcript.Transcript {
	m := map[string]*transcript.Transcript{}
	for _, name := range fixtureList() {
		t, err := fixtures.Load(name)
		if err != nil {
			panic(err)
		}
		m[name] = t
	}
	for _, name := range appServerFixtureList() {
		t, err := asfixtures.Load(name)
		if err != nil {
			panic(err)
		}
		m[name] = t
	}
	return m
})

// appServerFixtureList lists the app-server fixtures inputs start from:
// those a client runs in one harness session (one process; resume needs a
// second, which one session does not start), as the conformance cases do.
var appServerFixtureList = sync.OnceValue(func() []string {
	names, err := asfixtures.Names()
	if err != nil {
		panic(err)
	}
	var out []string
	for _, name := range names {
		t, err := asfixtures.Load(name)
		if err != nil {
			panic(err)
		}
		if len(t.Processes()) == 1 {
			out = append(out, name)
		}
	}
	return out
})

// AppServerFixtures lists the app-server fixtures inputs start from, in
// encoding order.
func AppServerFixtures() []string { return append([]string(nil), appServerFixtureList()...) }

// heavyFixture is the size of stdout above which a fixture counts as
// heavy: the long-output fixtures, whose 300 KiB take tens of times longer
// to translate than the others. The fixture byte picks a heavy fixture
// seven times less often than another, so that they do not dominate the
// executions.
const (
	heavyFixture = 64 << 10
	lightWeight  = 7
)

// fixtureTable lists the fixtures of the given agents (nil: all) in the
// order the fixture byte picks them: each light one lightWeight times,
// each heavy one once.
func fixtureTable(agents []string) []string {
	var out []string
	for _, a := range agents {
		if a != AgentAppServer {
			continue
		}
		for _, n := range appServerFixtureList() {
			for i := 0; i < lightWeight; i++ {
				out = append(out, n)
			}
		}
	}
	for _, n := range fixtureList() {
		if len(agents) > 0 {
			ok := false
			for _, a := range agents {
				ok = ok || strings.HasPrefix(n, a+"/")
			}
			if !ok {
				continue
			}
		}
		w := lightWeight
		if fixtureBytes()[n] > heavyFixture {
			w = 1
		}
		for i := 0; i < w; i++ {
			out = append(out, n)
		}
	}
	if len(out) == 0 && len(agents) > 0 {
		return fixtureTable(nil)
	}
	if len(out) > 256 {
		// One byte must reach every fixture: no weights.
		var flat []string
		for i, n := range out {
			if i == 0 || out[i-1] != n {
				flat = append(flat, n)
			}
		}
		return flat
	}
	return out
}

// fixtureBytes is the size of each fixture's stdout.
var fixtureBytes = sync.OnceValue(func() map[string]int {
	m := map[string]int{}
	for name, t := range loadedFixtures() {
		for _, s := range t.Steps {
			if s.Op == transcript.OpOut {
				m[name] += len(s.Text) + 1
			}
		}
	}
	return m
})

// allFixtures is the fixture table of every agent (the JSONL streams'
// fixtures), and appServerTable that of the app-server clients.
var (
	allFixtures    = sync.OnceValue(func() []string { return fixtureTable(nil) })
	appServerTable = sync.OnceValue(func() []string { return fixtureTable([]string{AgentAppServer}) })
)

// Decode turns fuzzer bytes into an Input. Only fixtures of the given
// agents are chosen (nil: any).
func Decode(data []byte, agents []string) Input {
	table := allFixtures()
	if len(agents) > 0 {
		table = fixtureTable(agents)
	}
	r := reader{data: data}
	in := Input{Fixture: table[int(r.byte())%len(table)]}
	var seed [8]byte
	for i := range seed {
		seed[i] = r.byte()
	}
	in.Seed = int64(binary.LittleEndian.Uint64(seed[:]))
	cli := in.Agent()
	ops := opsFor(cli)
	for !r.done() && len(in.Mutations) < maxMutations {
		spec := ops[int(r.byte())%len(ops)]
		m := Mutation{Op: spec.op}
		for _, p := range spec.params {
			var b, b2 byte
			b = r.byte()
			if p.width() == 2 {
				b2 = r.byte()
			}
			if v, ok := paramValue(p.kind, b, b2, cli); ok {
				m.Params = append(m.Params, Param{p.key, v})
			}
		}
		in.Mutations = append(in.Mutations, m)
	}
	return in
}

// paramValue maps parameter bytes to a spec value; ok is false when the
// choice is left to the seed or the fault's default.
func paramValue(k paramKind, b, b2 byte, cli string) (string, bool) {
	itoa := strconv.Itoa
	switch k {
	case pNth:
		if b == 0 {
			return "", false
		}
		return itoa(1 + int(b-1)%16), true
	case pNth2:
		if b == 0 {
			return "", false
		}
		return itoa(2 + int(b-1)%8), true
	case pAfter:
		if b == 0 {
			return "", false
		}
		return itoa(int(b-1) % 32), true
	case pLine:
		if b == 0 {
			return "", false
		}
		return itoa(1 + int(b-1)%32), true
	case pCode:
		return itoa(int(b)), true
	case pSignal:
		return signalNames[int(b)%len(signalNames)], true
	case pType:
		types := eventTypes[cli]
		if b == 0 || len(types) == 0 {
			return "", false
		}
		return types[int(b-1)%len(types)], true
	case pField:
		if b == 0 {
			return "", false
		}
		return corruptFields[int(b-1)%len(corruptFields)], true
	case pSize:
		if int(b) >= bigLadderFrom {
			return itoa(bigLadderSizes[int(b)-bigLadderFrom]), true
		}
		return itoa(smallLadderSizes[int(b)%len(smallLadderSizes)]), true
	case pSlice:
		if b == 0 {
			return "", false
		}
		return itoa(1 + int(b-1)%64), true
	case pBytes16:
		return itoa(int(b) | int(b2)<<8), true
	case pFlood:
		return itoa(int(b) * 256), true
	case pBanner:
		return bannerTexts[int(b)%len(bannerTexts)], true
	case pMS:
		return itoa(int(b) % 8), true
	case pBPS:
		return itoa((1 + int(b)) * 64 << 10), true
	case pBlocks:
		return itoa((1 + int(b)%4) * 64 << 10), true
	}
	return "", false
}

// reader hands out the fuzzer's bytes, then zeros.
type reader struct {
	data []byte
	pos  int
}

func (r *reader) byte() byte {
	if r.pos >= len(r.data) {
		r.pos++
		return 0
	}
	b := r.data[r.pos]
	r.pos++
	return b
}

func (r *reader) done() bool { return r.pos >= len(r.data) }

// Encode is the inverse of Decode for inputs built from the vocabulary:
// the bytes that decode to in (with the agents nil, or AgentAppServer
// alone for an app-server fixture). It is how the seed corpora are
// written.
func Encode(in Input) ([]byte, error) { return EncodeFor(in, nil) }

// EncodeFor is Encode for Decode(data, agents).
func EncodeFor(in Input, agents []string) ([]byte, error) {
	table := allFixtures()
	switch {
	case len(agents) > 0:
		table = fixtureTable(agents)
	case in.Agent() == AgentAppServer:
		table = appServerTable()
	}
	idx := -1
	for i, n := range table {
		if n == in.Fixture && idx < 0 {
			idx = i
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("fuzz: no fixture %q", in.Fixture)
	}
	if idx > 255 {
		return nil, fmt.Errorf("fuzz: fixture %q is beyond what one byte encodes", in.Fixture)
	}
	out := []byte{byte(idx)}
	out = binary.LittleEndian.AppendUint64(out, uint64(in.Seed))
	cli := in.Agent()
	ops := opsFor(cli)
	for _, m := range in.Mutations {
		op := -1
		for i, s := range ops {
			if s.op == m.Op {
				op = i
			}
		}
		if op < 0 {
			return nil, fmt.Errorf("fuzz: %q is not in the mutation vocabulary of %s inputs", m.Op, cli)
		}
		out = append(out, byte(op))
		given := map[string]string{}
		for _, p := range m.Params {
			given[p.Key] = p.Value
		}
		for _, p := range ops[op].params {
			b, b2, err := paramBytes(p, given, cli)
			if err != nil {
				return nil, fmt.Errorf("fuzz: %s: %w", m.Op, err)
			}
			out = append(out, b)
			if p.width() == 2 {
				out = append(out, b2)
			}
		}
	}
	return out, nil
}

// paramBytes finds the bytes that decode to the given parameter value.
func paramBytes(p paramSpec, given map[string]string, cli string) (byte, byte, error) {
	v, ok := given[p.key]
	if p.width() == 2 {
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 || n > 0xffff {
			return 0, 0, fmt.Errorf("%s=%q is not encodable", p.key, v)
		}
		return byte(n), byte(n >> 8), nil
	}
	for b := 0; b < 256; b++ {
		got, set := paramValue(p.kind, byte(b), 0, cli)
		if set == ok && (!ok || got == v) {
			return byte(b), 0, nil
		}
	}
	return 0, 0, fmt.Errorf("%s=%q is not encodable", p.key, v)
}
