package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/agentconform/agentconform/capture"
	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/reports"
)

const reportUsage = `Usage: agentconform report <subcommand> [flags] [RESULTS...]

Reads the results agentconform run writes (JSON, or NDJSON from --ndjson;
- is stdin) and turns them into reports, joins shards, compares runs and
gates CI.

Subcommands:
  render   write the results as text, JSON, NDJSON, JUnit XML, Markdown or HTML
  merge    join the results of --shard runs into one
  diff     list new failures, fixed checks and changed verdicts between OLD and NEW
  gate     judge results against a baseline: exit 0 no new failure, 1 new failures
  fidelity per adapter, the verdicts that differ between its run on the fakes
           and its run on the real CLIs (run --cli fake,real)
  publish  regenerate the published example (reports/examples): the reference
           adapters and the official SDK drivers

Run 'agentconform report <subcommand> --help' for its flags.
Exit codes: 0 fine, 1 new failures (diff, gate), 2 usage or I/O error.
`

func runReport(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		w := stderr
		if len(args) > 0 {
			w = stdout
		}
		fmt.Fprint(w, reportUsage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	sub := map[string]func(context.Context, []string, io.Reader, io.Writer, io.Writer) int{
		"render": reportRender, "merge": reportMerge, "diff": reportDiff, "gate": reportGate, "publish": reportPublish, "fidelity": reportFidelity,
	}
	f, ok := sub[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "agentconform report: unknown subcommand %q\n\n%s", args[0], reportUsage)
		return exitUsage
	}
	return f(ctx, args[1:], stdin, stdout, stderr)
}

func reportError(stderr io.Writer, sub string, err error) int {
	fmt.Fprintf(stderr, "agentconform report %s: %v\nRun 'agentconform report %s --help' for usage.\n", sub, err, sub)
	return exitUsage
}

// newReportFlags returns a flag set with the usage text of a subcommand.
func newReportFlags(name, usage string, stderr io.Writer) *pflag.FlagSet {
	fl := pflag.NewFlagSet("report "+name, pflag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprint(stderr, usage)
		fl.PrintDefaults()
	}
	return fl
}

func parseReportFlags(fl *pflag.FlagSet, args []string, sub string, stderr io.Writer) (int, bool) {
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK, false
		}
		return reportError(stderr, sub, err), false
	}
	return 0, true
}

// readDocs reads every results file; stdin stands for "-".
func readDocs(paths []string, stdin io.Reader) ([]*reports.Document, error) {
	var docs []*reports.Document
	for _, p := range paths {
		var doc *reports.Document
		var err error
		if p == "-" {
			doc, err = reports.ReadResults(stdin)
			if err != nil {
				err = fmt.Errorf("<stdin>: %w", err)
			}
		} else {
			doc, err = reports.ReadResultsFile(p)
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
	return docs, nil
}

// outputs are the report files a command writes: each flag names a file
// ("-" for stdout).
type outputs struct {
	text, json, ndjson, junit, markdown, html *string
	title, reportURL, sourceBase              *string
	maxBytes                                  *int
}

func addOutputFlags(fl *pflag.FlagSet, withJSON bool) *outputs {
	o := &outputs{}
	if withJSON {
		o.text = fl.String("text", "", "write the terminal summary to this file (- for stdout)")
		o.json = fl.String("json", "", "write the results JSON document to this file")
	}
	o.ndjson = fl.String("ndjson", "", "write the results as NDJSON (start, one record per case, end) to this file")
	o.junit = fl.String("junit", "", "write JUnit XML (one testsuite per check family) to this file")
	o.markdown = fl.String("markdown", "", "write Markdown (for a pull-request comment or $GITHUB_STEP_SUMMARY) to this file")
	o.html = fl.String("html", "", "write the self-contained HTML report to this file")
	o.title = fl.String("title", "", "title of the Markdown and HTML reports")
	o.reportURL = fl.String("report-url", "", "link the Markdown report to the full report at this URL")
	o.sourceBase = fl.String("source-base", "", "where the Markdown and HTML reports link each check's source (docs/protocols/<file>.md#<anchor>): the repository root as a URL, or as a path relative to the report (default: the reference as published on GitHub for this version)")
	o.maxBytes = fl.Int("markdown-max-bytes", 60000, "bound the Markdown report (a pull-request comment takes 65536 characters)")
	return o
}

func (o *outputs) any() bool {
	for _, p := range []*string{o.text, o.json, o.ndjson, o.junit, o.markdown, o.html} {
		if p != nil && *p != "" {
			return true
		}
	}
	return false
}

// write writes every requested report of doc; stdout stands for "-".
func (o *outputs) write(doc *reports.Document, stdout io.Writer, sum reports.SummaryOptions) error {
	type out struct {
		path  *string
		write func(io.Writer) error
	}
	list := []out{
		{o.text, func(w io.Writer) error { return reports.WriteSummary(w, doc, sum) }},
		{o.json, func(w io.Writer) error { return reports.WriteResultsJSON(w, doc) }},
		{o.ndjson, func(w io.Writer) error { return reports.WriteResultsNDJSON(w, doc) }},
		{o.junit, func(w io.Writer) error { return reports.WriteResultsJUnit(w, doc) }},
		{o.markdown, func(w io.Writer) error {
			return reports.WriteResultsMarkdown(w, doc, reports.MarkdownOptions{Title: *o.title, ReportURL: *o.reportURL, MaxBytes: *o.maxBytes, SourceBase: *o.sourceBase})
		}},
		{o.html, func(w io.Writer) error {
			return reports.WriteResultsHTML(w, doc, reports.HTMLOptions{Title: *o.title, SourceBase: *o.sourceBase})
		}},
	}
	for _, l := range list {
		if l.path == nil || *l.path == "" {
			continue
		}
		if *l.path == "-" {
			if err := l.write(stdout); err != nil {
				return err
			}
			continue
		}
		if err := writeReportFile(*l.path, l.write); err != nil {
			return err
		}
	}
	return nil
}

// writeReportFile writes a report file atomically: a killed run leaves
// the old file or the new one, never half of one.
func writeReportFile(path string, write func(io.Writer) error) error {
	return reports.WriteFileAtomic(path, write)
}

const renderUsage = `Usage: agentconform report render [flags] RESULTS...

Writes results (several files are shown side by side) in the formats the
flags name; with none, prints the terminal summary.

Flags:
`

func reportRender(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := newReportFlags("render", renderUsage, stderr)
	o := addOutputFlags(fl, true)
	quiet := fl.BoolP("quiet", "q", false, "text summary: leave out the failure details")
	if code, ok := parseReportFlags(fl, args, "render", stderr); !ok {
		return code
	}
	if fl.NArg() == 0 {
		return reportError(stderr, "render", fmt.Errorf("no results file (agentconform run -o FILE writes one)"))
	}
	docs, err := readDocs(fl.Args(), stdin)
	if err != nil {
		return reportError(stderr, "render", err)
	}
	doc := reports.Join(docs...)
	if !o.any() {
		*o.text = "-"
	}
	if err := o.write(doc, stdout, reports.SummaryOptions{Quiet: *quiet, Color: reports.ColorEnabled(stdout)}); err != nil {
		fmt.Fprintf(stderr, "agentconform report render: %v\n", err)
		return exitUsage
	}
	return exitOK
}

const mergeUsage = `Usage: agentconform report merge [flags] RESULTS...

Joins the results of 'agentconform run --shard i/n' runs into one: per
adapter, the union of the cases and the sum of the gates. Shards must share
seed and strictness; a case may appear once. Missing shards are warned
about, and the merged run says which shards it holds.

Flags:
`

func reportMerge(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := newReportFlags("merge", mergeUsage, stderr)
	out := fl.StringP("out", "o", "-", "write the merged results JSON here")
	o := addOutputFlags(fl, false)
	if code, ok := parseReportFlags(fl, args, "merge", stderr); !ok {
		return code
	}
	if fl.NArg() == 0 {
		return reportError(stderr, "merge", fmt.Errorf("no results files"))
	}
	docs, err := readDocs(fl.Args(), stdin)
	if err != nil {
		return reportError(stderr, "merge", err)
	}
	merged, warnings, err := reports.Merge(docs...)
	if err != nil {
		fmt.Fprintf(stderr, "agentconform report merge: %v\n", err)
		return exitUsage
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "agentconform report merge: warning: %s\n", w)
	}
	write := func(w io.Writer) error { return reports.WriteResultsJSON(w, merged) }
	if *out == "-" {
		err = write(stdout)
	} else {
		err = writeReportFile(*out, write)
	}
	if err == nil {
		err = o.write(merged, stdout, reports.SummaryOptions{})
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentconform report merge: %v\n", err)
		return exitUsage
	}
	return exitOK
}

const diffUsage = `Usage: agentconform report diff [flags] OLD NEW

Compares two results check by check (per adapter, case and check): new
failures (failing in NEW, not in OLD), fixed checks (failing in OLD, not in
NEW) and every other changed verdict.

Exit codes: 0 no new failure, 1 new failures, 2 usage or I/O error.

Flags:
`

func reportDiff(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := newReportFlags("diff", diffUsage, stderr)
	format := fl.String("format", "text", "output format: text, markdown or json")
	if code, ok := parseReportFlags(fl, args, "diff", stderr); !ok {
		return code
	}
	if fl.NArg() != 2 {
		return reportError(stderr, "diff", fmt.Errorf("want OLD and NEW results files, got %d arguments", fl.NArg()))
	}
	switch *format {
	case "text", "markdown", "json":
	default:
		return reportError(stderr, "diff", fmt.Errorf("--format %q: want text, markdown or json", *format))
	}
	docs, err := readDocs(fl.Args(), stdin)
	if err != nil {
		return reportError(stderr, "diff", err)
	}
	d := reports.Diff(docs[0], docs[1])
	switch *format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err = enc.Encode(d)
	case "markdown":
		err = reports.WriteDiffMarkdown(stdout, d)
	default:
		err = reports.WriteDiffText(stdout, d)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentconform report diff: %v\n", err)
		return exitUsage
	}
	if len(d.NewFailures) > 0 {
		return exitFindings
	}
	return exitOK
}

const gateUsage = `Usage: agentconform report gate [flags] RESULTS...

The CI gate: judges results against a baseline of expected failures.
Failures the baseline lists pass; any other failure fails the gate; baseline
entries that no longer fail are reported stale. Prints what to change (the
lines to add to or delete from the baseline). Inside GitHub Actions
(GITHUB_ACTIONS=true) it also writes error and warning annotations.

Exit codes: 0 no new failure, 1 new failures, 2 usage or I/O error.

Flags:
`

func reportGate(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := newReportFlags("gate", gateUsage, stderr)
	baseline := fl.String("baseline", "", "file of expected failures (\"<case-id> [<check-id>]\" per line); without it every failure is new")
	strict := fl.Bool("strict", false, "make NON-STRICT (SHOULD) failures fail, whatever the runs were started with")
	writeBase := fl.String("write-baseline", "", "write the results' failures as a baseline file (to accept them)")
	o := addOutputFlags(fl, true)
	if code, ok := parseReportFlags(fl, args, "gate", stderr); !ok {
		return code
	}
	if fl.NArg() == 0 {
		return reportError(stderr, "gate", fmt.Errorf("no results files"))
	}
	docs, err := readDocs(fl.Args(), stdin)
	if err != nil {
		return reportError(stderr, "gate", err)
	}
	doc, warnings, err := reports.Merge(docs...)
	if err != nil {
		return reportError(stderr, "gate", err)
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "agentconform report gate: warning: %s\n", w)
	}
	var b *reports.Baseline
	if *baseline != "" {
		if b, err = reports.ReadBaseline(*baseline); err != nil {
			return reportError(stderr, "gate", err)
		}
	}
	reports.ApplyBaseline(doc, b, reports.GateOptions{Strict: *strict})
	if err := o.write(doc, stdout, reports.SummaryOptions{Baseline: b}); err != nil {
		fmt.Fprintf(stderr, "agentconform report gate: %v\n", err)
		return exitUsage
	}
	if *writeBase != "" {
		if err := writeReportFile(*writeBase, func(w io.Writer) error { return reports.WriteBaseline(w, doc) }); err != nil {
			fmt.Fprintf(stderr, "agentconform report gate: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(stdout, "Baseline written: %s\n", *writeBase)
	}
	if err := reports.WriteGate(stdout, doc, b); err != nil {
		return exitUsage
	}
	if inGitHubActions() {
		reports.WriteAnnotations(stdout, doc, b, "")
	}
	if !reports.Passed(doc) {
		return exitFindings
	}
	return exitOK
}

func inGitHubActions() bool { return os.Getenv("GITHUB_ACTIONS") == "true" }

const publishUsage = `Usage: agentconform report publish [flags]

Regenerates the published example in reports/examples: runs the reference
adapters against the fake CLIs (every case), and again on each CLI's cases
at every older CLI version with fixtures (reference-<cli>-<version>.json;
--cli-versions=false skips them), adds the results of the official SDK
drivers (sdk-*.json) and of the zoo of published third-party adapters
(zoo-*.json) found there, and writes reference.json, index.md and
index.html; with runs at more than one CLI version the reports show the
version matrix. With --real it also runs the reference adapters on the
real CLIs (every case a real CLI can play: reference-real.json), and the
reports compare each adapter's runs on the fakes and on the real CLIs; the
SDK and zoo drivers' runs on the real CLIs (sdk-*-real.json,
zoo-*-real.json, from run --cli real -o) are added like theirs on the
fakes. Paths of this machine (the temporary work directory, this
executable) are replaced by placeholders. Run it from the repository root:

  go run ./cmd/agentconform report publish
  go run ./cmd/agentconform report publish --real --install

Flags:
`

func reportPublish(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fl := newReportFlags("publish", publishUsage, stderr)
	dir := fl.String("dir", filepath.Join("reports", "examples"), "the example directory")
	reuse := fl.Bool("no-run", false, "do not run the reference adapters; re-render from the directory's reference.json (and reference-*.json)")
	versions := fl.Bool("cli-versions", true, "also run the reference adapters at every older CLI version with fixtures, on that CLI's cases")
	refresh := fl.Bool("refresh", false, "take each check's source and each case's description from this build's catalogue and rewrite the results files of the directory with them (verdicts stay as they were): for results of an older build")
	jobs := fl.Int("jobs", 2, "cases run at once (few, so that timing-sensitive cases stay stable on a busy machine)")
	onReal := fl.Bool("real", false, "also run the reference adapters on the real CLIs (on PATH or in the cache), offline against the mock model API: reference-real.json")
	install := fl.Bool("install", false, "with --real: install a real CLI that is not found from npm into the cache")
	if code, ok := parseReportFlags(fl, args, "publish", stderr); !ok {
		return code
	}
	if fl.NArg() > 0 {
		return reportError(stderr, "publish", fmt.Errorf("unexpected argument %q", fl.Arg(0)))
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return reportError(stderr, "publish", err)
	}
	refPath := filepath.Join(*dir, "reference.json")
	var ref *reports.Document
	if *reuse {
		d, err := reports.ReadResultsFile(refPath)
		if err != nil {
			return reportError(stderr, "publish", err)
		}
		ref = d
		if *refresh {
			if err := refreshFile(refPath, ref); err != nil {
				return reportError(stderr, "publish", err)
			}
		}
		older, _ := filepath.Glob(filepath.Join(*dir, "reference-*.json"))
		sort.Strings(older)
		for _, p := range older {
			d, err := reports.ReadResultsFile(p)
			if err != nil {
				return reportError(stderr, "publish", err)
			}
			if *refresh {
				if err := refreshFile(p, d); err != nil {
					return reportError(stderr, "publish", err)
				}
			}
			ref = reports.Join(ref, d)
		}
	} else {
		d, err := runReference(ctx, *jobs, nil, nil)
		if err != nil {
			fmt.Fprintf(stderr, "agentconform report publish: %v\n", err)
			return exitUsage
		}
		ref = d
		if err := reports.WriteResultsFile(refPath, ref); err != nil {
			fmt.Fprintf(stderr, "agentconform report publish: %v\n", err)
			return exitUsage
		}
		stale, _ := filepath.Glob(filepath.Join(*dir, "reference-*.json"))
		for _, p := range stale {
			os.Remove(p)
		}
		if *versions {
			older, err := runOlderVersions(ctx, *dir, *jobs)
			if err != nil {
				fmt.Fprintf(stderr, "agentconform report publish: %v\n", err)
				return exitUsage
			}
			ref = reports.Join(ref, older)
		}
		if *onReal {
			no := ""
			rf := &realFlags{cli: &no, paths: map[string]*string{}, install: install, npmVersion: new(string)}
			for _, c := range capture.CLIs {
				rf.paths[c] = &no
			}
			*rf.npmVersion = "latest"
			real := rf.locate(ctx, stderr)
			d, err := runReferenceOn(ctx, *jobs, nil, nil, real)
			if err != nil {
				fmt.Fprintf(stderr, "agentconform report publish: the real CLIs: %v\n", err)
				return exitUsage
			}
			if err := reports.WriteResultsFile(filepath.Join(*dir, "reference-real.json"), d); err != nil {
				fmt.Fprintf(stderr, "agentconform report publish: %v\n", err)
				return exitUsage
			}
			ref = reports.Join(ref, d)
		}
	}
	all := reports.Join(ref)
	sdk, _ := filepath.Glob(filepath.Join(*dir, "sdk-*.json"))
	zoo, _ := filepath.Glob(filepath.Join(*dir, "zoo-*.json"))
	sort.Strings(sdk)
	sort.Strings(zoo)
	sdk = append(sdk, zoo...)
	for _, p := range sdk {
		d, err := reports.ReadResultsFile(p)
		if err != nil {
			fmt.Fprintf(stderr, "agentconform report publish: %v\n", err)
			return exitUsage
		}
		if *refresh {
			if err := refreshFile(p, d); err != nil {
				fmt.Fprintf(stderr, "agentconform report publish: %v\n", err)
				return exitUsage
			}
		}
		all = reports.Join(all, d)
	}
	reports.Scrub(all, machinePaths())
	var names []string
	for _, r := range all.Runs {
		names = append(names, reports.RunLabel(r))
	}
	intro := "What agentconform finds, before you install it: the reference adapters (package reference), the official SDKs and a zoo of published third-party adapters (conformance/drivers, each behind a thin driver; every finding triaged in conformance/drivers/TRIAGE.md) run against the fake CLIs, every fixture, every check. Regenerate with: AGENTCONFORM_PUBLISH=1 go test ./e2e -run 'TestSDKBattery|TestZoo|TestGoZoo', then go run ./cmd/agentconform report publish"
	for _, r := range all.Runs {
		if len(r.Meta.CLIVersionPins) > 0 {
			intro += ". The reference adapters also ran at the older CLI versions kept as fixtures: the CLI versions section compares them"
			break
		}
	}
	title := "agentconform: compatibility of the reference adapters, the official SDKs and published adapters"
	// The HTML page is downloaded and read anywhere: its check sources link
	// to the reference on GitHub. The Markdown page is read in the
	// repository, two directories below its root: its links stay there.
	if err := writeReportFile(filepath.Join(*dir, "index.html"), func(w io.Writer) error {
		return reports.WriteResultsHTML(w, all, reports.HTMLOptions{Title: title, Intro: intro})
	}); err != nil {
		fmt.Fprintf(stderr, "agentconform report publish: %v\n", err)
		return exitUsage
	}
	if err := writeReportFile(filepath.Join(*dir, "index.md"), func(w io.Writer) error {
		if _, err := fmt.Fprintf(w, "<!-- Generated by: go run ./cmd/agentconform report publish. Do not edit. -->\n\n%s\n\n", intro); err != nil {
			return err
		}
		return reports.WriteResultsMarkdown(w, all, reports.MarkdownOptions{Title: title, ReportURL: "[index.html](index.html)", MaxBytes: 1 << 20,
			SourceBase: publishedMarkdownBase})
	}); err != nil {
		fmt.Fprintf(stderr, "agentconform report publish: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "Published %s (%s): reference.json, index.md, index.html\n", *dir, strings.Join(names, ", "))
	return exitOK
}

// runOlderVersions runs the reference adapters on each CLI's cases at
// every older version that has a fixture set, and writes each version's
// results to dir/reference-<cli>-<version>.json.
func runOlderVersions(ctx context.Context, dir string, jobs int) (*reports.Document, error) {
	out := reports.NewDocument()
	for _, cli := range conformance.CLIs {
		vs, err := fixtures.Versions(cli)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			d, err := runReference(ctx, jobs, map[string]string{cli: v}, []string{cli + "/"})
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", cli, v, err)
			}
			if err := reports.WriteResultsFile(filepath.Join(dir, "reference-"+cli+"-"+v+".json"), d); err != nil {
				return nil, err
			}
			out = reports.Join(out, d)
		}
	}
	return out, nil
}

// publishedMarkdownBase is the repository root seen from reports/examples.
const publishedMarkdownBase = "../../"

// refreshFile brings the checks' sources and the cases' descriptions of a
// results file made by an older build up to this build's catalogue
// (reports.Refresh; a run at older CLI versions takes the descriptions of
// those versions' cases) and rewrites the file when anything changed.
func refreshFile(path string, doc *reports.Document) error {
	source := map[string]string{}
	for _, c := range conformance.Catalog() {
		source[c.ID] = c.Source
	}
	n := 0
	for _, r := range doc.Runs {
		cases, err := conformance.GenerateAt(conformance.CLIs, r.Meta.CLIVersionPins)
		if err != nil {
			return fmt.Errorf("listing the cases: %w", err)
		}
		description := map[string]string{}
		for _, c := range cases {
			description[c.ID] = c.Description
		}
		n += reports.Refresh(reports.NewDocument(r), source, description)
	}
	if n == 0 {
		return nil
	}
	return reports.WriteResultsFile(path, doc)
}

// runReference runs the reference adapters on every case (those match
// selects; the CLIs of pins at those versions), in a work directory it
// then scrubs from the results.
func runReference(ctx context.Context, jobs int, pins map[string]string, match []string) (*reports.Document, error) {
	return runReferenceOn(ctx, jobs, pins, match, nil)
}

// runReferenceOn is runReference on the real CLIs real, when set: the
// runs named for them, with their watchdog, deadline and pool.
func runReferenceOn(ctx context.Context, jobs int, pins map[string]string, match []string, real *conformance.RealCLIs) (*reports.Document, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	work, err := conformance.TempDir("agentconform-publish-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	doc := reports.NewDocument()
	pool := conformance.NewPoolWaiting(jobs, conformance.LeanWaitSlots)
	watchdog, timeout := conformance.ReferenceStallAfter, 20*time.Second
	if real != nil {
		pool = conformance.NewPoolWaiting(jobs, 1)
		watchdog, timeout = conformance.RealStallAfter, conformance.RealTimeout
	}
	for _, a := range referenceAdapters(self, watchdog) {
		if real != nil {
			a.Name = conformance.RealRunName(a.Name)
		}
		res, err := conformance.Run(ctx, conformance.Config{Adapter: a, FakeExe: fakecli.Executable(self), Jobs: jobs, Pool: pool, Seed: 1, Timeout: timeout,
			WorkDir: filepath.Join(work, strings.ReplaceAll(a.Name, "/", "-")), CLIVersions: pins, Match: match, Real: real})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Name, err)
		}
		doc.Runs = append(doc.Runs, res)
	}
	repl := []string{work, "$WORK", self, "agentconform"}
	if real, err := filepath.EvalSymlinks(work); err == nil && real != work {
		repl = append(repl, real, "$WORK")
	}
	r := strings.NewReplacer(repl...)
	reports.Scrub(doc, r.Replace)
	// What the fakes say of the home directory (Gemini's chats directory
	// in an unknown-session error) too.
	reports.Scrub(doc, machinePaths())
	return doc, nil
}

// machinePaths rewrites what is left of this machine in results others
// wrote (the SDK drivers' runs): the working directory, the home
// directory and the temporary directory.
func machinePaths() func(string) string {
	var repl []string
	if wd, err := os.Getwd(); err == nil && len(wd) > 1 {
		repl = append(repl, wd+string(filepath.Separator), "", wd, ".")
	}
	if home, err := os.UserHomeDir(); err == nil && len(home) > 1 {
		repl = append(repl, home, "~")
	}
	r := strings.NewReplacer(repl...)
	// The temporary directory where a path begins, not inside another
	// path (a fixture's /home/user/tmp/... is no path of this machine).
	tmp := regexp.MustCompile(`(^|[^A-Za-z0-9_./~$-])` + regexp.QuoteMeta(filepath.Clean(os.TempDir())) + `(/[^\s"'\\]*)`)
	return func(s string) string {
		return tmp.ReplaceAllStringFunc(r.Replace(s), func(m string) string {
			sub := tmp.FindStringSubmatch(m)
			return sub[1] + "$TMP/" + filepath.Base(sub[2])
		})
	}
}

const fidelityUsage = `Usage: agentconform report fidelity [flags] RESULTS...

Pairs each adapter's run on the fakes with its run on the real CLIs
(agentconform run --cli fake,real writes both into one results file; two
files, one of each, do as well) and lists, per adapter, the agreement over
the (case, check) pairs either run judged and every pair whose verdicts
differ, with what each run found. A difference is a fidelity bug of a
fake or a real CLI that does not do the same thing every run.

Flags:
`

func reportFidelity(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := newReportFlags("fidelity", fidelityUsage, stderr)
	format := fl.String("format", "text", "output format: text, markdown or json")
	if code, ok := parseReportFlags(fl, args, "fidelity", stderr); !ok {
		return code
	}
	if fl.NArg() == 0 {
		return reportError(stderr, "fidelity", fmt.Errorf("want at least one results file"))
	}
	docs, err := readDocs(fl.Args(), stdin)
	if err != nil {
		return reportError(stderr, "fidelity", err)
	}
	f := reports.CompareFidelity(docs...)
	switch *format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err = enc.Encode(f)
	case "markdown":
		err = reports.WriteFidelityMarkdown(stdout, f)
	case "text":
		err = reports.WriteFidelityText(stdout, f)
	default:
		return reportError(stderr, "fidelity", fmt.Errorf("--format %q: want text, markdown or json", *format))
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentconform report fidelity: %v\n", err)
		return exitUsage
	}
	if len(f.Adapters) == 0 {
		fmt.Fprintln(stderr, "agentconform report fidelity: no adapter has a run on the fakes and one on the real CLIs in these results")
		return exitUsage
	}
	return exitOK
}
