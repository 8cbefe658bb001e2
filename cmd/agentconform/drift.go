package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/agentconform/agentconform/capture"
	"github.com/agentconform/agentconform/transcript"
)

const driftUsage = `Usage: agentconform drift [flags]

Captures the scenarios with the installed CLIs (as "agentconform capture"
does: real CLIs, mock model API on loopback, no model calls) and compares
each transcript with the one recorded for the previous version: by default
the embedded fixtures, or --baseline DIR (a capture directory,
DIR/<cli>/<version>/<scenario>.jsonl, whose newest older version is taken,
or a fixtures directory, DIR/<cli>/<scenario>.jsonl), along the paths the
capture took: the same stdin lines and answers (which choose a fixture's
branches), the same signal after the same stdout, and what follows it. It
reports new and vanished event kinds, fields and enum values, a changed
order of event kinds and changed exit codes per path ("process 1",
"process 1 after SIGINT"), where the baseline cannot follow the capture,
and what the observed schema of the previous version does not know; what
the baseline leaves to the fake is listed as not compared. --captures DIR
compares captures made earlier instead of capturing (version directories
may be symbolic links).

Captures of the JSON-RPC surfaces (codex app-server, Gemini CLI's ACP
mode) are compared with their fixtures (the app-server's and the ACP
fixture sets) or --baseline captures message by message: per process and
direction the sequence of requests, notifications and responses (a
response named by the request it answers, an error by its code, the
client's answer to the server's request by what it chose), the requests
left unanswered, the terminal response (stopReason, turn status) and the
exit, besides new and vanished message kinds, fields and values; ids,
times and texts are ignored. The client's lines choose the fixture's
branches (a cancel, an interrupt, an approval's answer).

When the drift is reviewed and accepted, --accept writes
schemas/observed/<cli>/<version>/ (copied from the previous version, with
every unknown type, field and value added) and, with --update-fixtures,
copies the captures over the fixtures of the same names.

Exit status: 0 when nothing drifted (or the drift was accepted), 1 on
drift, 2 for bad usage, a CLI that cannot be found, or an I/O error.

Flags:
`

func runDrift(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := pflag.NewFlagSet("drift", pflag.ContinueOnError)
	fl.SetOutput(stderr)
	clis := addCLIFlags(fl)
	var (
		scenarios  = fl.StringSlice("scenario", nil, "the scenarios to capture and compare (default: all; \"compliance\" for the five compliance scenarios of the shim profile)")
		baseline   = fl.String("baseline", "", "compare with this directory of captures or fixtures (default: the embedded fixtures)")
		captures   = fl.String("captures", "", "compare the newest captures in this directory (DIR/<cli>/<version>/) instead of capturing")
		out        = fl.StringP("out", "o", "captures", "write new captures to OUT/<cli>/<version>/<scenario>.jsonl")
		workDir    = fl.String("work-dir", capture.DefaultWorkDir(), "where the throwaway homes go")
		timeout    = fl.Duration("timeout", capture.DefaultTimeout, "kill a CLI process group running longer than this")
		accept     = fl.Bool("accept", false, "accept the drift: write the observed schemas of the captured version into --schemas-dir")
		schemasDir = fl.String("schemas-dir", "schemas", "the schemas directory of an agentconform checkout, for --accept")
		update     = fl.Bool("update-fixtures", false, "with --accept, also copy the captures over the fixtures of the same names in --fixtures-dir")
		fixDir     = fl.String("fixtures-dir", "fixtures", "the fixtures directory of an agentconform checkout, for --update-fixtures")
		asJSON     = fl.Bool("json", false, "print a JSON report instead of text")
		quiet      = fl.BoolP("quiet", "q", false, "print no progress")
	)
	fl.Usage = func() {
		fmt.Fprint(stderr, driftUsage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "agentconform drift: unexpected argument %q\n", fl.Arg(0))
		return exitUsage
	}
	if *update && !*accept {
		fmt.Fprintln(stderr, "agentconform drift: --update-fixtures needs --accept (review the drift first)")
		return exitUsage
	}
	scs, err := capture.Select(*scenarios)
	if err != nil {
		fmt.Fprintf(stderr, "agentconform drift: %v\n", err)
		return exitUsage
	}
	progress := stderr
	if *quiet || *asJSON {
		progress = io.Discard
	}
	var ts []*transcript.Transcript
	var runs []*captureRun
	if *captures != "" {
		ts, err = loadCaptures(*captures, clis.clis, scs)
		if err != nil {
			fmt.Fprintf(stderr, "agentconform drift: %v\n", err)
			return exitUsage
		}
	} else {
		bins, err := clis.locate(ctx, progress, true)
		if err != nil {
			fmt.Fprintf(stderr, "agentconform drift: %v\n", err)
			return exitUsage
		}
		opts := capture.Options{WorkDir: *workDir, Timeout: *timeout,
			Log: func(format string, args ...any) { fmt.Fprintf(progress, format+"\n", args...) }}
		runs, err = captureAll(ctx, bins, scs, *out, opts, progress)
		if err != nil {
			fmt.Fprintf(stderr, "agentconform drift: %v\n", err)
			return exitUsage
		}
		for _, r := range runs {
			if r.Error != "" {
				fmt.Fprintf(stderr, "agentconform drift: %s/%s could not be captured: %s\n", r.CLI, r.Scenario, r.Error)
				continue
			}
			ts = append(ts, r.Transcript)
		}
	}
	if len(ts) == 0 {
		fmt.Fprintln(stderr, "agentconform drift: nothing to compare")
		return exitUsage
	}
	b := capture.Baseline{Dir: *baseline}
	var reports []*capture.DriftReport
	drifted := false
	for _, t := range ts {
		r, err := capture.CompareCapture(ctx, t, b)
		if err != nil {
			fmt.Fprintf(stderr, "agentconform drift: %v\n", err)
			return exitUsage
		}
		reports = append(reports, r)
		drifted = drifted || r.Drifted()
	}
	var accepted []*capture.Accepted
	acceptFailed := false
	if *accept {
		byCLI := map[string][]*transcript.Transcript{}
		unknown := map[string]bool{}
		var order []string
		for i, t := range ts {
			key := t.Header.CLI + "\x00" + t.Header.CLIVersion
			if byCLI[key] == nil {
				order = append(order, key)
			}
			byCLI[key] = append(byCLI[key], t)
			unknown[key] = unknown[key] || len(reports[i].Schema) > 0
		}
		for _, key := range order {
			if !unknown[key] {
				continue // the schemas know everything: nothing to add
			}
			cli, version, _ := strings.Cut(key, "\x00")
			a, err := capture.AcceptSchemas(*schemasDir, cli, version, byCLI[key])
			if err != nil {
				fmt.Fprintf(stderr, "agentconform drift: --accept %s %s: %v\n", cli, version, err)
				acceptFailed = true
				continue
			}
			accepted = append(accepted, a)
		}
		if *update {
			if err := updateFixtures(*fixDir, transcriptRuns(runs, ts, *captures), progress); err != nil {
				fmt.Fprintf(stderr, "agentconform drift: %v\n", err)
				return exitUsage
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"baseline": b.Name(), "reports": reports, "accepted": accepted}); err != nil {
			return exitUsage
		}
	} else {
		printDrift(stdout, b, reports, accepted)
	}
	switch {
	case acceptFailed:
		return exitFindings
	case drifted && !*accept:
		return exitFindings
	}
	for _, r := range reports {
		if len(r.Violations) > 0 {
			return exitFindings
		}
	}
	return exitOK
}

// loadCaptures loads the newest version's captures of each CLI in dir.
func loadCaptures(dir string, clis []string, scs []capture.Scenario) ([]*transcript.Transcript, error) {
	if len(clis) == 0 {
		clis = capture.CLIs
	}
	var out []*transcript.Transcript
	for _, cli := range clis {
		entries, err := os.ReadDir(filepath.Join(dir, cli))
		if err != nil {
			continue
		}
		var versions []string
		for _, e := range entries {
			if capture.IsDirEntry(filepath.Join(dir, cli), e) {
				versions = append(versions, e.Name())
			}
		}
		if len(versions) == 0 {
			continue
		}
		sort.Slice(versions, func(i, j int) bool { return versionLess(versions[i], versions[j]) })
		v := versions[len(versions)-1]
		for _, sc := range scs {
			p := capture.Path(dir, cli, v, sc.Name)
			if _, err := os.Stat(p); err != nil {
				continue
			}
			t, err := transcript.LoadFile(os.DirFS(filepath.Dir(p)), filepath.Base(p), transcript.Options{})
			if err != nil {
				return nil, err
			}
			t.Name = p
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no captures in %s (want %s/<cli>/<version>/<scenario>.jsonl)", dir, dir)
	}
	return out, nil
}

// versionLess orders dotted versions numerically.
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		var x, y int
		_, xe := fmt.Sscan(as[i], &x)
		_, ye := fmt.Sscan(bs[i], &y)
		if xe != nil || ye != nil {
			if as[i] != bs[i] {
				return as[i] < bs[i]
			}
			continue
		}
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}

// transcriptRuns gives updateFixtures the files to copy: the new captures,
// or the loaded ones.
func transcriptRuns(runs []*captureRun, ts []*transcript.Transcript, dir string) []*captureRun {
	if dir == "" {
		return runs
	}
	var out []*captureRun
	for _, t := range ts {
		out = append(out, &captureRun{Result: &capture.Result{CLI: t.Header.CLI, Version: t.Header.CLIVersion, Scenario: t.Header.Scenario, File: t.Name}})
	}
	return out
}

func printDrift(w io.Writer, b capture.Baseline, reports []*capture.DriftReport, accepted []*capture.Accepted) {
	n, alone := 0, 0
	for _, r := range reports {
		head := fmt.Sprintf("%s/%s %s", r.CLI, r.Scenario, r.Version)
		switch {
		case r.Baseline == "":
			// Only validated: nothing was compared, so "no drift" would
			// claim what was not checked.
			alone++
			head += ": no baseline in " + b.Name() + ", shape not compared (validated only)"
		default:
			head += fmt.Sprintf(" vs %s (%s %s)", r.Baseline, r.BaselineSource, r.BaselineVersion)
		}
		if !r.Drifted() {
			if r.Baseline == "" {
				fmt.Fprintf(w, "%s: valid\n", head)
				continue
			}
			fmt.Fprintf(w, "%s: no drift\n", head)
			for _, s := range r.NotCompared {
				fmt.Fprintf(w, "    . not compared: %s\n", s)
			}
			continue
		}
		n++
		fmt.Fprintf(w, "%s: DRIFT\n", head)
		for _, c := range r.Changes {
			fmt.Fprintf(w, "    %s\n", c)
		}
		for _, s := range r.Schema {
			fmt.Fprintf(w, "    ? unknown to %s: %s\n", r.SchemaFile, s)
		}
		for _, v := range r.Violations {
			fmt.Fprintf(w, "    ! violation: %s\n", v)
		}
		for _, s := range r.NotCompared {
			fmt.Fprintf(w, "    . not compared: %s\n", s)
		}
	}
	fmt.Fprintf(w, "%d of %d captures drifted from %s", n, len(reports), b.Name())
	if alone > 0 {
		fmt.Fprintf(w, "; %d had no baseline there and were only validated", alone)
	}
	fmt.Fprintln(w)
	for _, a := range accepted {
		fmt.Fprintf(w, "accepted %s %s: wrote %s (from %s), %d additions\n", a.CLI, a.Version, strings.Join(a.Files, ", "), a.Base, len(a.Added))
		for _, s := range a.Added {
			fmt.Fprintf(w, "    + %s\n", s)
		}
		for _, s := range a.Left {
			fmt.Fprintf(w, "    still unknown: %s\n", s)
		}
	}
}
