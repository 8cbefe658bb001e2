// Package reports renders what agentconform found for people and for CI.
//
// For agentconform run: the results model (Document, JSON and NDJSON, with
// the JSON Schema schemas/results), the terminal summary and progress,
// JUnit XML (one testsuite per check family), Markdown for pull-request
// comments and $GITHUB_STEP_SUMMARY, a self-contained HTML page with the
// matrix of adapters, CLIs, CLI versions and cases, merging of shards,
// diffs between runs, the baseline gate and GitHub annotations.
//
// For agentconform validate: plain text for a terminal, NDJSON for
// programs, JUnit XML for CI systems, Markdown and HTML, and the drift
// report. Writers receive findings as they are produced and per-stream
// results as each stream ends, so output streams while a long validation
// runs.
//
// # Problems: failures grouped by cause
//
// One bug fails one check in many cases: an adapter that loses the last
// line of a turn fails lifecycle/ending-delivered in every case with a
// turn, and the usage and final text that rode on that line fail
// lossless/usage and lossless/text in the same cases. The terminal
// summary, the Markdown and the HTML report therefore lead with problems
// (Problems), as Schemathesis reports unique failures and pytest its
// short test summary, not with one block per failure; JUnit stays one
// testcase per check and case, and the results carry both (each run's
// problems next to its cases).
//
// A problem is one check failing with one verdict for one reason across
// the cases of a run. The reason (Reason) is the check's Actual with what
// differs from case to case normalised away, in this order: the case's
// names (its ID, also as a directory name, its fixture, the runner's
// prompts, which name the scenario); quoted texts; paths; ids (UUIDs,
// words of eight or more characters mixing letters and digits); numbers
// (counts, sizes, pids, durations, versions); the case's CLI, and the
// CLI's terminal event as checks name it ("the CLI's result" for Claude
// and Gemini, "the CLI's turn.completed" for Codex); then repeated lines.
// What is left is the check's own wording of what went wrong, so that
// two bugs that one check words differently stay two problems ("nothing
// reached the CLI" and "the CLI received no signal"; "it is not: the
// content was lost" and "neither: the content was lost silently").
//
// A failure follows from another in the same case (Consequences) when the
// second explains the first: lossless/usage and lossless/text from
// lifecycle/ending-delivered (the usage and the final text ride on the
// turn's end), and lossless/text, lossless/tools and lossless/usage from
// lifecycle/reports-success (a turn the adapter gave up on as failed loses
// what came after). Such a failure is shown under its primary's problem,
// with the number of cases, not as a problem beside it; but only when its
// reason never shows up without the primary: if the same check fails for
// the same reason in a case where the primary passed, the primary did not
// cause it, and it is a problem of its own in every case, so that a bug
// is never hidden under another.
//
// Problems are ordered by how many cases each touches, most first. Each
// shows the expected and actual of its example case (the simplest of its
// cases with a new failure: a scenario before its variants, then the
// shortest ID, so that two runs with the same failures show the same one)
// and the command that reproduces that case;
// the Markdown and HTML reports list all its cases. Grouping is
// presentation only: every failure is still in the results, the gate
// counts failures, and the baseline lists them one by one.
//
// # The HTML page
//
// The results page is one self-contained file under a strict Content
// Security Policy (its one style and one script allowed by hash, nothing
// loaded). The runs, the problems, the CLI version tables and the matrix
// are markup; a case's details (every check with its requirement, source,
// expected, actual and diff, the reproduce command, the wire excerpt) are
// data, one JSON block that the page's script parses when a case is first
// opened and builds into the dialog as text. Check lists and text that
// repeat across cases are kept once. The published example
// (reports/examples/index.html, 1,234 cases of 16 runs) is thereby under
// 3 MB, where markup for every case made it 16 MB, and Chromium draws it
// in well under a second; TestPublishedExampleDraws prints the timings.
package reports
