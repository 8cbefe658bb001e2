// Package validate checks captured JSONL streams (a real CLI's stdout or
// stdin, a recorded transcript of both, or an adapter's unified or shim
// output) line by line: framing and JSON (package jsonl), the schema of the
// stream's dialect and profile (package schemas), and ordering and ID
// pairing (package sequence). It streams input of any size in constant
// memory and uses every core for the per-line work.
package validate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/sequence"
)

// Options configure one validation.
type Options struct {
	// Dialect forces the stream's dialect; "" detects it from the first events.
	Dialect schemas.Dialect
	// Profile picks the schemas; "" means observed for native streams and the
	// dialect's own contract for unified and shim streams.
	Profile schemas.Profile
	// CLIVersion picks the observed schema version; "" takes it from the
	// stream (Claude's system/init, a transcript's header) or the newest.
	CLIVersion string
	// Strict makes SHOULD and drift findings violations.
	Strict bool
	// MaxLineBytes is the longest line read; longer lines are reported and
	// skipped. 0 means jsonl.DefaultMaxLineBytes.
	MaxLineBytes int64
	// Jobs is the number of goroutines doing per-line work; 0 means GOMAXPROCS.
	Jobs int
	// Schemas is where schema files come from; nil means the embedded ones.
	Schemas *schemas.Set
}

// Reporter receives every finding that is printed per line: violations and
// warnings (notes, such as drift outside --strict, are only summarised).
type Reporter func(f finding.Finding, sev finding.Severity)

// Result summarises the validation of one stream.
type Result struct {
	// Name is the file name findings carry ("" for stdin).
	Name string `json:"file"`
	// Dialect is the stream's dialect, detected or forced; "" if unknown.
	Dialect schemas.Dialect `json:"dialect,omitempty"`
	// Profile is the profile the stream was judged by.
	Profile schemas.Profile `json:"profile,omitempty"`
	// SchemaFile is the schema used for the stream's lines (its stdout side,
	// for transcripts); SchemaVersion the CLI version that file describes.
	SchemaFile    string `json:"schema,omitempty"`
	SchemaVersion string `json:"schema_version,omitempty"`
	// CLIVersion is the CLI version the stream declares, if it does.
	CLIVersion string `json:"cli_version,omitempty"`
	// Transcript is true for a recorded transcript of both directions.
	Transcript bool `json:"transcript,omitempty"`
	// Lines counts non-empty lines, Empty the skipped empty ones.
	Lines int   `json:"lines"`
	Empty int   `json:"empty_lines"`
	Bytes int64 `json:"bytes"`
	// Violations and Warnings count findings by severity.
	Violations int `json:"violations"`
	Warnings   int `json:"warnings"`
	// Counts is the number of findings per rule ID, all levels.
	Counts map[string]int `json:"counts"`
	// Rules holds every rule that has a count, for summaries.
	Rules map[string]*finding.Rule `json:"-"`
	// Drift lists what the schemas did not know, aggregated.
	Drift []*DriftEntry `json:"drift,omitempty"`
	// DriftOverflow counts drift occurrences that did not fit in Drift
	// (more than maxDriftEntries distinct names).
	DriftOverflow int `json:"drift_overflow,omitempty"`
	// OneSide names the side whose lines a log of a two-way JSON-RPC
	// session holds when it holds one only ("agent": an ACP agent's
	// stdout; "server": codex app-server's), "" otherwise; NotJudged are
	// then the ids of the rules that need the other side's lines, which
	// were not judged.
	OneSide   string   `json:"one_side,omitempty"`
	NotJudged []string `json:"not_judged,omitempty"`
}

// DriftEntry aggregates one unknown thing: how often, and where first.
type DriftEntry struct {
	Rule       *finding.Rule   `json:"-"`
	RuleID     string          `json:"rule"`
	Dialect    schemas.Dialect `json:"dialect"`
	CLIVersion string          `json:"cli_version"`
	// Name is the unknown type, subtype, field name or value.
	Name string `json:"name"`
	// Pointer is where it appeared, with array indexes replaced by "*".
	Pointer   string `json:"pointer"`
	Count     int    `json:"count"`
	FirstFile string `json:"first_file,omitempty"`
	FirstLine int    `json:"first_line"`
}

const (
	peekLines  = 64
	peekBytes  = 8 << 20
	batchLines = 256
	batchBytes = 256 << 10
	// arenaChunk is the unit a batch's line copies are allocated in: a
	// batch of short lines holds little more than it uses.
	arenaChunk = 64 << 10
	// maxInFlight bounds the batches read but not yet through the ordered
	// stage (being read, queued, worked on, or waiting for an earlier
	// one), whatever Jobs says: with their decoded events they are most
	// of the live heap.
	maxInFlight     = 12
	maxDriftEntries = 10000
)

// Stream validates one stream read from r. name is the file name findings
// carry ("" for stdin). It returns an error only for I/O failures and
// cancellation; everything wrong with the stream's content is a finding.
//
// Four kinds of input are told apart by their first line: a stream of
// events; a capture transcript of both directions ({"dir","t_ms","line"}
// records); an agentconform/v1 transcript, whose replayed stdout is
// validated along every path through its branches; and a log of a
// JSON-RPC session (an ACP agent's, codex app-server's; both directions,
// or the agent's or server's stdout alone), which package acp or
// appserver judges (rpclog.go).
//
// Cancelling ctx stops the reading: before every read, and, when r can
// take a read deadline (an *os.File on a pipe, FIFO or socket), also a
// read that is blocked. The Result then covers only what was read, and
// the error is the context's.
func Stream(ctx context.Context, r io.Reader, name string, opts Options, report Reporter) (*Result, error) {
	if report == nil {
		report = func(finding.Finding, finding.Severity) {}
	}
	if err := ctx.Err(); err != nil {
		return &Result{Name: name, Counts: map[string]int{}, Rules: map[string]*finding.Rule{}}, err
	}
	if d, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok {
		stop := context.AfterFunc(ctx, func() { d.SetReadDeadline(time.Now()) })
		defer stop()
	}
	r = &ctxReader{ctx: ctx, r: r}
	br := bufio.NewReaderSize(r, 64<<10)
	if sniffV1(br) {
		return streamV1(ctx, br, name, opts, report)
	}
	if opts.Dialect == "" {
		switch sniffRPCLog(br) {
		case logACP:
			return streamACPLog(ctx, br, name, opts, report)
		case logAppServer:
			return streamAppServerLog(ctx, br, name, opts, report)
		}
	}
	rd := jsonl.NewReader(br, jsonl.Options{MaxLineBytes: opts.MaxLineBytes, Context: ctx})
	res := &Result{Name: name, Counts: map[string]int{}, Rules: map[string]*finding.Rule{}}
	p := &pipe{opts: opts, name: name, res: res, report: report, drift: map[string]*DriftEntry{}}

	peeked, readErr := p.peek(ctx, rd)
	p.setup(peeked)
	err := p.run(ctx, rd, peeked, readErr)
	st := rd.Stats()
	res.Lines, res.Empty, res.Bytes = st.Lines, st.Empty, st.Bytes
	return res, err
}

// Lines validates lines already in memory exactly as Stream validates
// them joined with "\n" (the same line numbers, offsets, findings and
// result), without copying them, as the conformance runner validates an
// adapter's events: the lines must not change until Lines returns. A
// line that holds a "\n", or a first line that opens a transcript, is
// validated through Stream.
func Lines(ctx context.Context, lines [][]byte, name string, opts Options, report Reporter) (*Result, error) {
	return LinesDecoded(ctx, lines, nil, name, opts, report)
}

// Decoded is what jsonl.Parse returned for one line (with any
// ParseOptions but MaxDepth: the values do not depend on ShareMin): its
// object and its findings, not yet located.
type Decoded struct {
	Obj      map[string]any
	Findings []finding.Finding
}

// LinesDecoded is Lines for lines the caller has decoded already:
// decoded[i], when i < len(decoded), is jsonl.Parse's result for
// lines[i], which the validation takes instead of decoding the line once
// more (a line it would cut differently, one with a BOM or a trailing
// "\r", it decodes itself). The result is Lines' exactly. Neither the
// objects nor the findings are changed.
func LinesDecoded(ctx context.Context, lines [][]byte, decoded []Decoded, name string, opts Options, report Reporter) (*Result, error) {
	joined := false
	for _, l := range lines {
		joined = joined || bytes.IndexByte(l, '\n') >= 0
	}
	if joined || len(lines) > 0 && len(lines[0]) < 64<<10 && isV1(lines[0]) {
		return Stream(ctx, &joinedLines{lines: lines}, name, opts, report)
	}
	if report == nil {
		report = func(finding.Finding, finding.Severity) {}
	}
	res := &Result{Name: name, Counts: map[string]int{}, Rules: map[string]*finding.Rule{}}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	src := newMemLines(lines, opts.MaxLineBytes)
	p := &pipe{opts: opts, name: name, res: res, report: report, drift: map[string]*DriftEntry{}, owned: true, lines: lines, decoded: decoded}
	peeked, readErr := p.peek(ctx, src)
	p.setup(peeked)
	err := p.run(ctx, src, peeked, readErr)
	st := src.Stats()
	res.Lines, res.Empty, res.Bytes = st.Lines, st.Empty, st.Bytes
	return res, err
}

// lineSource is where the pipe's lines come from: a jsonl.Reader, or
// lines in memory (memLines).
type lineSource interface {
	Next() (jsonl.Line, error)
	Stats() jsonl.Stats
}

// memLines gives lines in memory as a jsonl.Reader cuts them out of the
// same lines joined with "\n": a BOM on line 1 and a trailing "\r" taken
// off, empty lines counted and skipped, lines over the limit reported
// without their bytes.
type memLines struct {
	lines [][]byte
	max   int64
	n     int
	off   int64
	stats jsonl.Stats
}

func newMemLines(lines [][]byte, max int64) *memLines {
	if max <= 0 {
		max = jsonl.DefaultMaxLineBytes
	}
	return &memLines{lines: lines, max: max}
}

func (m *memLines) Stats() jsonl.Stats { return m.stats }

func (m *memLines) Next() (jsonl.Line, error) {
	for m.n < len(m.lines) {
		raw := m.lines[m.n]
		l := jsonl.Line{Number: m.n + 1, Offset: m.off, Limit: m.max}
		m.n++
		m.off += int64(len(raw)) + 1
		m.stats.Bytes += int64(len(raw)) + 1
		if l.Number == 1 && bytes.HasPrefix(raw, utf8BOM) {
			raw = raw[len(utf8BOM):]
			l.BOM = true
		}
		if len(raw) > 0 && raw[len(raw)-1] == '\r' {
			raw = raw[:len(raw)-1]
			l.CR = true
		}
		l.Len = int64(len(raw))
		if len(raw) == 0 && !l.BOM {
			m.stats.Empty++
			continue
		}
		m.stats.Lines++
		if l.Len > m.max {
			l.TooLong = true
			m.stats.TooLong++
		} else {
			l.Bytes = raw[:len(raw):len(raw)]
		}
		return l, nil
	}
	return jsonl.Line{}, io.EOF
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// joinedLines reads lines, each followed by "\n", without joining them
// in a copy of their own.
type joinedLines struct {
	lines [][]byte
	off   int // bytes of lines[0] read; len(lines[0]) means its "\n" is next
}

func (j *joinedLines) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(j.lines) > 0 {
		l := j.lines[0]
		if j.off < len(l) {
			c := copy(p[n:], l[j.off:])
			n += c
			j.off += c
			continue
		}
		p[n] = '\n'
		n++
		j.lines, j.off = j.lines[1:], 0
	}
	if n == 0 && len(j.lines) == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// ctxReader stops reading once ctx is done, and then reports the
// context's error rather than the error of a read it cut short. It reads
// at most maxRead bytes at a time: the line reader's buffer may be far
// bigger than the line it holds (it grows in big steps), and a read that
// filled all of it would make every page of it resident.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

const maxRead = 256 << 10

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if len(p) > maxRead {
		p = p[:maxRead]
	}
	n, err := c.r.Read(p)
	if err != nil && c.ctx.Err() != nil {
		err = c.ctx.Err()
	}
	return n, err
}

// lineRec is one line as read, owned by its batch.
type lineRec struct {
	line     jsonl.Line // Bytes points into the batch arena
	framing  []finding.Finding
	peekObj  map[string]any // decoded during peek, reused by the worker
	peekDone bool
	peekFind []finding.Finding
}

type batch struct {
	seq   int
	lines []lineRec
	outs  []lineOut
	// slots is how many in-flight slots the batch holds: one per
	// batchBytes of line copies (a batch of long lines weighs more).
	slots int
}

// lineOut is what the per-line work hands the ordered stage.
type lineOut struct {
	findings []finding.Finding
	drift    []schemas.Drift
	known    bool
	obj      map[string]any
	dir      sequence.Direction
	meta     bool
}

type pipe struct {
	opts   Options
	name   string
	res    *Result
	report Reporter

	transcript   bool
	outV, inV    *schemas.Validator
	outR, inR    *schemaRules
	checker      sequence.Checker
	parseOpts    jsonl.ParseOptions
	drift        map[string]*DriftEntry
	stdinIsJSONL bool
	owned        bool      // the lines are the caller's, not copies (Lines)
	lines        [][]byte  // the caller's lines (Lines)
	decoded      []Decoded // their objects, decoded already (LinesDecoded)
	events       int       // events seen (decoded objects fed to the checks)
	known        int       // events of a type the schema knows
}

// peek reads the first lines, so the dialect and version can be told before
// the parallel work starts. The lines are kept (copied) and processed first.
func (p *pipe) peek(ctx context.Context, rd lineSource) ([]lineRec, error) {
	var recs []lineRec
	total := 0
	for len(recs) < peekLines && total < peekBytes {
		if err := ctx.Err(); err != nil {
			return recs, err
		}
		l, err := rd.Next()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
		rec := lineRec{line: l, framing: jsonl.FramingFindings(l)}
		if !p.owned {
			rec.line.Bytes = append([]byte(nil), l.Bytes...)
		}
		total += len(l.Bytes)
		recs = append(recs, rec)
	}
	return recs, nil
}

// setup decides transcript mode, dialect, profile, version and validators.
func (p *pipe) setup(peeked []lineRec) {
	var objs []map[string]any
	for i := range peeked {
		rec := &peeked[i]
		if rec.line.TooLong {
			continue
		}
		rec.peekObj, rec.peekFind = p.parse(rec.line)
		rec.peekDone = true
		if rec.peekObj != nil {
			objs = append(objs, rec.peekObj)
		}
	}
	res := p.res
	events := objs
	cliHint := ""
	if len(objs) > 0 && isTranscriptRecord(objs[0]) {
		p.transcript = true
		res.Transcript = true
		events = nil
		for _, o := range objs {
			dir, _ := o["dir"].(string)
			switch dir {
			case "meta":
				if v, ok := o["cli_version"].(string); ok && res.CLIVersion == "" {
					res.CLIVersion = v
				}
				if c, ok := o["cli"].(string); ok {
					cliHint = c
				}
			case "out":
				if s, ok := o["line"].(string); ok {
					if ev, _ := jsonl.Parse([]byte(s), p.parseOpts); ev != nil {
						events = append(events, ev)
					}
				}
			}
		}
	}
	d := p.opts.Dialect
	if d == "" {
		if dd, err := schemas.ParseDialect(cliHint); err == nil && p.transcript {
			d = dd
		} else if dd, ok := schemas.Detect(events); ok {
			d = dd
		}
	}
	if p.transcript && d == schemas.ClaudeStdin {
		d = schemas.Claude
	}
	res.Dialect = d
	if d == "" {
		p.emit(finding.Finding{Rule: RuleUnknownDialect, File: p.name,
			Message:  "no event in the first lines identifies the stream's dialect; only framing and JSON were checked (pass --dialect to choose one)",
			Expected: "events of claude, codex, gemini, unified or shim"})
		return
	}
	if res.CLIVersion == "" && d == schemas.Claude {
		for _, ev := range events {
			if v, ok := ev["claude_code_version"].(string); ok {
				res.CLIVersion = v
				break
			}
		}
	}
	prof := p.opts.Profile
	if prof == "" {
		switch d {
		case schemas.UnifiedEvents:
			prof = schemas.Unified
		case schemas.ShimEvents:
			prof = schemas.Shim
		default:
			prof = schemas.Observed
		}
	}
	res.Profile = prof
	version := p.opts.CLIVersion
	if version == "" {
		version = res.CLIVersion
	}
	set := p.opts.Schemas
	if set == nil {
		set = defaultSet
	}
	p.outV, p.outR = p.load(set, prof, d, version)
	if p.outV != nil {
		res.SchemaFile, res.SchemaVersion = p.outV.File, p.outV.Version
	}
	if p.transcript && d == schemas.Claude {
		p.stdinIsJSONL = true
		p.inV, p.inR = p.load(set, prof, schemas.ClaudeStdin, version)
	}
	c, err := sequence.New(string(d), sequence.Options{Both: p.transcript})
	if err == nil {
		p.checker = c
	}
}

var defaultSet = schemas.NewSet(schemas.FS())

func (p *pipe) load(set *schemas.Set, prof schemas.Profile, d schemas.Dialect, version string) (*schemas.Validator, *schemaRules) {
	rules := newSchemaRules(prof, d)
	v, err := set.Load(prof, d, version)
	if err != nil {
		msg := err.Error()
		if !errors.Is(err, schemas.ErrNoSchema) {
			msg = "the schema could not be loaded: " + msg
		}
		p.emit(finding.Finding{Rule: RuleNoSchema, File: p.name, Message: msg + "; only framing, JSON and sequence rules were checked"})
		return nil, rules
	}
	return v, rules
}

func isTranscriptRecord(o map[string]any) bool {
	_, dir := o["dir"].(string)
	_, t := o["t_ms"]
	return dir && t
}

// run feeds the peeked lines and the rest of the input through the workers
// and the ordered stage.
func (p *pipe) run(ctx context.Context, rd lineSource, peeked []lineRec, readErr error) error {
	jobs := p.opts.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	// Few batches in flight keep the live heap (and so the GC's target and
	// the peak RSS) small: two per worker, at most maxInFlight in all. The
	// reader takes a slot for each batchBytes of each batch it sends (all
	// of them for a batch bigger than that: it then runs alone), and the
	// ordered stage gives them back once the batch is through, so neither
	// the queues nor the batches waiting for an earlier one to finish can
	// grow with the input, its line lengths or Jobs.
	slots := make(chan struct{}, min(max(2*jobs, 2), maxInFlight))
	work := make(chan *batch, jobs)
	done := make(chan *batch, jobs)
	var wg sync.WaitGroup
	for i := 0; i < jobs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				b.outs = make([]lineOut, len(b.lines))
				for i := range b.lines {
					p.process(&b.lines[i], &b.outs[i])
				}
				done <- b
			}
		}()
	}
	errc := make(chan error, 1)
	go func() {
		defer close(work)
		errc <- p.read(ctx, rd, peeked, readErr, work, slots)
	}()
	go func() {
		wg.Wait()
		close(done)
	}()

	pending := map[int]*batch{}
	next := 0
	for b := range done {
		pending[b.seq] = b
		for {
			nb, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			p.ordered(nb)
			for range nb.slots {
				<-slots
			}
		}
	}
	err := <-errc
	if err != nil {
		return err
	}
	if p.checker != nil {
		p.checker.End(p.emit)
	}
	if p.outV != nil && p.events > 0 && p.known == 0 {
		p.emit(finding.Finding{Rule: RuleNoKnownEvents, File: p.name,
			Message:  fmt.Sprintf("none of the %d events is of a type the %s schema (%s) knows; is this a %s stream?", p.events, p.res.Dialect, p.outV.File, p.res.Dialect),
			Expected: "events of types " + strings.Join(p.outV.Types(), ", ")})
	}
	return nil
}

// read splits the input into batches whose lines are copied into one arena
// each, so workers own what they decode.
func (p *pipe) read(ctx context.Context, rd lineSource, peeked []lineRec, readErr error, work chan<- *batch, slots chan struct{}) error {
	seq := 0
	cur := &batch{seq: seq}
	var arena []byte
	size := 0 // bytes of line copies in cur
	flush := func() {
		if len(cur.lines) == 0 {
			return
		}
		cur.slots = min(max(1, (size+batchBytes-1)/batchBytes), cap(slots))
		for range cur.slots {
			slots <- struct{}{}
		}
		work <- cur
		seq++
		cur = &batch{seq: seq}
		arena = nil
		size = 0
	}
	for _, rec := range peeked {
		cur.lines = append(cur.lines, rec)
		if len(cur.lines) >= batchLines {
			flush()
		}
	}
	if readErr != nil {
		flush()
		return readErr
	}
	for {
		if err := ctx.Err(); err != nil {
			flush()
			return err
		}
		l, err := rd.Next()
		if err == io.EOF {
			flush()
			return nil
		}
		if err != nil {
			flush()
			return fmt.Errorf("reading %s: %w", displayName(p.name), err)
		}
		cur.lines = append(cur.lines, p.copyLine(l, &arena))
		size += len(l.Bytes)
		if len(cur.lines) >= batchLines || size >= batchBytes {
			flush()
		}
	}
}

func (p *pipe) copyLine(l jsonl.Line, arena *[]byte) lineRec {
	if p.owned {
		return lineRec{line: l, framing: jsonl.FramingFindings(l)}
	}
	if cap(*arena)-len(*arena) < len(l.Bytes) {
		*arena = make([]byte, 0, max(arenaChunk, len(l.Bytes)))
	}
	start := len(*arena)
	*arena = append(*arena, l.Bytes...)
	rec := lineRec{line: l, framing: jsonl.FramingFindings(l)}
	rec.line.Bytes = (*arena)[start:len(*arena):len(*arena)]
	return rec
}

func displayName(name string) string {
	if name == "" {
		return "<stdin>"
	}
	return name
}

// process does the per-line work: JSON, transcript unwrapping, schema.
func (p *pipe) process(rec *lineRec, out *lineOut) {
	l := rec.line
	out.findings = append(out.findings, rec.framing...)
	for i := range out.findings {
		out.findings[i].File = p.name
	}
	if l.TooLong {
		return
	}
	obj, fs := rec.peekObj, rec.peekFind
	if !rec.peekDone {
		obj, fs = p.parse(l)
	}
	jsonl.Locate(fs, p.name, l)
	out.findings = append(out.findings, fs...)
	if obj == nil {
		return
	}
	v, rules := p.outV, p.outR
	if p.transcript {
		var ok bool
		obj, v, rules, ok = p.unwrap(obj, l, out)
		if !ok {
			return
		}
	}
	out.obj = obj
	if v == nil {
		return
	}
	r := v.Validate(obj)
	for _, pr := range r.Problems {
		msg := pr.Message
		if r.Kind != "" {
			msg = r.Kind + ": " + msg
		}
		if p.transcript {
			msg = dirLabel(out.dir) + " " + msg
		}
		out.findings = append(out.findings, finding.Finding{Rule: rules.schema, File: p.name, Line: l.Number, Offset: l.Offset,
			Pointer: pr.Pointer, Message: msg, Expected: pr.Expected, Actual: pr.Actual})
	}
	out.drift = r.Drift
	out.known = r.Kind != ""
}

// parse decodes line l, or takes its decoding from p.decoded. The
// findings are the caller's to locate.
func (p *pipe) parse(l jsonl.Line) (map[string]any, []finding.Finding) {
	if i := l.Number - 1; p.owned && i < len(p.decoded) && len(l.Bytes) == len(p.lines[i]) {
		// The line is lines[i] whole (memLines numbers lines by their
		// index and took nothing off this one).
		d := p.decoded[i]
		return d.Obj, slices.Clone(d.Findings)
	}
	opts := p.parseOpts
	switch {
	case p.owned:
		// The caller's lines stay as they are (Lines): strings can
		// stay in them.
		opts.ShareMin = 1
	case len(l.Bytes) > arenaChunk:
		// The line has its copy to itself (copyLine): its long
		// strings can stay in it rather than be copied once more.
		opts.ShareMin = arenaChunk
	}
	return jsonl.Parse(l.Bytes, opts)
}

func dirLabel(d sequence.Direction) string {
	if d == sequence.In {
		return "(stdin)"
	}
	return "(stdout)"
}

// unwrap turns a transcript record into the event it carries.
func (p *pipe) unwrap(rec map[string]any, l jsonl.Line, out *lineOut) (map[string]any, *schemas.Validator, *schemaRules, bool) {
	bad := func(msg string) {
		out.findings = append(out.findings, finding.Finding{Rule: RuleTranscriptLine, File: p.name, Line: l.Number, Offset: l.Offset, Message: msg})
	}
	dir, _ := rec["dir"].(string)
	switch dir {
	case "meta":
		out.meta = true
		return nil, nil, nil, false
	case "err":
		if _, ok := rec["line"].(string); !ok {
			bad(`a transcript "err" record must carry the stderr line as a string in "line"`)
		}
		return nil, nil, nil, false
	case "in", "out":
	default:
		bad(fmt.Sprintf(`transcript record has dir %s; expected "in", "out", "err" or "meta"`, strconv.Quote(dir)))
		return nil, nil, nil, false
	}
	s, ok := rec["line"].(string)
	if !ok {
		bad(`a transcript "` + dir + `" record must carry the raw line as a string in "line"`)
		return nil, nil, nil, false
	}
	if dir == "in" {
		out.dir = sequence.In
		if !p.stdinIsJSONL {
			return nil, nil, nil, false
		}
	}
	ev, fs := jsonl.Parse([]byte(s), p.parseOpts)
	for _, f := range fs {
		f.File, f.Line, f.Offset = p.name, l.Number, l.Offset
		if f.Column > 0 {
			f.Message += " (byte " + strconv.Itoa(f.Column) + " of the recorded line)"
			f.Column = 0
		}
		f.Message = dirLabel(out.dir) + " " + f.Message
		out.findings = append(out.findings, f)
	}
	if ev == nil {
		return nil, nil, nil, false
	}
	if dir == "in" {
		return ev, p.inV, p.inR, true
	}
	return ev, p.outV, p.outR, true
}

// ordered runs in one goroutine, in line order: it counts and reports
// findings, aggregates drift and feeds the sequence checker.
func (p *pipe) ordered(b *batch) {
	for i := range b.lines {
		rec, out := &b.lines[i], &b.outs[i]
		for _, f := range out.findings {
			p.emit(f)
		}
		for _, d := range out.drift {
			rules := p.outR
			if out.dir == sequence.In && p.inR != nil {
				rules = p.inR
			}
			p.addDrift(rules, d, rec.line)
		}
		if out.obj != nil {
			p.events++
			if out.known {
				p.known++
			}
		}
		if out.obj != nil && p.checker != nil {
			p.checker.Observe(sequence.Event{Line: rec.line.Number, Offset: rec.line.Offset, Len: rec.line.Len, Dir: out.dir, Obj: out.obj}, p.emit)
		}
		b.lines[i] = lineRec{}
		b.outs[i] = lineOut{}
	}
}

// emit counts a finding and reports it unless it is only a note.
func (p *pipe) emit(f finding.Finding) {
	if f.File == "" {
		f.File = p.name
	}
	if f.Rule == nil {
		return
	}
	p.res.Counts[f.Rule.ID]++
	p.res.Rules[f.Rule.ID] = f.Rule
	switch sev := finding.SeverityOf(f.Rule.Level, p.opts.Strict); sev {
	case finding.Violation:
		p.res.Violations++
		p.report(f, sev)
	case finding.Warning:
		p.res.Warnings++
		p.report(f, sev)
	}
}

func (p *pipe) addDrift(rules *schemaRules, d schemas.Drift, l jsonl.Line) {
	rule := rules.byKind[d.Kind]
	if rule == nil {
		return
	}
	pattern := indexPattern(d.Pointer)
	if p.opts.Strict {
		p.emit(finding.Finding{Rule: rule, File: p.name, Line: l.Number, Offset: l.Offset, Pointer: d.Pointer,
			Message: "the schema does not know this " + string(d.Kind) + ": " + d.Name})
	} else {
		p.res.Counts[rule.ID]++
		p.res.Rules[rule.ID] = rule
	}
	key := rule.ID + "\x00" + d.Name + "\x00" + pattern
	e, ok := p.drift[key]
	if !ok {
		if len(p.drift) >= maxDriftEntries {
			p.res.DriftOverflow++
			return
		}
		version := p.res.CLIVersion
		if version == "" {
			version = "(version not in stream)"
		}
		e = &DriftEntry{Rule: rule, RuleID: rule.ID, Dialect: p.res.Dialect, CLIVersion: version, Name: d.Name, Pointer: pattern,
			FirstFile: p.name, FirstLine: l.Number}
		p.drift[key] = e
		p.res.Drift = append(p.res.Drift, e)
	}
	e.Count++
}

// indexPattern replaces array indexes in a pointer with "*", so drift in
// the third content block and in the first is one entry.
func indexPattern(ptr string) string {
	if ptr == "" {
		return ptr
	}
	toks := strings.Split(ptr[1:], "/")
	for i, t := range toks {
		if _, err := strconv.Atoi(t); err == nil {
			toks[i] = "*"
		}
	}
	return "/" + strings.Join(toks, "/")
}
