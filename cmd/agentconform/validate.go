package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/spf13/pflag"

	"github.com/agentconform/agentconform/appserver"
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/fixtures/acpfixtures"
	asfixtures "github.com/agentconform/agentconform/fixtures/appserver"
	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/reports"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/sequence"
	"github.com/agentconform/agentconform/validate"
)

const validateUsage = `Usage: agentconform validate [flags] [PATH... | -]

Checks JSONL streams line by line: framing and JSON, the schema of the
stream's dialect (claude, claude-stdin, codex, gemini, unified, shim) and
profile, and ordering and ID pairing. PATH may be a file, a directory
(searched recursively for *.jsonl and *.ndjson) or - for stdin. With no
PATH, the embedded fixtures are checked: the CLIs' streams, the codex
app-server sessions and the ACP sessions.

Sessions of the two JSON-RPC surfaces are told apart by their first
message and judged by their own rules: ACP ("jsonrpc":"2.0"; --profile
spec judges by the protocol as written, the default observed by what
Gemini CLI 0.61.0 does where the two differ) and codex app-server.
Their logs may hold both directions ({"dir":"in"|"out","line":...}
records, or the messages themselves) or the agent's or server's stdout
alone: such a log is judged on what one direction shows, and the
summary names the rules it could not be judged by.

Unknown types, subtypes, fields and enum values are drift: counted and
summarised, and violations only with --strict.

Exit codes: 0 clean, 1 violations, 2 usage or I/O error, 130 after
SIGINT and 143 after SIGTERM (validate stops at once, even in the middle
of a read, and prints no verdict for input it did not finish).

Flags:
`

func runValidate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := pflag.NewFlagSet("validate", pflag.ContinueOnError)
	fl.SetOutput(stderr)
	var (
		dialect    = fl.String("dialect", "", "the streams' dialect: claude, claude-stdin, codex, gemini, unified or shim (default: detect per stream)")
		profile    = fl.String("profile", "", "schemas and rules to judge by: spec or observed for native streams and ACP sessions (default observed), unified or shim")
		cliVersion = fl.String("cli-version", "", "CLI version whose observed schema to use (default: from the stream, else the newest)")
		strict     = fl.Bool("strict", false, "make SHOULD rules and drift violations")
		format     = fl.String("format", "text", "output format: text, json (NDJSON), junit, markdown or html")
		driftOut   = fl.String("drift-report", "", "write the drift report to this file (.json: JSON, .md: Markdown, else text): per CLI version, what the logs carry that the schemas do not know, and the kinds the schemas declare that no log carried, with their required fields")
		output     = fl.StringP("output", "o", "", "write the report to this file instead of stdout (--out is the same)")
		outAlias   = fl.String("out", "", "the same as --output, as for run")
		maxLine    = fl.String("max-line-bytes", "64MiB", "longest line read; longer lines are reported and skipped (bytes, or with KiB/MiB/GiB)")
		jobs       = fl.Int("jobs", 0, "goroutines for per-line work (default: number of cores)")
		schemaDir  = fl.String("schemas", "", "read schema files from this directory (laid out like schemas/) instead of the embedded ones")
		listRules  = fl.Bool("list-rules", false, "print the rule catalogue and exit")
		quiet      = fl.BoolP("quiet", "q", false, "text format: print only the summaries")
	)
	fl.Usage = func() {
		fmt.Fprint(stderr, validateUsage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return usageError(stderr, err)
	}
	if *listRules {
		printRules(stdout)
		return exitOK
	}
	opts := validate.Options{Strict: *strict, Jobs: *jobs}
	var err error
	if *dialect != "" {
		if opts.Dialect, err = schemas.ParseDialect(*dialect); err != nil {
			return usageError(stderr, err)
		}
	}
	if *profile != "" {
		if opts.Profile, err = schemas.ParseProfile(*profile); err != nil {
			return usageError(stderr, err)
		}
	}
	opts.CLIVersion = *cliVersion
	if opts.MaxLineBytes, err = parseSize(*maxLine); err != nil {
		return usageError(stderr, fmt.Errorf("--max-line-bytes: %w", err))
	}
	if *schemaDir != "" {
		if st, err := os.Stat(*schemaDir); err != nil || !st.IsDir() {
			return usageError(stderr, fmt.Errorf("--schemas %s: not a directory", *schemaDir))
		}
		opts.Schemas = schemas.NewSet(os.DirFS(*schemaDir))
	}
	if *outAlias != "" {
		if *output != "" && *output != *outAlias {
			return usageError(stderr, fmt.Errorf("--out and --output name different files"))
		}
		*output = *outAlias
	}
	out := stdout
	var outFile *reports.AtomicFile
	if *output != "" {
		// Written whole or not at all: an interrupted run leaves the
		// file as it was.
		f, err := reports.CreateAtomic(*output)
		if err != nil {
			return usageError(stderr, err)
		}
		defer f.Abort()
		out, outFile = f, f
	}
	// The drift report's "never seen" part needs every event's kind: count
	// them beside validation when a report shows it.
	var drift *reports.DriftCollector
	if *driftOut != "" || *format == string(reports.Markdown) || *format == string(reports.HTML) {
		var fsys fs.FS
		if *schemaDir != "" {
			fsys = os.DirFS(*schemaDir)
		}
		drift = reports.NewDriftCollector(fsys)
	}
	w, err := reports.NewFindingWriterDrift(reports.Format(*format), out, drift)
	if err != nil {
		return usageError(stderr, err)
	}
	if tw, ok := w.(*reports.TextWriter); ok {
		tw.Quiet = *quiet
	}
	// Validation allocates many short-lived values and keeps few (a
	// bounded number of batches in flight, a few MB whatever --jobs and
	// the input's size): trade a little memory for much less GC work, but
	// collect harder as the runtime's memory nears 40 MiB, which keeps the
	// peak RSS under 64 MB (a soft limit: a bigger live heap, such as one
	// huge line, is still allowed).
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(40 << 20)

	inputs, err := collectInputs(fl.Args())
	if err != nil {
		return usageError(stderr, err)
	}
	// The inputs are read in a goroutine, so that a signal ends the run
	// even while a read blocks (a silent pipe, a FIFO nobody opened for
	// writing). An interrupted run writes no summary and no verdict: what
	// it would say would be about input it did not finish reading.
	var abandoned atomic.Bool
	done := make(chan int, 1)
	go func() {
		code := exitOK
		for _, in := range inputs {
			var kinds *reports.KindCounter
			if drift != nil {
				kinds = reports.NewKindCounter(opts.MaxLineBytes)
			}
			res, err := in.validate(ctx, stdin, opts, w.Finding, kinds)
			if ctx.Err() != nil {
				done <- exitInterrupted
				return
			}
			if res != nil {
				if drift != nil {
					drift.Add(res, kinds)
				}
				w.Stream(res)
				if res.Violations > 0 && code == exitOK {
					code = exitFindings
				}
			}
			if err != nil {
				fmt.Fprintf(stderr, "agentconform validate: %v\n", err)
				code = exitUsage
			}
		}
		if abandoned.Load() {
			done <- exitInterrupted
			return
		}
		if err := w.Close(); err != nil {
			fmt.Fprintf(stderr, "agentconform validate: writing report: %v\n", err)
			done <- exitUsage
			return
		}
		if outFile != nil {
			if err := outFile.Commit(); err != nil {
				fmt.Fprintf(stderr, "agentconform validate: %v\n", err)
				done <- exitUsage
				return
			}
		}
		if *driftOut != "" {
			if err := writeDriftReport(*driftOut, drift.Report()); err != nil {
				fmt.Fprintf(stderr, "agentconform validate: writing drift report: %v\n", err)
				done <- exitUsage
				return
			}
		}
		done <- code
	}()
	select {
	case code := <-done:
		if code != exitInterrupted {
			return code
		}
	case <-ctx.Done():
		abandoned.Store(true)
	}
	fmt.Fprintf(stderr, "agentconform validate: interrupted (%s); no verdict\n", interruption(ctx))
	return interruptedStatus(ctx)
}

// writeDriftReport writes the drift report in the format its file name
// says: .json JSON, .md Markdown, anything else text.
func writeDriftReport(path string, rep *reports.DriftReport) error {
	write := reports.WriteDriftText
	switch filepath.Ext(path) {
	case ".json":
		write = reports.WriteDriftJSON
	case ".md":
		write = reports.WriteDriftMarkdown
	}
	return writeReportFile(path, func(w io.Writer) error { return write(w, rep) })
}

func usageError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "agentconform validate: %v\nRun 'agentconform validate --help' for usage.\n", err)
	return exitUsage
}

// input is one stream to validate: a file, stdin, or an embedded fixture.
type input struct {
	name  string
	path  string // on disk; "" for stdin and fixtures
	fixFS fs.FS
	stdin bool
}

func (in input) validate(ctx context.Context, stdin io.Reader, opts validate.Options, report validate.Reporter, kinds *reports.KindCounter) (*validate.Result, error) {
	var r io.Reader
	switch {
	case in.stdin:
		r = stdin
	case in.fixFS != nil:
		f, err := in.fixFS.Open(in.path)
		if err != nil {
			return nil, fmt.Errorf("opening fixture %s: %w", in.name, err)
		}
		defer f.Close()
		r = f
	default:
		f, err := os.Open(in.path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	if kinds != nil {
		r = io.TeeReader(r, kinds)
	}
	res, err := validate.Stream(ctx, r, in.name, opts, report)
	if kinds != nil {
		kinds.Close()
	}
	return res, err
}

// collectInputs expands the command line into streams, in a stable order.
func collectInputs(args []string) ([]input, error) {
	if len(args) == 0 {
		all, err := fixtures.All()
		if err != nil {
			return nil, err
		}
		var ins []input
		for _, fx := range all {
			ins = append(ins, input{name: path.Join("fixtures", fx.Path), path: fx.Path, fixFS: fixtures.FS()})
		}
		// The codex app-server fixtures, a set of their own.
		names, err := asfixtures.Names()
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			ins = append(ins, input{name: path.Join("fixtures", "appserver", n+".jsonl"), path: n + ".jsonl", fixFS: asfixtures.FS()})
		}
		// The ACP fixtures (Gemini CLI's --acp mode), another.
		for _, n := range acpfixtures.Names() {
			ins = append(ins, input{name: path.Join("fixtures", "acpfixtures", n+".jsonl"), path: n + ".jsonl", fixFS: acpfixtures.FS()})
		}
		return ins, nil
	}
	var ins []input
	for _, a := range args {
		if a == "-" {
			ins = append(ins, input{stdin: true})
			continue
		}
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			ins = append(ins, input{name: a, path: a})
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".ndjson")) {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("walking %s: %w", a, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s holds no *.jsonl or *.ndjson file", a)
		}
		sort.Strings(found)
		for _, p := range found {
			ins = append(ins, input{name: p, path: p})
		}
	}
	return ins, nil
}

// parseSize reads "1048576", "100KiB", "64MiB" or "1GiB".
func parseSize(s string) (int64, error) {
	mult := int64(1)
	num := s
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive size (e.g. 1048576, 100KiB, 64MiB)", s)
	}
	return n * mult, nil
}

// printRules prints the catalogue: JSONL rules, schema and drift rules per
// dialect and profile, sequence rules.
func printRules(w io.Writer) {
	var all []*finding.Rule
	all = append(all, jsonl.Rules...)
	all = append(all, validate.RuleUnknownDialect, validate.RuleNoKnownEvents, validate.RuleNoSchema, validate.RuleTranscriptLine, validate.RuleTranscriptPaths)
	for _, d := range schemas.Dialects {
		if d.Native() {
			all = append(all, validate.RulesFor(schemas.Observed, d)...)
			if d != schemas.ClaudeStdin {
				all = append(all, validate.RulesFor(schemas.Spec, d)...)
			}
		}
	}
	all = append(all, validate.RulesFor(schemas.Unified, schemas.UnifiedEvents)...)
	all = append(all, validate.RulesFor(schemas.Spec, schemas.UnifiedEvents)...)
	all = append(all, validate.RulesFor(schemas.Shim, schemas.ShimEvents)...)
	all = append(all, sequence.AllRules...)
	all = append(all, appserver.Rules()...)
	all = append(all, appserver.RuleTranscriptPaths)
	all = append(all, validate.ACPRules()...)
	seen := map[string]bool{}
	for _, r := range all {
		if seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		fmt.Fprintf(w, "%-6s %s\n       %s\n       Source: %s\n", r.Level, r.ID, r.Requirement, r.Source)
	}
}
