package reference

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/reference/unified"
)

// TestHugeLines: a line of 1 MiB + 1 (past the Python SDK's limit) and one
// of 64 MiB arrive whole.
func TestHugeLines(t *testing.T) {
	sizes := []int{1<<20 + 1, 8 << 20}
	if !testing.Short() {
		sizes = append(sizes, 64<<20)
	}
	for _, agent := range Agents {
		for _, size := range sizes {
			if size == 64<<20 && agent != Codex {
				continue // one 64 MiB run is enough
			}
			t.Run(string(agent)+"/"+itoa(size), func(t *testing.T) {
				fakes := fakecli.Start(t, fakecli.Options{Fixture: string(agent) + "/plain-text", Faults: "ladder:size=" + itoa(size) + ",nth=1"})
				run := runTurns(t, fakeConfig(t, agent, fakes), []string{"hi"}, nil)
				if !run.results[0].OK {
					t.Fatalf("turn: %+v", run.results[0])
				}
				total := 0
				for _, c := range ofType[*unified.TextChunk](run.events) {
					total = max(total, len(c.Content)) // the ladder grew one event's text
				}
				// The padded text is the line minus the JSON around it.
				if total < size-4096 || total > size {
					t.Errorf("assistant text of %d bytes from a %d-byte line", total, size)
				}
			})
		}
	}
}

// TestBrokenCLIs: a CLI that exits mid-line, cuts its output, dies, exits
// non-zero after its terminal event, or ends without one is a failed turn
// (and, at close, a failed session), never a success, never a hang.
func TestBrokenCLIs(t *testing.T) {
	cases := []struct {
		fixture, faults string
		want            string // in the turn's error
	}{
		{"codex/single-tool", "exit_mid_line:code=1", "codex exited with status 1"},
		{"codex/single-tool", "exit_mid_line:code=0", "middle of a line"},
		{"gemini/single-tool", "exit_mid_line:code=0", "middle of a line"},
		{"claude/single-tool", "exit_mid_line:code=0", "middle of a line"},
		{"claude/single-tool", "exit_mid_line:code=0,line=3", "middle of a line"},
		{"gemini/single-tool", "limit_data:bytes=300", "middle of a line"},
		{"gemini/single-tool", "limit_data:bytes=0", "terminal event"},
		{"codex/single-tool", "die:signal=SIGKILL,after=2", "killed"},
		{"claude/single-tool", "die:signal=SIGKILL,after=3", "killed"},
		{"gemini/single-tool", "exit_code:code=3", "status 3"},
		{"codex/plain-text", "drop:type=turn.completed,nth=1", "terminal event"},
	}
	for _, tc := range cases {
		t.Run(tc.fixture+"/"+tc.faults, func(t *testing.T) {
			agent := Agent(strings.SplitN(tc.fixture, "/", 2)[0])
			fakes := fakecli.Start(t, fakecli.Options{Fixture: tc.fixture, Faults: tc.faults})
			cfg := fakeConfig(t, agent, fakes)
			cfg.Permission = PermissionAllow
			run := runTurns(t, cfg, []string{"Run echo hi"}, nil)
			res := run.results[0]
			// No turn ends the session: the next resumes the one the
			// CLI announced, or starts one.
			if res.OK || res.SessionEnded || !strings.Contains(res.Error, tc.want) {
				t.Errorf("turn: %+v, want a failure that leaves the session open, error with %q", res, tc.want)
			}
			ended := ofType[*unified.SessionEnded](run.events)
			switch {
			case len(run.events) == 0 && strings.Contains(tc.faults, "bytes=0"):
				// Nothing on stdout: no session to start or end; the
				// failure is in the turn's result only.
			case len(ended) != 1 || ended[0].Reason != unified.ReasonFailed:
				t.Errorf("sessionEnded: %+v, want failed", ended)
			}
			checkStream(t, tc.faults, ProfileUnified, encode(t, run.events))
		})
	}
}

// TestToleratedFaults: output that is odd but complete is accepted: no
// final newline, invalid UTF-8, a banner line, unknown types and fields.
func TestToleratedFaults(t *testing.T) {
	for _, faults := range []string{"no_final_newline", "invalid_utf8:nth=3", "banner:at=2", "unknown_type", "unknown_field"} {
		for _, agent := range Agents {
			t.Run(string(agent)+"/"+faults, func(t *testing.T) {
				fakes := fakecli.Start(t, fakecli.Options{Fixture: string(agent) + "/single-tool", Faults: faults})
				cfg := fakeConfig(t, agent, fakes)
				cfg.Permission = PermissionAllow
				run := runTurns(t, cfg, []string{"Run echo hi"}, nil)
				if !run.results[0].OK {
					t.Errorf("turn: %+v", run.results[0])
				}
				if len(ofType[*unified.ToolCompleted](run.events)) != 1 {
					t.Errorf("events: %s", encode(t, run.events))
				}
				checkStream(t, faults, ProfileUnified, encode(t, run.events))
			})
		}
	}
}

// countWriter counts what is written to it.
type countWriter struct{ n atomic.Int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return len(p), nil
}

// TestStderrFlood: 4 MiB on stderr before the first stdout line must not
// block the CLI (stderr is drained while stdout is read).
func TestStderrFlood(t *testing.T) {
	for _, agent := range Agents {
		t.Run(string(agent), func(t *testing.T) {
			fakes := fakecli.Start(t, fakecli.Options{Fixture: string(agent) + "/single-tool", Faults: "stderr_flood:bytes=4194304"})
			cfg := fakeConfig(t, agent, fakes)
			cfg.Permission = PermissionAllow
			w := &countWriter{}
			cfg.Stderr = w
			run := runTurns(t, cfg, []string{"Run echo hi"}, nil)
			if !run.results[0].OK {
				t.Errorf("turn: %+v", run.results[0])
			}
			if w.n.Load() < 4<<20 {
				t.Errorf("%d bytes of stderr passed on, want the 4 MiB flood", w.n.Load())
			}
			if run.elapsed > 20*time.Second {
				t.Errorf("took %s", run.elapsed)
			}
		})
	}
}
