package fakecli

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	asfixtures "github.com/agentconform/agentconform/fixtures/appserver"
	"github.com/agentconform/agentconform/transcript"
)

// The fake `codex app-server` (docs/protocols/codex-app-server.md): the
// flag grammar and usage errors of 0.169.0, then a replay of an app-server
// transcript over JSON-RPC on stdio. The transcript's "in" steps take the
// client's requests (matched by method, ids captured and echoed by the
// responses), notifications and answers to the server's requests
// (matched by id, cases on the result); what the transcript does not
// expect is answered as the real server answers it.

// appServerHelp is `codex app-server --help` of 0.169.0, byte for byte.
//
//go:embed appserver_help.txt
var appServerHelp string

// appServerMethods are the client request methods 0.169.0 knows, in the
// order its "unknown variant" error lists them (taken from that error).
//
//go:embed appserver_methods.txt
var appServerMethodList string

var appServerMethods = func() map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(appServerMethodList, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			m[l] = true
		}
	}
	return m
}()

// appServerUnknownVariant is the error message for a request method the
// server does not know, as 0.169.0 words it.
func appServerUnknownVariant(method string) string {
	var names []string
	for _, l := range strings.Split(appServerMethodList, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			names = append(names, "`"+l+"`")
		}
	}
	return "Invalid request: unknown variant `" + method + "`, expected one of " + strings.Join(names, ", ")
}

// appServerUsage is clap's usage line.
const appServerUsage = "Usage: codex app-server [OPTIONS] [COMMAND]"

// appServerValueFlags are the options that take a value, by long name,
// with their value names as clap shows them.
var appServerValueFlags = map[string]string{
	"config": "<key=value>", "enable": "<FEATURE>", "disable": "<FEATURE>", "startup-client-info": "<STARTUP_CLIENT_INFO>",
	"cloud-skills-snapshot": "<PATH>", "code-mode-host": "<URL>", "listen": "<URL>", "ws-auth": "<MODE>",
	"ws-token-file": "<PATH>", "ws-token-sha256": "<HEX>", "ws-shared-secret-file": "<PATH>", "ws-issuer": "<ISSUER>",
	"ws-audience": "<AUDIENCE>", "ws-max-clock-skew-seconds": "<SECONDS>",
}

// appServerBoolFlags are the switches.
var appServerBoolFlags = map[string]bool{"startup-sign-out": true, "print-startup-config": true, "strict-config": true,
	"stdio": true, "analytics-default-enabled": true, "help": true}

// appServerSubcommands are the subcommands of `codex app-server`; none is
// faked.
var appServerSubcommands = map[string]bool{"daemon": true, "proxy": true, "generate-ts": true, "generate-json-schema": true, "help": true}

// appServerFlags is a parsed `codex app-server` invocation.
type appServerFlags struct {
	help       bool
	listen     string
	configs    []string
	subcommand string
	printCfg   bool
}

// parseAppServer parses the arguments after `app-server` as clap does for
// 0.169.0; msg is the usage error (exit 2) when they are not valid.
func parseAppServer(args []string) (f appServerFlags, msg string) {
	var used []string // the options given so far, as clap's usage shows them
	usage := func() string {
		if len(used) == 0 {
			return appServerUsage
		}
		return "Usage: codex app-server " + strings.Join(used, " ")
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			if appServerSubcommands[a] {
				f.subcommand = a
				return f, ""
			}
			return f, fmt.Sprintf("error: unrecognized subcommand '%s'\n\n%s\n\nFor more information, try '--help'.\n", a, appServerUsage)
		}
		name, value, hasValue := "", "", false
		switch {
		case a == "-h":
			name = "help"
		case a == "-c":
			name = "config"
		case strings.HasPrefix(a, "-c") && !strings.HasPrefix(a, "--"):
			name, value, hasValue = "config", strings.TrimPrefix(strings.TrimPrefix(a, "-c"), "="), true
		case strings.HasPrefix(a, "--"):
			name = a[2:]
			if k, v, ok := strings.Cut(name, "="); ok {
				name, value, hasValue = k, v, true
			}
		default:
			return f, fmt.Sprintf("error: unexpected argument '%s' found\n\n%s\n\nFor more information, try '--help'.\n", a, usage())
		}
		if vn, ok := appServerValueFlags[name]; ok {
			if !hasValue {
				if i+1 >= len(args) {
					return f, fmt.Sprintf("error: a value is required for '--%s %s' but none was supplied\n\nFor more information, try '--help'.\n", name, vn)
				}
				i++
				value = args[i]
			}
			switch name {
			case "config":
				f.configs = append(f.configs, value)
			case "listen":
				if !validListen(value) {
					return f, fmt.Sprintf("error: invalid value '%s' for '--listen <URL>': unsupported --listen URL `%s`; expected `stdio://`, `unix://`, `unix://PATH`, `ws://IP:PORT`, or `off`\n\nFor more information, try '--help'.\n", value, value)
				}
				f.listen = value
			}
			if u := "--" + name + " " + vn; !containsStr(used, u) {
				used = append(used, u)
			}
			continue
		}
		if appServerBoolFlags[name] && !hasValue {
			switch name {
			case "help":
				f.help = true
				return f, ""
			case "print-startup-config":
				f.printCfg = true
			}
			if u := "--" + name; !containsStr(used, u) {
				used = append(used, u)
			}
			continue
		}
		return f, fmt.Sprintf("error: unexpected argument '%s' found\n\n%s\n\nFor more information, try '--help'.\n", a, usage())
	}
	return f, ""
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// validListen reports whether --listen takes u: stdio://, unix://,
// unix://PATH, ws://IP:PORT or off.
func validListen(u string) bool {
	switch {
	case u == "stdio://", u == "off", u == "unix://", strings.HasPrefix(u, "unix://"):
		return true
	case strings.HasPrefix(u, "ws://"):
		hostPort := strings.TrimPrefix(u, "ws://")
		i := strings.LastIndexByte(hostPort, ':')
		if i <= 0 {
			return false
		}
		_, err := strconv.ParseUint(hostPort[i+1:], 10, 16)
		return err == nil
	}
	return false
}

// runCodexAppServer is `codex app-server`.
func runCodexAppServer(p *proc, args []string) int {
	ref, err := transcriptRef("codex", p.env)
	if err != nil {
		return p.harnessError(err)
	}
	if p.env(EnvTranscript) == "" && p.env(EnvFixture) == "" {
		ref = refFixture + "codex/" + asfixtures.Prefix + "plain-text"
	}
	p.logStart(refName(ref))
	f, msg := parseAppServer(args)
	if msg != "" {
		return p.flagsError(msg, 2)
	}
	if f.help {
		io.WriteString(p.out.w, appServerHelp)
		return 0
	}
	for _, c := range f.configs {
		if !strings.Contains(c, "=") {
			return p.flagsError("Error: error parsing -c overrides: Invalid override (missing '='): "+c, 1)
		}
	}
	switch {
	case f.subcommand != "":
		return p.harnessError(fmt.Errorf("`codex app-server %s` is not faked; only the app server on stdio is", f.subcommand))
	case f.printCfg:
		return p.harnessError(fmt.Errorf("`codex app-server --print-startup-config` is not faked"))
	case f.listen != "" && f.listen != "stdio://":
		return p.harnessError(fmt.Errorf("`codex app-server --listen %s` is not faked; only stdio:// is", f.listen))
	}
	t, err := loadRef("codex", ref)
	if err != nil {
		return p.harnessError(err)
	}
	if !t.Header.IsAppServer() {
		return p.harnessError(fmt.Errorf("transcript %s records `%s`, not `codex app-server`: select an app-server transcript (%s / %s)",
			refName(ref), strings.Join(t.Header.Argv, " "), EnvTranscript, EnvFixture))
	}
	// Every process starts with the first process part; a thread/resume
	// of a thread kept in the session store moves it to the part that
	// resumes it (codex_appserver_threads.go).
	steps := p.plan.steps("codex", t.Processes()[0])
	eng := newEngine(p, steps, readLines(p.stdin, p.start))
	eng.defaultSignal = appServerSignal
	a := newAppServerState(steps)
	a.ref, a.recorded = ref, t.Header.SessionID
	if t.Header.SessionID != "" {
		a.threads[t.Header.SessionID] = true
	}
	eng.rpc = a
	return eng.run()
}

// appServerSignal is what `codex app-server` 0.169.0 does on a signal
// (observed through its npm launcher): SIGTERM ends it with status 0,
// SIGINT and the others kill it.
func appServerSignal(e *engine, sig syscall.Signal) flow {
	if sig == syscall.SIGTERM {
		return e.finish(0)
	}
	return e.dieBy(sig)
}

// appServerState is the JSON-RPC layer of the fake app-server: what the
// transcript's steps do not take is answered here, as the real server
// answers it.
type appServerState struct {
	// sawInit is set once the client's initialize was held for its step.
	sawInit bool
	// threads are the thread ids the transcript's server knows (its
	// recorded session, or the thread resumed); a request naming another
	// is answered with the real server's error.
	threads map[string]bool
	// ref is the transcript the replay plays, part the index of its
	// process part: a thread whose first turn this process takes is kept
	// in the session store with them.
	ref  string
	part int
	// recorded is the thread id the transcript's server named (its
	// session id), which a thread/start answers with while it is free.
	recorded string
	// kept are the threads already in the session store; loaded those
	// this process has opened (thread/start, thread/resume); ephemeral is
	// set when the last thread/start asked for a thread that is not kept.
	kept, loaded map[string]bool
	ephemeral    bool
	// turns maps the index of each turn/started step to the index of its
	// turn/completed step (-1 when it has none).
	turns map[int]int
	// interruptAt is the index of the InterruptLabel, -1 when there is none.
	interruptAt int
}

func newAppServerState(steps []transcript.Step) *appServerState {
	a := &appServerState{threads: map[string]bool{}, turns: map[int]int{}, interruptAt: -1, kept: map[string]bool{}, loaded: map[string]bool{}}
	if i, ok := transcript.Labels(steps)[transcript.LabelInterrupted]; ok {
		a.interruptAt = i
	}
	open := map[string]int{}
	for i, s := range steps {
		if s.Op != transcript.OpOut {
			continue
		}
		switch {
		case strings.Contains(s.Text, `"method":"turn/started"`):
			if id := turnIDOf(s.Text); id != "" {
				open[id] = i
				a.turns[i] = -1
			}
		case strings.Contains(s.Text, `"method":"turn/completed"`):
			if id := turnIDOf(s.Text); id != "" {
				if st, ok := open[id]; ok {
					a.turns[st] = i
					delete(open, id)
				}
			}
		}
	}
	return a
}

var turnIDPattern = regexp.MustCompile(`"turn":\{"id":"([^"]+)"`)

// startedAtPattern finds a turn's startedAt, for the completedAt of a
// turn/completed the fake makes up.
var startedAtPattern = regexp.MustCompile(`"startedAt":(\d+)`)

// turnIDOf is the id of the turn a turn/started or turn/completed line
// carries.
func turnIDOf(text string) string {
	if m := turnIDPattern.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

// currentTurn is the turn the replay is inside at pc: the index of its
// turn/started step, or -1.
func (a *appServerState) currentTurn(pc int) int {
	best := -1
	for st, end := range a.turns {
		if st < pc && (end < 0 || end >= pc) && st > best {
			best = st
		}
	}
	return best
}

// threadMethods are the requests that name a thread the server must know.
var threadMethods = map[string]bool{"turn/start": true, "turn/interrupt": true, "turn/steer": true, "thread/resume": true,
	"thread/read": true, "thread/fork": true, "thread/archive": true, "thread/unsubscribe": true, "thread/name/set": true}

// threadKnown returns the real server's error message when m is a request
// naming a thread the transcript's server does not know, "" otherwise: an
// id that is no UUID is "invalid thread id: ..." ("invalid session id:
// ..." for thread/resume), an unknown one "thread not found: ID" ("no
// rollout found for thread id ID" for thread/resume), as 0.169.0 words
// them (docs/protocols/codex-app-server.md#resume).
func (a *appServerState) threadKnown(m *stdinMsg) string {
	if len(a.threads) == 0 || m.obj == nil {
		return ""
	}
	method, _ := m.obj["method"].(string)
	if !threadMethods[method] {
		return ""
	}
	if bad := threadTypeError(m.obj); bad != "" {
		return bad
	}
	raw, _ := threadParam(m.obj)
	id, bad := parseThreadID(raw)
	switch {
	case bad != "" && method == "thread/resume":
		return "invalid session id: " + bad
	case bad != "":
		return "invalid thread id: " + bad
	case a.threads[id]:
		return ""
	case method == "thread/resume":
		return "no rollout found for thread id " + id
	}
	return "thread not found: " + id
}

// eof ends the server once its stdin is closed and the replay would wait:
// it exits 0 and answers nothing more (observed on 0.169.0: requests
// still in progress when stdin closed got no answer). What needs no wait
// (the answer to a request already taken, the rest of a turn's lines)
// is written first.
func (a *appServerState) eof(e *engine, _ waitKind) (flow, bool) {
	return e.finish(0), true
}

// accepts implements rpcLayer: a request naming a thread the server does
// not know is answered with the server's error, not taken by a step.
func (a *appServerState) accepts(m *stdinMsg) bool { return a.threadKnown(m) == "" }

// out implements rpcLayer: the app-server writes its lines as recorded.
func (a *appServerState) out(_ *engine, _ int, text string) string { return text }

// eager implements rpcLayer: the app-server reads stdin between steps.
func (a *appServerState) eager() bool { return true }

// writeError answers the request id (its JSON text) with a JSON-RPC error,
// in the server's key order: error first, then id.
func (a *appServerState) writeError(e *engine, id string, code int, msg string) flow {
	b, _ := json.Marshal(msg)
	return e.write(fmt.Sprintf(`{"error":{"code":%d,"message":%s},"id":%s}`, code, b, id), true, 0)
}

// dispatch takes a stdin line that the current "in" step (st, nil while
// no step waits) did not match.
func (a *appServerState) dispatch(e *engine, m *stdinMsg, st *transcript.Step) flow {
	if len(strings.TrimSpace(string(m.raw))) == 0 {
		return flowNone
	}
	if m.obj == nil {
		e.logStdin(m, "malformed")
		e.p.obs.log("protocol_error", "message", "a stdin line that is not a JSON object")
		fmt.Fprintf(e.p.stderr, "ERROR codex_app_server_transport::transport: Failed to deserialize JSONRPCMessage: expected value at line 1 column 1\n")
		return flowNone
	}
	msg, err := transcript.RPCFromObject(m.obj)
	if err != nil {
		e.logStdin(m, "malformed")
		e.p.obs.log("protocol_error", "message", "not a JSON-RPC message: "+err.Error())
		fmt.Fprintf(e.p.stderr, "ERROR codex_app_server_transport::transport: Failed to deserialize JSONRPCMessage: data did not match any variant of untagged enum JSONRPCMessage\n")
		return flowNone
	}
	switch msg.Kind {
	case transcript.RPCNotification:
		if a.later(e, m) {
			e.held = append(e.held, m) // sent ahead of its step (initialized before initialize's answer)
			return flowNone
		}
		e.logStdin(m, "ignored")
		return flowNone
	case transcript.RPCResponse, transcript.RPCError:
		if a.later(e, m) {
			e.held = append(e.held, m)
			return flowNone
		}
		e.protocolError(m, "an answer to no pending request of the server (id "+msg.ID+")")
		return flowNone
	}
	// A request the transcript does not take here.
	initialized := a.sawInit || e.recordedInitDone()
	if _, ok := m.obj["params"]; !ok && appServerMethods[msg.Method] && msg.Method != "initialize" {
		e.logStdin(m, "rejected")
		return a.writeError(e, msg.ID, -32600, "Invalid request: missing field `params`")
	}
	switch {
	case !appServerMethods[msg.Method]:
		e.logStdin(m, "rejected")
		return a.writeError(e, msg.ID, -32600, appServerUnknownVariant(msg.Method))
	case msg.Method == "initialize" && initialized:
		e.logStdin(m, "rejected")
		return a.writeError(e, msg.ID, -32600, "Already initialized")
	case msg.Method == "initialize":
		// Sent before the replay reached its step: taken there.
		a.sawInit = true
		e.held = append(e.held, m)
		return flowNone
	case !initialized:
		e.logStdin(m, "rejected")
		return a.writeError(e, msg.ID, -32600, "Not initialized")
	case msg.Method == "thread/resume" && threadTypeError(m.obj) == "" && !a.later(e, m):
		// A thread of another process (or none): the session store says.
		return a.resume(e, m, msg)
	case a.threadKnown(m) != "":
		e.logStdin(m, "rejected")
		return a.writeError(e, msg.ID, -32600, a.threadKnown(m))
	case msg.Method == "turn/interrupt":
		return a.interrupt(e, m, msg)
	case a.later(e, m):
		// A request the transcript takes later: held for its step.
		e.held = append(e.held, m)
		return flowNone
	}
	e.protocolError(m, "a "+msg.Method+" request the transcript does not expect here")
	return a.writeError(e, msg.ID, -32603, "agentconform fake codex app-server: "+msg.Method+" is not in the transcript this fake replays")
}

// later reports whether an "in" step ahead in this process part (branches
// included) takes m: a line the client sent before the replay got there.
func (a *appServerState) later(e *engine, m *stdinMsg) bool {
	for i := max(e.pc, 0); i < len(e.steps); i++ {
		s := &e.steps[i]
		if s.Op == transcript.OpNextProcess {
			break
		}
		if s.Op == transcript.OpIn && e.matches(s, m) {
			return true
		}
	}
	return false
}

// recordedInitDone reports whether the replay is past the transcript's
// initialize exchange (the client's initialize was taken by its step).
func (e *engine) recordedInitDone() bool {
	for i := 0; i < e.pc && i < len(e.steps); i++ {
		if s := e.steps[i]; s.Op == transcript.OpIn && s.Match != nil && s.Match["method"] == "initialize" {
			return true
		}
	}
	return false
}

// interrupt answers turn/interrupt: inside a turn, the transcript's
// interrupted branch when it has one ahead (the line is held for the
// branch's own turn/interrupt step), else the server's answer made up from
// the turn's lines: {} and a turn/completed with status interrupted, the
// rest of the turn skipped. Outside a turn it is an error, as a turn that
// is not running cannot be interrupted.
func (a *appServerState) interrupt(e *engine, m *stdinMsg, msg *transcript.RPCMessage) flow {
	if a.interruptAt > e.pc {
		e.held = append(e.held, m)
		e.pc = a.interruptAt
		e.p.obs.log("interrupt", "via", "turn/interrupt")
		return flowJump
	}
	start := a.currentTurn(e.pc)
	if start < 0 {
		e.logStdin(m, "rejected")
		return a.writeError(e, msg.ID, -32600, "no active turn to interrupt")
	}
	e.logStdin(m, "interrupt")
	e.p.obs.log("interrupt", "via", "turn/interrupt")
	if f := e.write(`{"id":`+msg.ID+`,"result":{}}`, true, 0); f != flowNone {
		return f
	}
	started := e.steps[start].Text
	if len(e.vars) > 0 {
		started = e.vars.Fill(started)
	}
	done := strings.Replace(started, `{"method":"turn/started"`, `{"method":"turn/completed"`, 1)
	done = strings.Replace(done, `"status":"inProgress"`, `"status":"interrupted"`, 1)
	if sa := startedAtPattern.FindStringSubmatch(done); sa != nil {
		done = strings.Replace(done, `"completedAt":null,"durationMs":null`, `"completedAt":`+sa[1]+`,"durationMs":0`, 1)
	}
	if f := e.write(done, true, 0); f != flowNone {
		return f
	}
	end := a.turns[start]
	if end < 0 {
		end = len(e.steps) - 1
		for i := e.pc; i < len(e.steps); i++ {
			if op := e.steps[i].Op; op == transcript.OpStdinEOF || op == transcript.OpExit || op == transcript.OpNextProcess {
				end = i - 1
				break
			}
		}
	}
	e.pc = end + 1
	return flowJump
}
