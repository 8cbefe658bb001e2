package validate

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/appserver"
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/transcript"
)

// maxPaths bounds how many paths through one process part of a transcript
// are validated; a transcript with more branches than that is reported.
const maxPaths = 64

// RuleTranscriptPaths records that a transcript had more paths than are
// validated.
var RuleTranscriptPaths = &finding.Rule{ID: "transcript/paths", Level: finding.Info,
	Source:      srcTranscripts,
	Requirement: "Every path through a transcript's branches is validated, up to 64 per process."}

// isV1 reports whether the first line of a stream is an agentconform/v1
// transcript header.
func isV1(first []byte) bool {
	return bytes.Contains(first, []byte(`"transcript"`)) && bytes.Contains(first, []byte(transcript.Format))
}

// streamV1 validates an agentconform/v1 transcript: what the fake would
// write to stdout along every path through each process part (cases and
// gotos followed, templates filled with placeholders) is validated as its
// CLI's stream, and findings point at the transcript's own lines.
// Transcripts are loaded whole; they are recordings of single sessions.
func streamV1(ctx context.Context, r io.Reader, name string, opts Options, report Reporter) (*Result, error) {
	res := &Result{Name: name, Counts: map[string]int{}, Rules: map[string]*finding.Rule{}, Transcript: true}
	p := &pipe{opts: opts, name: name, res: res, report: report, drift: map[string]*DriftEntry{}}
	cr := &countReader{r: r}
	t, err := transcript.Load(cr, name, transcript.Options{MaxLineBytes: opts.MaxLineBytes})
	res.Bytes = cr.n
	if err != nil {
		es, ok := transcript.IsErrors(err)
		if !ok {
			return res, err
		}
		for _, e := range es {
			p.emit(finding.Finding{Rule: RuleTranscriptLine, File: name, Line: e.Line, Offset: e.Offset, Pointer: e.Pointer, Message: e.Msg})
		}
		return res, nil
	}
	if acp.IsTranscript(t) && opts.Dialect == "" {
		return res, validateACPTranscript(t, opts, res, p.emit)
	}
	if appserver.IsTranscript(t) {
		return appServerV1(t, name, opts, p, res)
	}
	d, derr := schemas.ParseDialect(t.Header.CLI)
	if opts.Dialect != "" {
		d, derr = opts.Dialect, nil
	}
	if derr != nil {
		p.emit(finding.Finding{Rule: RuleUnknownDialect, File: name, Line: 1, Message: derr.Error()})
		return res, nil
	}
	res.CLIVersion = t.Header.CLIVersion
	sub := opts
	sub.Dialect = d
	if sub.CLIVersion == "" {
		sub.CLIVersion = t.Header.CLIVersion
	}
	seen := map[string]bool{}
	for pi, steps := range t.Processes() {
		paths, truncated := outPaths(steps)
		if truncated {
			p.emit(finding.Finding{Rule: RuleTranscriptPaths, File: name, Line: steps[0].Line,
				Message: fmt.Sprintf("process %d has more than %d paths through its branches; the first %d were validated", pi+1, maxPaths, maxPaths)})
		}
		for _, op := range paths {
			path := op.out
			var buf bytes.Buffer
			for _, s := range path {
				buf.WriteString(placeholders.Fill(s.Text))
				if !s.NoNewline {
					buf.WriteByte('\n')
				}
			}
			remap := func(f finding.Finding, sev finding.Severity) {
				if op.signal && strings.HasSuffix(f.Rule.ID, "/stream/truncated") {
					return // a signal may end the stream mid-turn: that is what the branch records
				}
				f.File = name
				if f.Line > 0 && f.Line <= len(path) {
					s := path[f.Line-1]
					f.Line, f.Offset = s.Line, s.Offset
					if f.Column > 0 {
						f.Message += " (byte " + strconv.Itoa(f.Column) + " of the replayed line)"
						f.Column = 0
					}
				} else if len(path) > 0 {
					last := path[len(path)-1]
					f.Line, f.Offset = last.Line, last.Offset
				}
				key := f.Rule.ID + "\x00" + strconv.Itoa(f.Line) + "\x00" + f.Pointer + "\x00" + f.Message
				if seen[key] {
					return
				}
				seen[key] = true
				p.emit(f)
			}
			sr, err := Stream(ctx, &buf, name, sub, remap)
			if err != nil {
				return res, err
			}
			// Emit counted the violations and warnings; merge the rest.
			for id, n := range sr.Counts {
				rule := sr.Rules[id]
				if finding.SeverityOf(rule.Level, opts.Strict) == finding.Note {
					res.Counts[id] += n
					res.Rules[id] = rule
				}
			}
			for _, e := range sr.Drift {
				key := e.RuleID + "\x00" + e.Name + "\x00" + e.Pointer
				if old, ok := p.drift[key]; ok {
					old.Count += e.Count
					continue
				}
				if e.FirstLine > 0 && e.FirstLine <= len(path) {
					e.FirstLine = path[e.FirstLine-1].Line
				}
				e.CLIVersion = t.Header.CLIVersion
				p.drift[key] = e
				res.Drift = append(res.Drift, e)
			}
			res.Dialect, res.Profile, res.SchemaFile, res.SchemaVersion = sr.Dialect, sr.Profile, sr.SchemaFile, sr.SchemaVersion
		}
	}
	res.Lines = len(t.Steps) + 1
	sort.SliceStable(res.Drift, func(i, j int) bool { return res.Drift[i].FirstLine < res.Drift[j].FirstLine })
	return res, nil
}

// placeholders fill the {{name}} templates of a transcript's out lines, so
// that templated ids are still strings of a realistic shape.
var placeholders = templateFiller{}

type templateFiller struct{}

// Fill replaces every {{name}} with "tmpl_name".
func (templateFiller) Fill(s string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		j := strings.Index(s[max(i, 0):], "}}")
		if i < 0 || j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString("tmpl_" + s[i+2:i+j])
		s = s[i+j+2:]
	}
}

// outPath is the out steps of one path through a process part; signal
// says the path took an on_signal branch (what the CLI wrote once
// signalled).
type outPath struct {
	out    []transcript.Step
	signal bool
}

// outPaths lists the out steps along every path through one process part:
// an "in" step with cases, and a delay with cases, continue at each case's
// label and also fall through; an on_signal goto continues at its label
// too (the signal coming right then, as the captures take it: while a
// tool runs); goto jumps; a path ends at exit or exit_signal, or when it
// would revisit a step (a loop). It reports whether paths were cut at
// maxPaths.
func outPaths(steps []transcript.Step) ([]outPath, bool) {
	labels := transcript.Labels(steps)
	var paths []outPath
	truncated := false
	type state struct {
		at      int
		out     []transcript.Step
		visited map[int]bool
		signal  bool
	}
	fork := func(stack []state, st state, label string, signal bool) []state {
		return append(stack, state{at: labels[label], out: append([]transcript.Step(nil), st.out...), visited: copySet(st.visited), signal: st.signal || signal})
	}
	stack := []state{{at: 0, visited: map[int]bool{}}}
	for len(stack) > 0 {
		st := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for st.at < len(steps) {
			if st.visited[st.at] {
				break
			}
			st.visited[st.at] = true
			s := steps[st.at]
			if s.Op == transcript.OpOut {
				st.out = append(st.out, s)
			}
			if s.Op == transcript.OpExit || s.Op == transcript.OpExitSignal {
				break
			}
			if s.Op == transcript.OpGoto {
				st.at = labels[s.Label]
				continue
			}
			var targets []string
			signal := false
			switch s.Op {
			case transcript.OpIn, transcript.OpDelay:
				for _, c := range s.Cases {
					targets = append(targets, c.Goto)
				}
			case transcript.OpOnSignal:
				signal = true
				for _, sig := range sortedKeys(s.OnSignal) {
					if to, ok := strings.CutPrefix(s.OnSignal[sig], "goto:"); ok {
						targets = append(targets, to)
					}
				}
			}
			for _, to := range targets {
				if len(paths)+len(stack) >= maxPaths {
					truncated = true
					break
				}
				stack = fork(stack, st, to, signal)
			}
			st.at++
		}
		if len(paths) >= maxPaths {
			truncated = true
			break
		}
		paths = append(paths, outPath{out: st.out, signal: st.signal})
	}
	return paths, truncated
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func copySet(m map[int]bool) map[int]bool {
	c := make(map[int]bool, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// sniffV1 peeks at the first line of br without consuming it.
func sniffV1(br *bufio.Reader) bool {
	for n := 256; n <= 64<<10; n *= 4 {
		b, err := br.Peek(n)
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return isV1(b[:i])
		}
		if err != nil {
			return isV1(b)
		}
	}
	return false
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
