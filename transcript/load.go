package transcript

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/dialect"
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/jsonl"
)

// Error is one problem in a transcript file, located by line, byte offset
// and JSON pointer.
type Error struct {
	File    string
	Line    int
	Offset  int64
	Pointer string
	Msg     string
}

// Error renders "file:line: byte N: at /pointer: message".
func (e *Error) Error() string {
	var b strings.Builder
	file := e.File
	if file == "" {
		file = "<transcript>"
	}
	b.WriteString(file)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d: byte %d", e.Line, e.Offset)
	}
	if e.Pointer != "" {
		b.WriteString(": at " + e.Pointer)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// Errors is every problem found in one transcript (at most maxErrors).
type Errors []*Error

// Error joins the problems, one per line.
func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

const maxErrors = 20

// Options tell Load what it cannot see in a plain capture.
type Options struct {
	// CLI names the CLI of a plain stdout capture; "" detects it.
	CLI string
	// MaxLineBytes bounds one line; 0 means jsonl.DefaultMaxLineBytes.
	MaxLineBytes int64
}

// ReadFile loads the transcript file at path.
func ReadFile(path string, opts Options) (*Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening transcript: %w", err)
	}
	defer f.Close()
	return Load(f, path, opts)
}

// LoadFile loads a transcript from a file system (os.DirFS, fixtures.FS()).
func LoadFile(fsys fs.FS, name string, opts Options) (*Transcript, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("opening transcript: %w", err)
	}
	defer f.Close()
	return Load(f, name, opts)
}

// Load reads a transcript in any of three forms, told apart by the first
// line:
//   - agentconform/v1: a header with "transcript":"agentconform/v1", then steps;
//   - a capture transcript: {"dir":"meta"|"in"|"out"|"err","t_ms":N,...} per
//     line (testdata/captures/claude/*.transcript.jsonl), converted to steps:
//     stdin lines become subset matches on their type (and request subtype),
//     with request ids captured and templated into the stdout lines that
//     echo them;
//   - anything else is a plain stdout capture: every line is an "out" step,
//     then exit 0.
//
// Every problem is reported with its line, byte offset and JSON pointer.
func Load(r io.Reader, name string, opts Options) (*Transcript, error) {
	rd := jsonl.NewReader(r, jsonl.Options{MaxLineBytes: opts.MaxLineBytes})
	l := &loader{name: name, opts: opts}
	first := true
	for {
		line, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading transcript %s: %w", name, err)
		}
		if line.TooLong {
			l.fail(line, "", fmt.Sprintf("line of %d bytes exceeds the %d-byte limit", line.Len, maxLine(opts)))
			continue
		}
		if first {
			first = false
			l.sniff(line)
		}
		l.line(line)
		if len(l.errs) >= maxErrors {
			break
		}
	}
	return l.finish()
}

func maxLine(o Options) int64 {
	if o.MaxLineBytes > 0 {
		return o.MaxLineBytes
	}
	return jsonl.DefaultMaxLineBytes
}

type form int

const (
	formNative form = iota
	formCapture
	formPlain
)

type loader struct {
	name string
	opts Options
	form form
	t    Transcript
	errs Errors

	sawHeader bool
	// capture conversion of stdin lines and the ids they carry.
	stdin  *StdinConverter
	events []map[string]any // plain form: first events, for detection
}

func (l *loader) fail(line jsonl.Line, ptr, msg string) {
	if len(l.errs) < maxErrors {
		l.errs = append(l.errs, &Error{File: l.name, Line: line.Number, Offset: line.Offset, Pointer: ptr, Msg: msg})
	}
}

// sniff decides the form from the first line.
func (l *loader) sniff(line jsonl.Line) {
	obj, _ := jsonl.Parse(line.Bytes, jsonl.ParseOptions{})
	switch {
	case obj != nil && obj["transcript"] != nil:
		l.form = formNative
	case obj != nil && obj["dir"] != nil && obj["t_ms"] != nil:
		l.form = formCapture
		l.t.Header = Header{Format: Format, Source: "captured", Cwd: "<cwd>"}
		l.stdin = NewStdinConverter()
	default:
		l.form = formPlain
		l.t.Header = Header{Format: Format, CLI: l.opts.CLI, Source: "captured"}
	}
}

func (l *loader) line(line jsonl.Line) {
	obj, fs := jsonl.Parse(line.Bytes, jsonl.ParseOptions{})
	if l.form == formPlain {
		// A plain capture replays byte for byte, whatever is wrong with it.
		if obj != nil && len(l.events) < 64 {
			l.events = append(l.events, obj)
		}
		l.t.Steps = append(l.t.Steps, Step{Line: line.Number, Offset: line.Offset, Op: OpOut, Text: string(line.Bytes)})
		return
	}
	for _, f := range fs {
		if f.Rule.Level == finding.Must {
			l.fail(line, f.Pointer, f.Message)
			return
		}
	}
	if obj == nil {
		return
	}
	if l.form == formCapture {
		l.capture(line, obj)
		return
	}
	if !l.sawHeader {
		l.sawHeader = true
		l.header(line, obj)
		return
	}
	if st, ok := l.step(line, obj); ok {
		l.t.Steps = append(l.t.Steps, st)
	}
}

var headerKeys = map[string]bool{"transcript": true, "cli": true, "cli_version": true, "scenario": true, "description": true,
	"argv": true, "env": true, "cwd": true, "session_id": true, "source": true}

func (l *loader) header(line jsonl.Line, obj map[string]any) {
	h := &l.t.Header
	for _, k := range sortedKeys(obj) {
		if !headerKeys[k] {
			l.fail(line, finding.Pointer(k), fmt.Sprintf("unknown header field %q", k))
		}
	}
	str := func(k string, required bool) string {
		v, ok := obj[k]
		if !ok {
			if required {
				l.fail(line, finding.Pointer(k), "the header must have "+strconv.Quote(k))
			}
			return ""
		}
		s, ok := v.(string)
		if !ok {
			l.fail(line, finding.Pointer(k), k+" must be a string")
		}
		return s
	}
	h.Format = str("transcript", true)
	if h.Format != "" && h.Format != Format {
		l.fail(line, "/transcript", fmt.Sprintf("format %q is not %q", h.Format, Format))
	}
	h.CLI = str("cli", true)
	if h.CLI != "" && h.CLI != "claude" && h.CLI != "codex" && h.CLI != "gemini" {
		l.fail(line, "/cli", fmt.Sprintf("cli %q is not claude, codex or gemini", h.CLI))
	}
	h.CLIVersion = str("cli_version", true)
	h.Scenario = str("scenario", false)
	h.Description = str("description", false)
	h.Cwd = str("cwd", false)
	h.SessionID = str("session_id", false)
	h.Source = str("source", false)
	h.Argv = l.strings(line, obj, "argv")
	h.Env = l.strings(line, obj, "env")
}

func (l *loader) strings(line jsonl.Line, obj map[string]any, k string) []string {
	v, ok := obj[k]
	if !ok {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		l.fail(line, finding.Pointer(k), k+" must be an array of strings")
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, x := range arr {
		s, ok := x.(string)
		if !ok {
			l.fail(line, finding.Pointer(k, strconv.Itoa(i)), "must be a string")
			continue
		}
		out = append(out, s)
	}
	return out
}

// parseBranches reads the capture and cases of an "in" or "delay_ms"
// step; msg says what is wrong, at the JSON pointer ptr.
func parseBranches(st *Step, obj map[string]any) (ptr, msg string) {
	if c, ok := obj["capture"]; ok {
		m, ok := c.(map[string]any)
		if !ok {
			return "/capture", "capture must be an object of name: JSON pointer"
		}
		st.Capture = map[string]string{}
		for _, k := range sortedKeys(m) {
			p, ok := m[k].(string)
			if !ok || (p != "" && !strings.HasPrefix(p, "/")) {
				return finding.Pointer("capture", k), "a capture is a JSON pointer such as \"/request_id\""
			}
			st.Capture[k] = p
		}
	}
	if c, ok := obj["cases"]; ok {
		arr, ok := c.([]any)
		if !ok {
			return "/cases", "cases must be an array of {match, goto}"
		}
		for i, x := range arr {
			m, _ := x.(map[string]any)
			match, mok := m["match"].(map[string]any)
			to, gok := m["goto"].(string)
			if !mok || !gok || to == "" || len(m) != 2 {
				return finding.Pointer("cases", strconv.Itoa(i)), `a case is {"match": {...}, "goto": "label"}`
			}
			st.Cases = append(st.Cases, Case{Match: match, Goto: to})
		}
	}
	return "", ""
}

// stepKeys are the keys a step line may have besides its one op key.
var stepKeys = map[string]bool{"t": true, "capture": true, "cases": true, "optional": true, "newline": true, "base64": true, "recorded": true}

func (l *loader) step(line jsonl.Line, obj map[string]any) (Step, bool) {
	st := Step{Line: line.Number, Offset: line.Offset}
	var found []string
	for _, k := range sortedKeys(obj) {
		isOp := false
		for _, op := range ops {
			if string(op) == k {
				isOp = true
			}
		}
		switch {
		case isOp:
			found = append(found, k)
		case !stepKeys[k]:
			l.fail(line, finding.Pointer(k), fmt.Sprintf("unknown step field %q (a step has one of %s, and optionally t, newline, capture, cases, optional)", k, opList()))
			return st, false
		}
	}
	if len(found) != 1 {
		l.fail(line, "", fmt.Sprintf("a step must have exactly one op key (%s); found %d: %s", opList(), len(found), strings.Join(found, ", ")))
		return st, false
	}
	st.Op = Op(found[0])
	v := obj[found[0]]
	bad := func(ptr, msg string) (Step, bool) { l.fail(line, ptr, msg); return st, false }
	if t, ok := obj["t"]; ok {
		n, ok := wholeNumber(t)
		if !ok || n < 0 {
			return bad("/t", "t must be a non-negative whole number of milliseconds")
		}
		st.T = &n
	}
	if nl, ok := obj["newline"]; ok {
		b, isBool := nl.(bool)
		if !isBool || (st.Op != OpOut && st.Op != OpErr) {
			return bad("/newline", `newline (true or false) belongs only to an "out" or "err" step`)
		}
		st.NoNewline = !b
	}
	if _, ok := obj["base64"]; ok && st.Op != OpOut && st.Op != OpErr {
		return bad("/base64", `base64 belongs only to an "out" or "err" step`)
	}
	if r, ok := obj["recorded"]; ok {
		s, isString := r.(string)
		if !isString || st.Op != OpIn && st.Op != OpDelay {
			return bad("/recorded", `recorded (the stdin line as the recorded client sent it, a string) belongs only to an "in" or a "delay_ms" step`)
		}
		st.Recorded = s
	}
	if st.Op != OpIn {
		if _, ok := obj["optional"]; ok {
			return bad("/optional", "optional belongs only to an \"in\" step")
		}
		if st.Op != OpDelay {
			for _, k := range []string{"capture", "cases"} {
				if _, ok := obj[k]; ok {
					return bad(finding.Pointer(k), k+" belongs only to an \"in\" or a \"delay_ms\" step")
				}
			}
		} else if _, ok := obj["cases"]; !ok {
			if _, ok := obj["capture"]; ok {
				return bad("/capture", "capture on a \"delay_ms\" step needs cases (the stdin lines that end the delay)")
			}
		}
	}
	switch st.Op {
	case OpOut, OpErr, OpLabel, OpGoto, OpExitSignal:
		s, ok := v.(string)
		if !ok {
			return bad(finding.Pointer(found[0]), found[0]+" must be a string")
		}
		switch st.Op {
		case OpOut, OpErr:
			if b64, ok := obj["base64"]; ok {
				if b64 != true {
					return bad("/base64", "base64 must be true when present")
				}
				raw, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					return bad(finding.Pointer(found[0]), "not valid base64: "+err.Error())
				}
				s = string(raw)
			}
			if strings.ContainsAny(s, "\n") {
				return bad(finding.Pointer(found[0]), "a line must not contain a newline (write one step per line)")
			}
			st.Text = s
		case OpLabel, OpGoto:
			if s == "" {
				return bad(finding.Pointer(found[0]), "a label must not be empty")
			}
			st.Label = s
		case OpExitSignal:
			if !knownSignals[s] {
				return bad("/exit_signal", fmt.Sprintf("%q is not a signal name (SIGTERM, SIGKILL, ...)", s))
			}
			st.Signal = s
		}
	case OpIn:
		switch x := v.(type) {
		case string:
			st.Text = x
		case map[string]any:
			st.Match = x
		default:
			return bad("/in", "in must be an object (matched as a subset of a JSON stdin line) or a string (a raw stdin line)")
		}
		if _, ok := obj["capture"]; ok && st.Match == nil {
			return bad("/capture", "capture must be an object of name: JSON pointer, on an \"in\" step with an object")
		}
		if ptr, msg := parseBranches(&st, obj); msg != "" {
			return bad(ptr, msg)
		}
		if o, ok := obj["optional"]; ok {
			b, ok := o.(bool)
			if !ok {
				return bad("/optional", "optional must be true or false")
			}
			st.Optional = b
		}
	case OpStdinEOF, OpNextProcess:
		if v != true {
			return bad(finding.Pointer(found[0]), found[0]+" must be true")
		}
	case OpDelay:
		n, ok := wholeNumber(v)
		if !ok || n < 0 {
			return bad("/delay_ms", "delay_ms must be a non-negative whole number")
		}
		st.DelayMS = n
		if ptr, msg := parseBranches(&st, obj); msg != "" {
			return bad(ptr, msg)
		}
	case OpExit:
		n, ok := wholeNumber(v)
		if !ok || n < 0 || n > 255 {
			return bad("/exit", "exit must be a status from 0 to 255")
		}
		st.Code = int(n)
	case OpOnSignal:
		m, ok := v.(map[string]any)
		if !ok || len(m) == 0 {
			return bad("/on_signal", `on_signal must map signal names to actions, e.g. {"SIGTERM": "ignore"}`)
		}
		st.OnSignal = map[string]string{}
		for _, sig := range sortedKeys(m) {
			a, ok := m[sig].(string)
			if !knownSignals[sig] {
				return bad(finding.Pointer("on_signal", sig), fmt.Sprintf("%q is not a signal name", sig))
			}
			if !ok {
				return bad(finding.Pointer("on_signal", sig), "an action must be a string: "+signalActions)
			}
			if err := checkSignalAction(a); err != nil {
				return bad(finding.Pointer("on_signal", sig), err.Error())
			}
			st.OnSignal[sig] = a
		}
	}
	return st, true
}

func opList() string {
	names := make([]string, len(ops))
	for i, o := range ops {
		names[i] = string(o)
	}
	return strings.Join(names, ", ")
}

func wholeNumber(v any) (int64, bool) {
	f, ok := v.(float64)
	if !ok || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

// capture converts one dir/t_ms/line record.
func (l *loader) capture(line jsonl.Line, rec map[string]any) {
	var t *int64
	if n, ok := wholeNumber(rec["t_ms"]); ok {
		t = &n
	}
	dir, _ := rec["dir"].(string)
	text, hasText := rec["line"].(string)
	switch dir {
	case "meta":
		l.captureMeta(line, rec, t)
	case "out", "err":
		if !hasText {
			l.fail(line, "/line", `an "`+dir+`" record needs the raw line as a string in "line"`)
			return
		}
		op := OpOut
		if dir == "err" {
			op = OpErr
		} else {
			text = l.stdin.Template(text)
		}
		l.t.Steps = append(l.t.Steps, Step{Line: line.Number, Offset: line.Offset, T: t, Op: op, Text: text})
	case "in":
		if !hasText {
			l.fail(line, "/line", `an "in" record needs the raw line as a string in "line"`)
			return
		}
		st := Step{Line: line.Number, Offset: line.Offset, T: t}
		l.stdin.Expect(&st, text)
		l.t.Steps = append(l.t.Steps, st)
	default:
		l.fail(line, "/dir", fmt.Sprintf(`dir %q is not "meta", "in", "out" or "err"`, dir))
	}
}

func (l *loader) captureMeta(line jsonl.Line, rec map[string]any, t *int64) {
	h := &l.t.Header
	switch rec["event"] {
	case "start":
		h.CLI, _ = rec["cli"].(string)
		h.CLIVersion, _ = rec["cli_version"].(string)
		h.Scenario, _ = rec["capture"].(string)
		h.Argv = l.strings(line, rec, "argv")
		if env, ok := rec["env"].(map[string]any); ok {
			h.Env = sortedKeys(env)
		}
	case "stdin_closed":
		l.t.Steps = append(l.t.Steps, Step{Line: line.Number, Offset: line.Offset, T: t, Op: OpStdinEOF})
	case "exit":
		if sig, ok := rec["signal"].(string); ok && sig != "" {
			l.t.Steps = append(l.t.Steps, Step{Line: line.Number, Offset: line.Offset, T: t, Op: OpExitSignal, Signal: sig})
			return
		}
		code, _ := wholeNumber(rec["exit_code"])
		l.t.Steps = append(l.t.Steps, Step{Line: line.Number, Offset: line.Offset, T: t, Op: OpExit, Code: int(code)})
	}
}

func (l *loader) finish() (*Transcript, error) {
	t := &l.t
	t.Name = l.name
	switch l.form {
	case formPlain:
		if t.Header.CLI == "" {
			d, ok := dialect.Detect(l.events)
			switch {
			case !ok:
				l.errs = append(l.errs, &Error{File: l.name, Msg: "not a transcript, and no event says which CLI wrote this stdout capture (pass the CLI explicitly)"})
			case d == dialect.Claude || d == dialect.ClaudeStdin:
				t.Header.CLI = "claude"
			case d == dialect.Codex || d == dialect.Gemini:
				t.Header.CLI = string(d)
			default:
				l.errs = append(l.errs, &Error{File: l.name, Msg: fmt.Sprintf("a %s stream is an adapter's output, not a CLI's; it cannot be replayed by a fake CLI", d)})
			}
		}
		t.Steps = append(t.Steps, Step{Op: OpExit, Code: 0})
	case formNative:
		if !l.sawHeader && len(l.errs) == 0 {
			l.errs = append(l.errs, &Error{File: l.name, Msg: "empty transcript: the first line must be the header"})
		}
	}
	l.checkFlow()
	if len(l.errs) > 0 {
		return nil, l.errs
	}
	return t, nil
}

// checkFlow checks what single lines cannot show: labels exist and are
// unique, and every process ends with exit or exit_signal.
func (l *loader) checkFlow() {
	seen := map[string]int{}
	for _, s := range l.t.Steps {
		if s.Op == OpLabel {
			if prev, dup := seen[s.Label]; dup {
				l.errs = append(l.errs, &Error{File: l.name, Line: s.Line, Offset: s.Offset, Pointer: "/label", Msg: fmt.Sprintf("label %q is already defined at line %d", s.Label, prev)})
			}
			seen[s.Label] = s.Line
		}
	}
	need := func(s Step, label, ptr string) {
		if _, ok := seen[label]; !ok {
			l.errs = append(l.errs, &Error{File: l.name, Line: s.Line, Offset: s.Offset, Pointer: ptr, Msg: fmt.Sprintf("no label %q in this transcript", label)})
		}
	}
	for _, s := range l.t.Steps {
		switch s.Op {
		case OpGoto:
			need(s, s.Label, "/goto")
		case OpIn, OpDelay:
			for i, c := range s.Cases {
				need(s, c.Goto, finding.Pointer("cases", strconv.Itoa(i), "goto"))
			}
		case OpOnSignal:
			for _, sig := range sortedKeys(s.OnSignal) {
				if a := s.OnSignal[sig]; strings.HasPrefix(a, "goto:") {
					need(s, strings.TrimPrefix(a, "goto:"), finding.Pointer("on_signal", sig))
				}
			}
		}
	}
	if len(l.errs) > 0 {
		return
	}
	l.checkSpin()
	for i, proc := range l.t.Processes() {
		if len(proc) == 0 {
			l.errs = append(l.errs, &Error{File: l.name, Msg: fmt.Sprintf("process %d of the transcript has no steps", i+1)})
			continue
		}
		last := proc[len(proc)-1]
		if last.Op != OpExit && last.Op != OpExitSignal && last.Op != OpGoto {
			l.errs = append(l.errs, &Error{File: l.name, Line: last.Line, Offset: last.Offset,
				Msg: fmt.Sprintf("process %d does not end with exit or exit_signal (a replay must know how the CLI ended)", i+1)})
		}
	}
}

// progresses reports whether a step moves a replay on each time it runs:
// it writes a line (out, err), waits for a stdin line (in), or sleeps
// (delay_ms above 0). A stdin_eof step waits only the first time: once
// stdin is closed it returns at once.
func progresses(s Step) bool {
	switch s.Op {
	case OpOut, OpErr, OpIn:
		return true
	case OpDelay:
		return s.DelayMS > 0
	}
	return false
}

// checkSpin rejects a loop that a replay would run without ever writing,
// reading or sleeping: label, goto, on_signal, stdin_eof and zero delays
// only. Such a loop would keep a fake busy until it is killed. A goto
// must also stay within its process (next_process ends the labels a
// replay can reach).
func (l *loader) checkSpin() {
	for _, proc := range l.t.Processes() {
		labels := Labels(proc)
		// next is where a step that does not progress leads without
		// waiting: -1 for the end of the process (or a step that ends it).
		next := func(i int) int {
			switch proc[i].Op {
			case OpGoto:
				return labels[proc[i].Label]
			case OpExit, OpExitSignal, OpNextProcess:
				return -1
			}
			if i+1 < len(proc) {
				return i + 1
			}
			return -1
		}
		for _, s := range proc {
			if s.Op == OpGoto {
				if _, ok := labels[s.Label]; !ok {
					l.errs = append(l.errs, &Error{File: l.name, Line: s.Line, Offset: s.Offset, Pointer: "/goto",
						Msg: fmt.Sprintf("label %q is in another process of the transcript (a goto cannot cross next_process)", s.Label)})
				}
			}
		}
		if len(l.errs) > 0 {
			return
		}
		// Each step that does not progress has at most one successor of
		// that kind, so following them from every step finds each loop.
		state := make([]int8, len(proc)) // 0 unseen, 1 on the current path, 2 done
		for start := range proc {
			var path []int
			i := start
			for i >= 0 && !progresses(proc[i]) && state[i] == 0 {
				state[i] = 1
				path = append(path, i)
				i = next(i)
			}
			if i >= 0 && !progresses(proc[i]) && state[i] == 1 {
				l.spinError(proc, path, i)
			}
			for _, j := range path {
				state[j] = 2
			}
		}
	}
}

// spinError reports the loop of path that starts at step first, at the
// step that jumps back (a goto, or the step before a label the loop falls
// into).
func (l *loader) spinError(proc []Step, path []int, first int) {
	var loop []int
	for k, j := range path {
		if j == first {
			loop = path[k:]
			break
		}
	}
	back := proc[loop[len(loop)-1]]
	lo, hi := proc[loop[0]].Line, proc[loop[0]].Line
	var what []string
	for _, j := range loop {
		s := proc[j]
		lo, hi = min(lo, s.Line), max(hi, s.Line)
		w := string(s.Op)
		if s.Op == OpDelay {
			w = "delay_ms 0"
		}
		if len(what) == 0 || what[len(what)-1] != w {
			what = append(what, w)
		}
	}
	ptr := ""
	if back.Op == OpGoto {
		ptr = "/goto"
	}
	l.errs = append(l.errs, &Error{File: l.name, Line: back.Line, Offset: back.Offset, Pointer: ptr,
		Msg: fmt.Sprintf("this step loops back to line %d, and the loop (lines %d-%d: %s) never writes, reads or sleeps, so a replay would spin: expected an out, err or in step, or a delay_ms above 0, in the loop",
			proc[first].Line, lo, hi, strings.Join(what, ", "))})
}

// IsErrors reports whether err holds transcript problems (as opposed to an
// I/O error) and returns them.
func IsErrors(err error) (Errors, bool) {
	var es Errors
	ok := errors.As(err, &es)
	return es, ok
}
