package reports

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/conformance"
)

// Problem is one check failing for the same reason across cases of one
// run: the unit the summaries lead with, so that one bug that fails a
// check in 99 cases reads as one line with 99 cases, not as 99 failures.
// The reason is the failure's Actual with what differs from case to case
// normalised away (Reason); failures that follow from another failure of
// the same case (Consequences) are listed under it, not beside it.
// Grouping is presentation only: every failure is still in the run's
// cases and counted by its gate.
type Problem struct {
	// Check is the failing check's ID.
	Check string `json:"check"`
	// Verdict is its verdict (FAIL, CRASH, TIMEOUT; NON-STRICT in a
	// strict run).
	Verdict conformance.Verdict `json:"verdict"`
	// Reason is the normalised Actual the failures share.
	Reason string `json:"reason"`
	// Cases are the cases the check fails in for this reason, by ID.
	Cases []string `json:"cases"`
	// Expected are those of Cases whose failure the baseline expects.
	Expected []string `json:"expected,omitempty"`
	// Example is the case whose expected, actual and reproduce command
	// the reports show: the simplest of the cases with a new failure (of
	// all the cases, when the baseline expects every one; see better).
	Example string `json:"example"`
	// Reproduce is the command that reruns Example.
	Reproduce string `json:"reproduce"`
	// Follows are the failures that follow from this one in its cases.
	Follows []Consequence `json:"follows,omitempty"`

	example *conformance.CaseResult
	result  conformance.CheckResult
}

// Consequence is one check failing as a consequence of a problem, in some
// of the problem's cases (the package documentation says which follow
// from which).
type Consequence struct {
	// Check is the check that fails as a consequence.
	Check string `json:"check"`
	// Cases are the cases it fails in, by ID (a subset of the problem's).
	Cases []string `json:"cases"`
	// Why says how it follows.
	Why string `json:"why"`
}

// New counts the problem's cases whose failure the baseline does not
// expect.
func (p *Problem) New() int { return len(p.Cases) - len(p.Expected) }

// consequences are the "follows from" relation: a failure of a check
// named in Followers, in a case where Primary fails too, follows from that
// failure and is shown under its problem. It does so only when its
// reason never shows up without the primary: if the same check fails for
// the same reason (Reason) in a case where the primary passed, the
// primary did not cause it, and it stays a problem of its own in every
// case it fails in, so that a bug of its own is never hidden under
// another.
var consequences = []struct {
	// Primary is the check whose failure explains the others.
	Primary string
	// Followers are the checks whose failure it explains.
	Followers []string
	// Why says how, for the reports.
	Why string
}{
	// The terminal event carries the turn's usage (Claude's cost too), and
	// for a native adapter the final text comes just before it: a reader
	// that loses the tail of the stream loses them all
	// (docs/protocols/unified.md#ending).
	{Primary: "lifecycle/ending-delivered", Followers: []string{"lossless/usage", "lossless/text"},
		Why: "lost with the end of the turn"},
	// A turn the adapter gave up on as failed, though the CLI completed it
	// (a banner it could not parse, a retry notice taken for an error):
	// what the CLI wrote after that never reached the caller.
	{Primary: "lifecycle/reports-success", Followers: []string{"lossless/text", "lossless/tools", "lossless/usage"},
		Why: "lost when the adapter gave the turn up"},
}

var (
	// quoted is a double-quoted text, with escapes; a text clipped before
	// its closing quote runs to the end of the line.
	quoted = regexp.MustCompile(`"(?:[^"\\\n]|\\.)*(?:"|$)`)
	// pathLike is an absolute or rooted path ($WORK/x, ~/x, ./x, /x),
	// where a word begins.
	pathLike = regexp.MustCompile(`(^|[\s=(\[:,'])(?:\$[A-Za-z_]+|~|\.{1,2})?/[^\s"'(),;\]]+`)
	// uuid is a UUID (session and thread ids).
	uuid = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	// word is a run of letters, digits and underscores.
	word = regexp.MustCompile(`[A-Za-z0-9_]+`)
	// number is a number, with its decimals or version dots.
	number = regexp.MustCompile(`\d+(?:\.\d+)*`)
	// prompt is the runner's prompt of a case (conformance.Prompts), which
	// names the case's scenario.
	prompt = regexp.MustCompile(`Please do what the fixture \S+ shows\.|prompt \d+ of \S+`)
	// terminalEvent is the name a check gives the CLI's event that ends a
	// turn: which one it is (Claude and Gemini result, Codex turn.completed
	// or turn.failed) depends on the case's CLI, not on the failure.
	terminalEvent = regexp.MustCompile(`\bthe CLI's (?:result|turn\.completed|turn\.failed)\b`)
)

// maxReason bounds a reason: beyond it, two failures are not told apart.
const maxReason = 2000

// Reason is what a failure says with the parts that differ from case to
// case normalised away, so that the failures of one bug in different
// cases compare equal and those of different bugs do not. In each line of
// the check's Actual it replaces, in this order:
//
//   - the case's names: its ID (also with '_' for '/', as directory names
//     carry it), its fixture, and the runner's prompts, which name the
//     scenario, become <case> and <prompt>;
//   - quoted texts ("...", the CLI's text, an error message) become "…";
//   - paths (/x, $WORK/x, ~/x, ./x) become <path>;
//   - ids (UUIDs, and words of eight or more characters that mix letters
//     and digits: tool ids, hashes) become <id>;
//   - numbers (counts, sizes, pids, durations, versions) become N;
//   - the case's CLI (claude, codex, gemini, as its agent) becomes <cli>,
//     and the CLI's terminal event as checks name it ("the CLI's result",
//     "the CLI's turn.completed") becomes "the CLI's <terminal event>";
//
// then drops repeated lines (a multi-turn case says the same per turn).
// What is left is the check's own wording: what went wrong.
func Reason(c *conformance.CaseResult, k conformance.CheckResult) string {
	names := caseNames(c)
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(k.Actual, "\n") {
		n := normaliseLine(line, names, c.Agent)
		if seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	r := strings.Join(out, "\n")
	if len(r) > maxReason {
		r = clipText(r, maxReason)
	}
	return r
}

// caseNames are the spellings of a case's names, longest first.
func caseNames(c *conformance.CaseResult) []string {
	var names []string
	for _, n := range []string{c.ID, strings.ReplaceAll(c.ID, "/", "_"), c.Fixture, strings.ReplaceAll(c.Fixture, "/", "_")} {
		if n != "" && !containsString(names, n) {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	return names
}

func normaliseLine(s string, names []string, agent string) string {
	s = prompt.ReplaceAllString(s, "<prompt>")
	for _, n := range names {
		s = strings.ReplaceAll(s, n, "<case>")
	}
	s = quoted.ReplaceAllString(s, `"…"`)
	s = pathLike.ReplaceAllString(s, "$1<path>")
	s = uuid.ReplaceAllString(s, "<id>")
	s = word.ReplaceAllStringFunc(s, func(w string) string {
		if len(w) >= 8 && strings.ContainsAny(w, "0123456789") && strings.IndexFunc(w, isLetter) >= 0 {
			return "<id>"
		}
		return w
	})
	s = number.ReplaceAllString(s, "N")
	s = terminalEvent.ReplaceAllString(s, "the CLI's <terminal event>")
	for _, cli := range cliNames(agent) {
		s = replaceWord(s, cli, "<cli>")
	}
	return s
}

func isLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// cliNames are the names of the CLI an agent drives: the agent itself
// (gemini-acp) and its program (gemini).
func cliNames(agent string) []string {
	if agent == "" {
		return nil
	}
	names := []string{agent}
	if base, _, ok := strings.Cut(agent, "-"); ok {
		names = append(names, base)
	}
	return names
}

// replaceWord replaces w in s where it is a whole word (not part of a
// longer name of letters, digits, '_' or '-').
func replaceWord(s, w, with string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, w)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(w)
		if (i == 0 || !isNameByte(s[i-1])) && (end == len(s) || !isNameByte(s[end])) {
			b.WriteString(s[:i])
			b.WriteString(with)
		} else {
			b.WriteString(s[:end])
		}
		s = s[end:]
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// failureRef is one failing check of one case, with its Reason and the
// key of its problem (check, verdict, reason).
type failureRef struct {
	c           *conformance.CaseResult
	k           conformance.CheckResult
	reason, key string
}

// Problems groups the failures of a run (the verdicts its strictness
// fails) into problems: one per check, verdict and Reason, with the
// failures that follow from another in the same case (see the package
// documentation) under that one's problem. They are ordered by how many cases each
// touches, most first, then by check and reason.
func Problems(r *conformance.Results) []*Problem {
	strict := r.Meta.Strict
	failing := map[*conformance.CaseResult]map[string]int{} // case -> check -> index of its failure
	var all []failureRef
	byKey := map[string][]int{}
	for _, c := range r.Cases {
		for _, k := range c.Checks {
			if !k.Verdict.Failed(strict) {
				continue
			}
			if failing[c] == nil {
				failing[c] = map[string]int{}
			}
			reason := Reason(c, k)
			f := failureRef{c: c, k: k, reason: reason, key: k.Check + "\x00" + string(k.Verdict) + "\x00" + reason}
			failing[c][k.Check] = len(all)
			byKey[f.key] = append(byKey[f.key], len(all))
			all = append(all, f)
		}
	}
	// primaryOf is the failure a failure follows from, if any (-1).
	primaryOf := make([]int, len(all))
	why := make([]string, len(all))
	for i, f := range all {
		primaryOf[i] = -1
		for _, rel := range consequences {
			if !containsString(rel.Followers, f.k.Check) {
				continue
			}
			if p, ok := failing[f.c][rel.Primary]; ok {
				primaryOf[i], why[i] = p, rel.Why
				break
			}
		}
	}
	// A reason that also shows up without its primary is a problem of
	// its own, everywhere.
	for _, idx := range byKey {
		alone := false
		for _, i := range idx {
			alone = alone || primaryOf[i] < 0
		}
		if alone {
			for _, i := range idx {
				primaryOf[i] = -1
			}
		}
	}
	problems := map[string]*Problem{}
	owner := make([]*Problem, len(all))
	var order []*Problem
	own := func(i int) {
		f := all[i]
		p := problems[f.key]
		if p == nil {
			p = &Problem{Check: f.k.Check, Verdict: f.k.Verdict, Reason: f.reason}
			problems[f.key] = p
			order = append(order, p)
		}
		p.Cases = append(p.Cases, f.c.ID)
		if f.k.Baselined {
			p.Expected = append(p.Expected, f.c.ID)
		}
		owner[i] = p
		if better(f, p) {
			p.example, p.result = f.c, f.k
		}
	}
	for i := range all {
		if primaryOf[i] < 0 {
			own(i)
		}
	}
	// Consequences join the problem of their primary (following chains).
	for changed := true; changed; {
		changed = false
		for i, f := range all {
			if owner[i] != nil || owner[primaryOf[i]] == nil {
				continue
			}
			p := owner[primaryOf[i]]
			owner[i], changed = p, true
			var cons *Consequence
			for j := range p.Follows {
				if p.Follows[j].Check == f.k.Check {
					cons = &p.Follows[j]
				}
			}
			if cons == nil {
				p.Follows = append(p.Follows, Consequence{Check: f.k.Check, Why: why[i]})
				cons = &p.Follows[len(p.Follows)-1]
			}
			cons.Cases = append(cons.Cases, f.c.ID)
		}
	}
	// One whose chain never reaches a problem (a cycle) is a problem of
	// its own: no failure goes missing.
	for i := range all {
		if owner[i] == nil {
			own(i)
		}
	}
	for _, p := range order {
		p.Example, p.Reproduce = p.example.ID, p.example.Reproduce
		sort.Strings(p.Cases)
		sort.Strings(p.Expected)
		for j := range p.Follows {
			sort.Strings(p.Follows[j].Cases)
		}
		sort.SliceStable(p.Follows, func(i, j int) bool { return len(p.Follows[i].Cases) > len(p.Follows[j].Cases) })
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if len(a.Cases) != len(b.Cases) {
			return len(a.Cases) > len(b.Cases)
		}
		if a.Check != b.Check {
			return a.Check < b.Check
		}
		return a.Reason < b.Reason
	})
	return order
}

// better reports whether f makes a better example of p than the one it
// has: a new failure before one the baseline expects, then the simpler
// case (a scenario before its variants, which add faults or steps; then
// the shorter ID), then the first by ID. The choice depends on the cases
// alone, not on how long they took, so that the reports of two runs with
// the same failures show the same example.
func better(f failureRef, p *Problem) bool {
	e := p.example
	if e == nil {
		return true
	}
	if f.k.Baselined != p.result.Baselined {
		return !f.k.Baselined
	}
	if a, b := strings.Count(f.c.ID, "/"), strings.Count(e.ID, "/"); a != b {
		return a < b
	}
	if len(f.c.ID) != len(e.ID) {
		return len(f.c.ID) < len(e.ID)
	}
	return f.c.ID < e.ID
}

// newProblems are the problems of a run with a failure the baseline does
// not expect, ordered by how many such cases each has.
func newProblems(r *conformance.Results) []*Problem {
	var out []*Problem
	for _, p := range Problems(r) {
		if p.New() > 0 {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].New() > out[j].New() })
	return out
}

// newCases are the problem's cases whose failure the baseline does not
// expect.
func (p *Problem) newCases() []string {
	if len(p.Expected) == 0 {
		return p.Cases
	}
	var out []string
	for _, c := range p.Cases {
		if !containsString(p.Expected, c) {
			out = append(out, c)
		}
	}
	return out
}

// byAgent counts cases per CLI ("claude 33, codex 34"), when they are of
// more than one.
func byAgent(cases []string) string {
	counts := map[string]int{}
	var agents []string
	for _, c := range cases {
		a, _, _ := strings.Cut(c, "/")
		if counts[a] == 0 {
			agents = append(agents, a)
		}
		counts[a]++
	}
	if len(agents) < 2 {
		return ""
	}
	sort.Strings(agents)
	parts := make([]string, len(agents))
	for i, a := range agents {
		parts[i] = a + " " + strconv.Itoa(counts[a])
	}
	return strings.Join(parts, ", ")
}

// runProblem is a problem of one run, with the run's name in reports.
type runProblem struct {
	Column string
	*Problem
}

// allNewProblems are the new problems of every run of the matrix, the one
// with the most new cases first (of the same count, in run order).
func allNewProblems(m *matrix) []runProblem {
	var out []runProblem
	for i, r := range m.Runs {
		for _, p := range newProblems(r) {
			out = append(out, runProblem{Column: m.Columns[i], Problem: p})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].New() > out[j].New() })
	return out
}

// allExpectedProblems are the problems of every run of the matrix whose
// every failure the baseline expects, the one with the most cases first.
func allExpectedProblems(m *matrix) []runProblem {
	var out []runProblem
	for i, r := range m.Runs {
		for _, p := range Problems(r) {
			if p.New() == 0 {
				out = append(out, runProblem{Column: m.Columns[i], Problem: p})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].Cases) > len(out[j].Cases) })
	return out
}

// failureCount counts the failures a list of problems holds, as their
// checks and under them.
func failureCount(problems []runProblem) int {
	n := 0
	for _, p := range problems {
		n += len(p.Cases)
		for _, f := range p.Follows {
			n += len(f.Cases)
		}
	}
	return n
}
