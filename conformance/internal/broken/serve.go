package broken

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/agentconform/agentconform/reference"
)

// referenceStallTimeout is the reference adapters' watchdog here: longer
// than the default run's (conformance.DefaultStallAfter), as the whole
// battery runs at once in these tests, on loaded machines.
const referenceStallTimeout = 10 * time.Second

// turnCap is TurnCap's watchdog time and its cap on a turn:
// conformance.ReferenceStallAfter, the reference adapters' watchdog in
// agentconform run.
const turnCap = 3 * time.Second

// serve runs reference.Serve as `agentconform adapter` does (SIGINT
// interrupts, SIGTERM ends), with bug put in what it reads and writes.
func serve(bug Bug, stdin io.Reader, stdout, stderr io.Writer) error {
	profile := reference.ProfileUnified
	if bug == ReferenceShim {
		profile = reference.ProfileShim
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	sigint := make(chan os.Signal, 1)
	signal.Notify(sigint, os.Interrupt)
	defer signal.Stop(sigint)
	interrupts := make(chan struct{}, 1)
	go func() {
		for {
			select {
			case <-sigint:
				if bug == IgnoreInterrupt {
					continue
				}
				select {
				case interrupts <- struct{}{}:
				default:
				}
			case <-ctx.Done():
				return
			}
		}
	}()

	out := &filter{bug: bug, out: &lines{w: stdout}, state: map[string]string{}}
	var turnTimeout, stallTimeout time.Duration
	if bug == TurnCap {
		turnTimeout, stallTimeout = turnCap, turnCap
	}
	pr, pw := io.Pipe()
	go func() {
		// The runner's commands, as the buggy adapter reads them.
		br := bufio.NewReader(stdin)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				if line = out.command(line); line != nil {
					if !bytes.HasSuffix(line, []byte("\n")) {
						line = append(line, '\n')
					}
					if _, werr := pw.Write(line); werr != nil {
						return
					}
				}
			}
			if err != nil {
				pw.Close()
				return
			}
		}
	}()
	opts := reference.ServeOptions{
		Profile: profile, Name: "agentconform-test-" + string(bug), Version: "test",
		Interrupts: interrupts, Stderr: stderr, TurnTimeout: turnTimeout, StallTimeout: stallTimeout,
	}
	if bug == ReferenceUnified || bug == ReferenceShim {
		// The reference adapter as the default run starts it: with a
		// watchdog. The bugs are the reference's without one, so that a
		// bug that leaves a CLI hanging shows as the runner gives up.
		opts.StallTimeout = referenceStallTimeout
	}
	err := reference.Serve(ctx, pr, out, opts)
	pr.Close()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return out.out.failed()
}

// filter sits between reference.Serve and the runner: command rewrites
// what Serve reads, Write what it writes (one whole line per call, as
// Serve writes them).
type filter struct {
	bug   Bug
	out   *lines
	buf   []byte
	state map[string]string // per bug: what it has seen so far
	open  []string          // PairByOrder: the tools started and not completed, oldest first

	// What the runner's commands depend on, set as Serve writes (mu: the
	// commands are read on another goroutine).
	mu     sync.Mutex
	failed bool // a turn_end ok:false went out
	events bool // an event went out
}

// command returns the command line Serve gets for line (nil: none).
func (f *filter) command(line []byte) []byte {
	var c map[string]any
	if json.Unmarshal(line, &c) != nil {
		return line
	}
	switch f.bug {
	case IgnoreInterrupt:
		if c["op"] == "interrupt" {
			return nil
		}
	case WrongDecision:
		if c["op"] == "start" {
			switch c["permission"] {
			case "allow":
				c["permission"] = "deny"
			case "deny":
				c["permission"] = "allow"
			}
			return remarshal(c, line)
		}
	case StdoutLog:
		if c["op"] == "start" {
			f.out.line([]byte(fmt.Sprintf("[adapter] starting %v in %v", c["agent"], c["cwd"])))
		}
	case DeadAfterFailure:
		f.mu.Lock()
		failed := f.failed
		f.mu.Unlock()
		if c["op"] == "send" && failed {
			f.out.line([]byte(`{"agentconform":"turn_end","ok":false,"error":"the client is closed"}`))
			return nil
		}
	case IgnoreResume:
		if c["op"] == "start" && c["resume"] != nil {
			delete(c, "resume")
			return remarshal(c, line)
		}
	case DropEarlyInterrupt:
		f.mu.Lock()
		events := f.events
		f.mu.Unlock()
		if c["op"] == "interrupt" && !events {
			return nil
		}
	}
	return line
}

// Write implements io.Writer for Serve's output.
func (f *filter) Write(p []byte) (int, error) {
	f.buf = append(f.buf, p...)
	for {
		i := bytes.IndexByte(f.buf, '\n')
		if i < 0 {
			break
		}
		line := f.buf[:i]
		if out := f.rewrite(line); out != nil {
			f.out.line(out)
		}
		f.buf = f.buf[i+1:]
	}
	return len(p), f.out.failed()
}

// rewrite applies the bug to one output line; nil drops it.
func (f *filter) rewrite(line []byte) []byte {
	line = bytes.Clone(line)
	var m map[string]any
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	f.mu.Lock()
	if m["agentconform"] == "turn_end" && m["ok"] == false {
		f.failed = true
	}
	if m["agentconform"] == nil {
		f.events = true
	}
	f.mu.Unlock()
	switch f.bug {
	case NoHello:
		if m["agentconform"] == "hello" {
			return nil
		}
	case LateHello:
		// The hello waits for the first event (or for end, where there
		// is none) and goes out after it.
		if m["agentconform"] == "hello" {
			f.state["hello"] = string(line)
			return nil
		}
		if h := f.state["hello"]; h != "" {
			delete(f.state, "hello")
			if m["agentconform"] == "end" {
				f.out.line([]byte(h))
				return line
			}
			f.out.line(line)
			return []byte(h)
		}
	case SuccessOnFailure:
		if k := m["agentconform"]; (k == "turn_end" || k == "end") && m["ok"] == false {
			m["ok"] = true
			delete(m, "error")
			if m["reason"] != nil {
				m["reason"] = reference.ReasonCompleted
			}
			return remarshal(m, line)
		}
	case NoFailedTurnEnd:
		if m["agentconform"] == "turn_end" && m["ok"] == false {
			return nil
		}
	case NoSessionEnded:
		if m["type"] == "sessionEnded" && m["reason"] != "completed" {
			return nil
		}
	case ReasonAlwaysFailed:
		if m["agentconform"] == "turn_end" && m["ok"] == false {
			m["reason"] = reference.ReasonFailed
			return remarshal(m, line)
		}
	case DropErrorText:
		switch {
		case m["agentconform"] == "turn_end" || m["agentconform"] == "end":
			delete(m, "reason")
			if m["ok"] == false {
				m["error"] = "the CLI failed"
			}
			return remarshal(m, line)
		case m["type"] == "sessionEnded" && m["error"] != nil:
			m["error"] = "the CLI failed"
			return remarshal(m, line)
		case m["type"] == "textChunk" && m["role"] == nil:
			return nil // a notice: the CLI's errors of a failed turn
		}
	case SwapToolIDs:
		switch m["type"] {
		case "toolStarted":
			id, _ := m["toolId"].(string)
			switch {
			case f.state["first"] == "":
				f.state["first"] = id
			case f.state["second"] == "":
				f.state["second"] = id
			}
		case "toolCompleted":
			a, b := f.state["first"], f.state["second"]
			if a == "" || b == "" {
				break
			}
			switch m["toolId"] {
			case a:
				m["toolId"] = b
			case b:
				m["toolId"] = a
			default:
				return line
			}
			return remarshal(m, line)
		}
	case DropTextChunk:
		if m["type"] == "textChunk" && m["role"] != "user" && m["content"] != "" && f.state["dropped"] == "" {
			f.state["dropped"] = "yes"
			return nil
		}
	case PairByOrder:
		switch m["type"] {
		case "toolStarted":
			id, _ := m["toolId"].(string)
			f.open = append(f.open, id)
		case "toolCompleted":
			if len(f.open) == 0 {
				break
			}
			m["toolId"], f.open = f.open[0], f.open[1:]
			return remarshal(m, line)
		}
	case DoubleTurnCompleted:
		// The copy is a new event of the adapter's, with an id of its own.
		if m["type"] == "turnCompleted" {
			f.out.line(line)
			m["id"] = fmt.Sprint(m["id"], "-again")
			return remarshal(m, line)
		}
	case DropUsage:
		switch m["type"] {
		case "turnCompleted":
			delete(m, "usage")
			return remarshal(m, line)
		case "sessionEnded":
			delete(m, "finalUsage")
			return remarshal(m, line)
		}
	}
	return line
}

// remarshal encodes m, or returns orig if it cannot.
func remarshal(m map[string]any, orig []byte) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return orig
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
