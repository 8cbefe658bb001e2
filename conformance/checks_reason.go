package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
)

// The reasons a turn_end may give (HARNESS.md, "turn_end reason").
const (
	ReasonCompleted = "completed"
	ReasonCancelled = "cancelled"
	ReasonFailed    = "failed"
	ReasonMaxTurns  = "max_turns"
)

// TurnReasons is the turn_end reason vocabulary, in the order HARNESS.md
// lists it.
var TurnReasons = []string{ReasonCompleted, ReasonCancelled, ReasonFailed, ReasonMaxTurns}

// Sources of the reason and error-text checks.
const (
	srcTurnReason = srcTurnReasons
	srcErrorText  = srcTurnReasons + "; docs/protocols/claude.md#api-errors; docs/protocols/codex.md#errors; docs/protocols/gemini.md#result"
)

// Why a turn ended and what the CLI said about it.
var (
	CheckTurnReason = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/turn-reason", "MUST",
		"A turn_end that gives a reason gives the one the CLI's stream shows: cancelled for a turn the caller interrupted (a Claude result with terminal_reason aborted_*, a CLI the interrupt stopped), max_turns for a turn the CLI stopped at the caller's turn limit (Claude error_max_turns, Gemini FatalTurnLimitedError), failed for any other failure (an API error, a crash, a stream cut short); completed with ok:true and only then. A caller that shows an interrupt as an error, or an API error as the user's own stop, misleads its user.", srcTurnReason),
		Applies: always, Judge: judgeTurnReason})
	CheckErrorText = register(&Check{Family: FamilyLossless, Rule: rule("lossless/error-text", "MUST",
		"A turn the CLI failed with an error message (Claude's is_error result: its errors[] or result text; Codex turn.failed and error events; Gemini's result error and error events) hands that message to the caller, in the turn's events or its turn_end error (its main message at least, however formatted): whatever profile, reason or not, the user must be able to see why the turn failed.", srcErrorText),
		Applies: always, Judge: judgeErrorText})
)

// turnFacts is what one turn was, as the runner and the CLI saw it.
type turnFacts struct {
	// wire is the CLI's turn (nil when no CLI process ran one for it).
	wire *turnWire
	// interrupted: the runner interrupted while the turn ran; closed: it
	// sent close while the turn ran (the caller gave up).
	interrupted, closed bool
	// said is what the CLI's terminal event says happened: completed,
	// cancelled, failed or max_turns; "" when there is none (no terminal
	// event, or text output).
	said string
	// errors are the CLI's error messages of a failed turn.
	errors []string
	// kinds are the error kinds Claude gave its synthetic error message
	// (the assistant line's "error": authentication_failed, rate_limit, ...).
	kinds []string
}

// turnFacts returns the facts of the i-th turn (0-based): its CLI turn and
// what the runner sent while it ran (from the previous turn_end to its own,
// or to the end of the case when there is none).
func (o *Observation) turnFacts(i int) turnFacts {
	var f turnFacts
	if ts := o.cliTurns(); i < len(ts) {
		f.wire = &ts[i]
		f.said, f.errors = o.cliSaid(&ts[i])
		if o.Case.Agent == "claude" && ts[i].format == formatStream {
			for _, l := range ts[i].lines {
				if k := str(l.Obj, "error"); k != "" && str(l.Obj, "type") == "assistant" && !slices.Contains(f.kinds, k) {
					f.kinds = append(f.kinds, k)
				}
			}
		}
	}
	ends := o.TurnEnds()
	var from, to time.Duration = -1, 1<<63 - 1
	if i > 0 && i-1 < len(ends) {
		from = ends[i-1].At
	}
	if i < len(ends) {
		to = ends[i].At
	}
	for _, s := range o.Sent {
		if s.At <= from || s.At > to {
			continue
		}
		switch s.Op {
		case "interrupt", "SIGINT":
			f.interrupted = true
		case "close":
			f.closed = true
		}
	}
	return f
}

// cliSaid reads what a CLI turn's terminal event says happened, and the
// error messages of a failed one.
func (o *Observation) cliSaid(t *turnWire) (string, []string) {
	switch t.format {
	case formatStream:
		term := terminalOf(o.Case.Agent, t.lines)
		if term == nil {
			return "", nil
		}
		said, errs := terminalSays(o.Case.Agent, term.Obj)
		if said == ReasonFailed || said == ReasonMaxTurns {
			// Error events of the failed turn: Codex's, and Gemini's of
			// severity error (a warning, such as loop detection, comes in
			// turns that complete too).
			for _, l := range t.lines {
				if l.Obj == nil || str(l.Obj, "type") != "error" || o.Case.Agent == "gemini" && str(l.Obj, "severity") != "error" {
					continue
				}
				if m := str(l.Obj, "message"); m != "" && !slices.Contains(errs, m) {
					errs = append(errs, m)
				}
			}
		}
		return said, errs
	case formatJSON:
		obj := o.jsonAnswer(t.pid)
		if obj == nil {
			return "", nil
		}
		if o.Case.Agent == "gemini" {
			// Gemini's JSON output has no status: an error member is the
			// failure.
			e, _ := obj["error"].(map[string]any)
			if e == nil {
				return ReasonCompleted, nil
			}
			obj = map[string]any{"type": "result", "status": "error", "error": e}
		}
		return terminalSays(o.Case.Agent, obj)
	}
	return "", nil
}

// terminalSays maps a terminal event onto the reason vocabulary: Claude's
// result (is_error, subtype, terminal_reason), Codex turn.completed and
// turn.failed, Gemini's result (status, error.type); with the error
// messages of a failure.
func terminalSays(agent string, obj map[string]any) (string, []string) {
	switch agent {
	case "claude":
		if isErr, _ := obj["is_error"].(bool); !isErr {
			return ReasonCompleted, nil
		}
		reason := str(obj, "terminal_reason")
		switch {
		case strings.HasPrefix(reason, "aborted"):
			return ReasonCancelled, nil
		case str(obj, "subtype") == "error_max_turns" || reason == "max_turns":
			return ReasonMaxTurns, claudeErrors(obj)
		}
		return ReasonFailed, claudeErrors(obj)
	case "codex":
		if obj["type"] == "turn.completed" {
			return ReasonCompleted, nil
		}
		e, _ := obj["error"].(map[string]any)
		var errs []string
		if m := str(e, "message"); m != "" {
			errs = append(errs, m)
		}
		return ReasonFailed, errs
	case "gemini":
		if str(obj, "status") != "error" {
			return ReasonCompleted, nil
		}
		e, _ := obj["error"].(map[string]any)
		var errs []string
		if m := str(e, "message"); m != "" {
			errs = append(errs, m)
		}
		switch str(e, "type") {
		case "FatalCancellationError":
			return ReasonCancelled, nil
		case "FatalTurnLimitedError":
			return ReasonMaxTurns, errs
		}
		return ReasonFailed, errs
	}
	return "", nil
}

// claudeErrors returns the error messages of an is_error Claude result:
// its errors[] strings, else its result text.
func claudeErrors(obj map[string]any) []string {
	var out []string
	if arr, ok := obj["errors"].([]any); ok {
		for _, e := range arr {
			if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		if s := str(obj, "result"); strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// jsonAnswer decodes the JSON output of the CLI process pid: its one
// object, or the result in Claude's --verbose array; nil if none.
func (o *Observation) jsonAnswer(pid int) map[string]any {
	for _, w := range o.Wire {
		if w.PID != pid {
			continue
		}
		var v any
		if json.Unmarshal(bytes.TrimSpace(w.Bytes), &v) != nil {
			return nil
		}
		if arr, ok := v.([]any); ok {
			for i := len(arr) - 1; i >= 0; i-- {
				if m, ok := arr[i].(map[string]any); ok && m["type"] == "result" {
					return m
				}
			}
			return nil
		}
		m, _ := v.(map[string]any)
		return m
	}
	return nil
}

// allowedReasons returns the reasons a failed turn (ok:false) may give,
// given its facts.
func (f turnFacts) allowedReasons() []string {
	var out []string
	switch f.said {
	case ReasonCompleted:
		// The stream completed, yet the turn failed: the process did (an
		// exit status, a signal after the last line), or the adapter did
		// (a line over its limit); whether ok:false was right at all is
		// lifecycle/reports-success's to judge. With an interrupt, the
		// interrupt lost the race with the CLI's last line.
		out = append(out, ReasonFailed)
	case ReasonCancelled, ReasonMaxTurns:
		out = append(out, f.said)
	case ReasonFailed:
		out = append(out, ReasonFailed)
	default:
		switch {
		case f.wire != nil && f.wire.format == formatText && !f.interrupted:
			// Text output does not say how the turn ended: any failure.
			out = append(out, ReasonFailed, ReasonMaxTurns)
		case !f.interrupted || f.closed:
			// No terminal event and no interrupt: the CLI died, or was
			// stopped by the caller that gave up.
			out = append(out, ReasonFailed)
		}
	}
	if (f.interrupted || f.closed) && !slices.Contains(out, ReasonCancelled) {
		out = append(out, ReasonCancelled)
	}
	return out
}

// what says in words what the CLI and the runner did in a turn.
func (f turnFacts) what(agent string) string {
	var s string
	switch f.said {
	case ReasonCompleted:
		s = "the CLI completed the turn"
	case ReasonCancelled:
		s = "the CLI reported the turn aborted by its caller"
	case ReasonMaxTurns:
		s = "the CLI stopped at the turn limit"
	case ReasonFailed:
		s = "the CLI reported the turn failed"
		if len(f.errors) > 0 {
			s += fmt.Sprintf(" (%q)", clip(f.errors[0], 160))
		}
	default:
		switch {
		case f.wire == nil:
			s = "no " + agent + " process ran the turn"
		case f.wire.format != formatStream:
			s = "the CLI's " + string(f.wire.format) + " output"
		default:
			s = "the CLI wrote no terminal event"
		}
	}
	switch {
	case f.interrupted:
		s += "; the runner interrupted the turn"
	case f.closed:
		s += "; the runner closed while the turn ran"
	}
	return s
}

func judgeTurnReason(o *Observation) Outcome {
	ends := o.TurnEnds()
	given := 0
	for i, r := range ends {
		if r.Reason == "" {
			continue
		}
		given++
		if !slices.Contains(TurnReasons, r.Reason) {
			return failf("a reason of "+strings.Join(TurnReasons, ", "),
				"turn %d: reason %q", i+1, r.Reason)
		}
		if (r.Reason == ReasonCompleted) != r.OK {
			return failf("reason completed with ok:true, any other with ok:false",
				"turn %d: reason %q with ok:%v", i+1, r.Reason, r.OK)
		}
		if r.OK {
			continue // success: lifecycle/reports-failure judges whether it was one
		}
		f := o.turnFacts(i)
		allowed := f.allowedReasons()
		if o.Case.Watchdog && !slices.Contains(allowed, ReasonFailed) {
			// A turn the adapter's own watchdog gave up on is failed,
			// whatever the CLI said when it was stopped.
			allowed = append(allowed, ReasonFailed)
		}
		if slices.Contains(allowed, r.Reason) {
			continue
		}
		return failf(fmt.Sprintf("turn %d: reason %s (%s)", i+1, strings.Join(allowed, " or "), f.what(o.Case.Agent)),
			"reason %q (error %q)", r.Reason, clip(r.Error, 200))
	}
	if given == 0 {
		return Outcome{Skip: true, Actual: "the adapter gives no reason in its turn_end records"}
	}
	return pass()
}

func judgeErrorText(o *Observation) Outcome {
	ends := o.TurnEnds()
	end, ended := o.End()
	judged := 0
	for i, t := range o.cliTurns() {
		f := o.turnFacts(i)
		if f.interrupted || f.closed || (f.said != ReasonFailed && f.said != ReasonMaxTurns) || len(f.errors) == 0 {
			continue
		}
		if t.format == formatText {
			continue
		}
		judged++
		evs := o.EventsOfTurn(i)
		var extra []string
		if i < len(ends) {
			extra = append(extra, ends[i].Error)
			if ends[i].Reason == ReasonMaxTurns && f.said == ReasonMaxTurns {
				continue // the reason itself says what the CLI said
			}
		}
		if ended && i >= len(ends)-1 {
			extra = append(extra, end.Error)
		}
		hay := errorHaystack(evs, extra)
		found := hay.holds(kindPhrases(f.kinds))
		for _, e := range f.errors {
			if found = found || hay.holds(mainMessages(e, f.said == ReasonMaxTurns)); found {
				break
			}
		}
		if !found && o.Case.Expect.UnknownSession && o.Case.Resume != "" {
			// The CLI refused a session it does not have; an adapter
			// that says so in words of its own, naming the session (an
			// ACP agent's typed resourceNotFound: "Resource not found:
			// ID"), tells the user why.
			found = hay.tellsNotFound(o.Case.Resume)
		}
		if !found {
			where := fmt.Sprintf("its %d events", len(evs))
			if i < len(ends) {
				where += fmt.Sprintf(" or its turn_end (error %q)", clip(ends[i].Error, 200))
			}
			return failf(fmt.Sprintf("turn %d: the CLI's error message %q handed to the caller", i+1, clip(f.errors[0], 300)),
				"not in %s: the user never learns why the turn failed", where)
		}
	}
	if judged == 0 {
		return Outcome{Skip: true, Actual: "the CLI failed no turn with an error message in a JSON stream or JSON output"}
	}
	return pass()
}

// errorText is the text an adapter handed on, folded (foldText) for a
// tolerant search: every string of the events (and of JSON inside them),
// every JSON path's strings joined across events (a message streamed as
// deltas), and the records' error strings.
type errorText []string

func errorHaystack(evs []Event, extra []string) errorText {
	var out errorText
	idx := buildIndex(evs)
	for _, l := range idx.leaves {
		out = append(out, foldText(l))
	}
	for _, p := range idx.paths {
		out = append(out, foldText(p))
	}
	for _, e := range extra {
		if e != "" {
			out = append(out, foldText(e))
			if inner, ok := jsonInside(e); ok {
				for _, a := range atomsOf(inner) {
					out = append(out, foldText(a))
				}
			}
		}
	}
	return out
}

// holds reports whether any of the folded candidates is in the text.
func (h errorText) holds(cands []string) bool {
	for _, c := range cands {
		for _, s := range h {
			if strings.Contains(s, c) {
				return true
			}
		}
	}
	return false
}

// notFoundPhrases are the words, folded, by which an adapter may say that
// the session to resume does not exist.
var notFoundPhrases = []string{"not found", "no conversation", "no session", "unknown session", "does not exist", "no such session", "no rollout found"}

// tellsNotFound reports whether one string of the text names the session
// id together with words saying it was not found: the meaning of a CLI's
// refusal to resume an unknown session ("No conversation found with
// session ID: ID"), whatever its wording. The id alone (echoed in any
// event) or "not found" alone (of anything) does not say it.
func (h errorText) tellsNotFound(id string) bool {
	id = foldText(id)
	if id == "" {
		return false
	}
	for _, s := range h {
		if !strings.Contains(s, id) {
			continue
		}
		for _, p := range notFoundPhrases {
			if strings.Contains(s, p) {
				return true
			}
		}
	}
	return false
}

// claudeErrorKinds are the words that say what kind of error Claude's
// synthetic error message reports (its "error" field, in Claude Code's
// list: authentication_failed, billing_error, rate_limit, ...): an adapter
// that shows the kind in words of its own, such as an ACP agent's
// "Authentication required" for "Not logged in · Please run /login", tells
// the user why. invalid_request and unknown say nothing of their own.
var claudeErrorKinds = map[string][]string{
	"authentication_failed":  {"authenticat", "unauthori", "not logged in", "log in", "login", "api key", "credential", "sign in"},
	"oauth_org_not_allowed":  {"authenticat", "unauthori", "organization", "login", "sign in"},
	"verification_required":  {"verif", "authenticat", "login", "sign in"},
	"cloud_credential_error": {"credential", "authenticat", "unauthori"},
	"account_on_hold":        {"account", "billing"},
	"billing_error":          {"billing", "credit", "payment"},
	"rate_limit":             {"rate limit", "too many requests", "quota"},
	"overloaded":             {"overloaded", "capacity", "unavailable"},
	"server_error":           {"server error", "internal error", "unavailable"},
	"model_not_found":        {"model not found", "unknown model", "no such model"},
	"max_output_tokens":      {"max tokens", "output token", "max output"},
}

// kindPhrases returns the words of Claude's error kinds, folded.
func kindPhrases(kinds []string) []string {
	var out []string
	for _, k := range kinds {
		for _, p := range claudeErrorKinds[k] {
			out = append(out, foldText(p))
		}
	}
	return out
}

// minMessage is the shortest folded candidate looked for: shorter pieces
// of a message say too little to count as the message.
const minMessage = 8

// mainMessages returns the forms of an error message a caller may show,
// folded: the whole text; its first line; the message before an embedded
// JSON document or a trailing ", url: ..."; the text inside "[API Error:
// ...]"; and the innermost "message" strings of a JSON document inside it
// (an HTTP error body a library unwraps). maxTurns adds the phrases a
// turn limit is shown by.
func mainMessages(msg string, maxTurns bool) []string {
	var out []string
	add := func(s string) {
		s = foldText(s)
		if len(s) >= minMessage && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	var walk func(s string, depth int)
	walk = func(s string, depth int) {
		if depth > 4 {
			return
		}
		s = strings.TrimSpace(s)
		add(s)
		first, _, _ := strings.Cut(s, "\n")
		add(first)
		if inner, ok := strings.CutPrefix(first, "[API Error: "); ok {
			walk(strings.TrimSuffix(inner, "]"), depth+1)
		}
		if before, _, ok := strings.Cut(first, ", url: "); ok {
			add(before)
		}
		if j := strings.IndexAny(first, "{["); j > 0 {
			add(strings.TrimRight(first[:j], " :"))
		}
		for _, m := range innerMessages(s) {
			walk(m, depth+1)
		}
	}
	walk(msg, 0)
	if maxTurns {
		for _, p := range []string{"max turns", "maximum number of turns", "turn limit", "max session turns", "maximum session turns"} {
			add(p)
		}
	}
	return out
}

// innerMessages returns the innermost "message" strings of the first JSON
// object embedded in s ({"error":{"message":"..."}}).
func innerMessages(s string) []string {
	j := strings.IndexByte(s, '{')
	if j < 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(s[j:]))
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	var out []string
	var walk func(v any, depth int) bool
	walk = func(v any, depth int) bool {
		m, ok := v.(map[string]any)
		if !ok || depth > 16 {
			return false
		}
		deeper := false
		for _, c := range m {
			deeper = walk(c, depth+1) || deeper
		}
		if !deeper {
			if msg, ok := m["message"].(string); ok && msg != "" {
				out = append(out, msg)
				return true
			}
		}
		return deeper
	}
	walk(v, 0)
	return out
}

// foldText makes text comparable however a library formats it: lower
// case, every run of characters other than letters and digits one space.
func foldText(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
