package reports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/agentconform/agentconform/conformance"
)

// ResultsFormat names the version of the results document; it is written
// into every document and every NDJSON record set, and described by
// schemas/results/results.schema.json.
const ResultsFormat = "agentconform-results/1"

// Document is the results model: the runs of one or more adapters, each
// with its metadata (toolkit version, adapter, CLI versions of the
// fixtures, seed, shard), its cases (ID, verdict, duration, every check's
// verdict with requirement, expected and actual, the wire excerpt, the
// reproduce command) and its gate; written with each run's problems
// (Problems), which are derived from the cases and not read back.
// `agentconform run` writes it; every `agentconform report` subcommand
// reads it.
type Document struct {
	// Format is ResultsFormat (empty in documents written before it existed).
	Format string `json:"format,omitempty"`
	// Runs holds one entry per adapter run.
	Runs []*conformance.Results `json:"runs"`
}

// NewDocument returns a document holding runs.
func NewDocument(runs ...*conformance.Results) *Document {
	return &Document{Format: ResultsFormat, Runs: runs}
}

// runJSON is a run as the results document writes it: the run, and its
// failures grouped into problems (Problems), which readers compute again
// from the cases rather than trust.
type runJSON struct {
	*conformance.Results
	Problems []*Problem `json:"problems,omitempty"`
}

// WriteResultsJSON writes doc as one indented JSON document, each run
// with its problems.
func WriteResultsJSON(w io.Writer, doc *Document) error {
	d := struct {
		Format string    `json:"format,omitempty"`
		Runs   []runJSON `json:"runs"`
	}{Format: doc.Format, Runs: []runJSON{}}
	if d.Format == "" {
		d.Format = ResultsFormat
	}
	for _, r := range doc.Runs {
		d.Runs = append(d.Runs, runJSON{Results: r, Problems: Problems(r)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&d); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	return nil
}

// WriteResultsFile writes doc as JSON to path, creating its directory.
func WriteResultsFile(path string, doc *Document) error {
	return writeFile(path, func(w io.Writer) error { return WriteResultsJSON(w, doc) })
}

// writeFile writes path atomically (WriteFileAtomic); "-" means standard
// output.
func writeFile(path string, write func(io.Writer) error) error {
	if path == "-" {
		return write(os.Stdout)
	}
	return WriteFileAtomic(path, write)
}

// Record is one line of the NDJSON form of the results: a "start" record
// when an adapter's run begins (partial metadata), one "case" record per
// case as it finishes (the case's fields at the top level), and an "end"
// record with the run's final metadata, gate and problems.
type Record struct {
	// Kind is "start", "case" or "end".
	Kind string `json:"kind"`
	// Format is ResultsFormat, on start records.
	Format string `json:"format,omitempty"`
	// Meta is the run's metadata, on start and end records.
	Meta *conformance.Meta `json:"meta,omitempty"`
	// Gate is the run's gate, on end records.
	Gate *conformance.Gate `json:"gate,omitempty"`
	// Problems are the run's failures grouped by cause, on end records
	// (readers compute them again from the cases).
	Problems []*Problem `json:"problems,omitempty"`
	*conformance.CaseResult
}

// ResultsStream writes the NDJSON form of the results while a run goes:
// every record is written (and reaches the file) as soon as it is known.
// It is safe for concurrent use.
type ResultsStream struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// NewResultsStream returns a ResultsStream on w.
func NewResultsStream(w io.Writer) *ResultsStream { return &ResultsStream{w: w} }

func (s *ResultsStream) write(r Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if s.err = enc.Encode(r); s.err != nil {
		return
	}
	_, s.err = s.w.Write(b.Bytes())
}

// Start records that an adapter's run begins.
func (s *ResultsStream) Start(m conformance.Meta) {
	s.write(Record{Kind: "start", Format: ResultsFormat, Meta: &m})
}

// Case records one finished case.
func (s *ResultsStream) Case(c *conformance.CaseResult) { s.write(Record{Kind: "case", CaseResult: c}) }

// End records a run's final metadata, gate and problems.
func (s *ResultsStream) End(r *conformance.Results) {
	m, g := r.Meta, r.Gate
	s.write(Record{Kind: "end", Meta: &m, Gate: &g, Problems: Problems(r)})
}

// Err returns the first write error.
func (s *ResultsStream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// WriteResultsNDJSON writes a finished document in the NDJSON form.
func WriteResultsNDJSON(w io.Writer, doc *Document) error {
	s := NewResultsStream(w)
	for _, r := range doc.Runs {
		s.Start(r.Meta)
		for _, c := range r.Cases {
			s.Case(c)
		}
		s.End(r)
	}
	return s.Err()
}

// ReadResults reads results in any of their forms: a document
// ({"runs":[...]}), one run ({"meta":...,"cases":[...]}), or NDJSON
// records, as written by `agentconform run --ndjson` (a run whose end
// record is missing, because the run was killed, is kept with what it has).
func ReadResults(r io.Reader) (*Document, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("no results: the input is empty")
		}
		return nil, fmt.Errorf("results are not JSON: %w", err)
	}
	var probe struct {
		Kind  string          `json:"kind"`
		Runs  json.RawMessage `json:"runs"`
		Meta  json.RawMessage `json:"meta"`
		Cases json.RawMessage `json:"cases"`
	}
	if err := json.Unmarshal(first, &probe); err != nil {
		return nil, fmt.Errorf("results: want a JSON object: %w", err)
	}
	switch {
	case probe.Kind != "":
		return readRecords(first, dec)
	case probe.Runs != nil:
		var doc Document
		if err := json.Unmarshal(first, &doc); err != nil {
			return nil, fmt.Errorf("results document: %w", err)
		}
		if doc.Format != "" && doc.Format != ResultsFormat {
			return nil, fmt.Errorf("results format %q: this agentconform reads %s", doc.Format, ResultsFormat)
		}
		if dec.More() {
			return nil, fmt.Errorf("results document: more than one JSON value")
		}
		for i, run := range doc.Runs {
			if run == nil {
				return nil, fmt.Errorf("results document: runs[%d] is null", i)
			}
		}
		doc.Format = ResultsFormat
		return &doc, nil
	case probe.Meta != nil && probe.Cases != nil:
		var run conformance.Results
		if err := json.Unmarshal(first, &run); err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
		return NewDocument(&run), nil
	}
	return nil, fmt.Errorf("results: want {\"runs\":[...]}, one run {\"meta\",\"cases\"} or NDJSON records with \"kind\"")
}

// readRecords rebuilds a document from NDJSON records.
func readRecords(first json.RawMessage, dec *json.Decoder) (*Document, error) {
	doc := NewDocument()
	byAdapter := map[string]*conformance.Results{}
	run := func(adapter string) *conformance.Results {
		r, ok := byAdapter[adapter]
		if !ok {
			r = &conformance.Results{Meta: conformance.Meta{Tool: "agentconform", Adapter: adapter}}
			byAdapter[adapter] = r
			doc.Runs = append(doc.Runs, r)
		}
		return r
	}
	raw := first
	for n := 1; ; n++ {
		var rec Record
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, fmt.Errorf("results record %d: %w", n, err)
		}
		switch rec.Kind {
		case "start":
			if rec.Meta == nil {
				return nil, fmt.Errorf("results record %d: start without meta", n)
			}
			if rec.Format != "" && rec.Format != ResultsFormat {
				return nil, fmt.Errorf("results format %q: this agentconform reads %s", rec.Format, ResultsFormat)
			}
			r := run(rec.Meta.Adapter)
			r.Meta = *rec.Meta
		case "case":
			if rec.CaseResult == nil || rec.ID == "" {
				return nil, fmt.Errorf("results record %d: case without id", n)
			}
			r := run(rec.Adapter)
			r.Cases = append(r.Cases, rec.CaseResult)
		case "end":
			if rec.Meta == nil || rec.Gate == nil {
				return nil, fmt.Errorf("results record %d: end without meta or gate", n)
			}
			r := run(rec.Meta.Adapter)
			r.Meta, r.Gate = *rec.Meta, *rec.Gate
		default:
			return nil, fmt.Errorf("results record %d: unknown kind %q", n, rec.Kind)
		}
		raw = nil
		if err := dec.Decode(&raw); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("results record %d: %w", n+1, err)
		}
	}
	for _, r := range doc.Runs {
		sort.SliceStable(r.Cases, func(i, j int) bool { return r.Cases[i].ID < r.Cases[j].ID })
		if r.Gate.Counts == nil {
			// The run did not end: judge what it has, without a baseline.
			r.ApplyBaseline(nil)
		}
		markBaselined(r)
	}
	return doc, nil
}

// markBaselined sets Baselined on the check results the gate lists as
// expected (case records are streamed before the gate is known).
func markBaselined(r *conformance.Results) {
	if len(r.Gate.Expected) == 0 {
		return
	}
	exp := map[string]bool{}
	for _, e := range r.Gate.Expected {
		exp[e] = true
	}
	for _, c := range r.Cases {
		for i := range c.Checks {
			if exp[c.ID+" "+c.Checks[i].Check] {
				c.Checks[i].Baselined = true
			}
		}
	}
}

// ReadResultsFile reads results from path ("-" is standard input).
func ReadResultsFile(path string) (*Document, error) {
	if path == "-" {
		return ReadResults(os.Stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := ReadResults(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// Join puts the runs of several documents into one, in order.
func Join(docs ...*Document) *Document {
	out := NewDocument()
	for _, d := range docs {
		out.Runs = append(out.Runs, d.Runs...)
	}
	return out
}
