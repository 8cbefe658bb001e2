package fuzz

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentconform/agentconform/appserver"
	"github.com/agentconform/agentconform/transcript"
)

// A Crasher is a shrunk failing case saved as a fixture: an
// agentconform/v1 transcript whose header names the property it breaks
// (Scenario "fuzz-<property>", Description in words) and carries, after
// the marker "agentconform-fuzz ", what else the case needs as JSON
// (CrasherMeta), so that `agentconform fuzz replay` can re-run it.
type Crasher struct {
	Transcript *transcript.Transcript
	Meta       CrasherMeta
	// Path is the file the crasher was loaded from or written to.
	Path string
}

// CrasherMeta is what a crasher's transcript does not say by itself.
type CrasherMeta struct {
	// Target is what broke: "reference/unified", "reference/shim", or
	// "external" (then Adapter is its command, and Profile "acp" when it
	// is an ACP agent behind agentconform's editor).
	Target  string `json:"target"`
	Adapter string `json:"adapter,omitempty"`
	Profile string `json:"profile,omitempty"`
	// Property is the property broken, one of Properties.
	Property string `json:"property"`
	// Message is how it broke when the crasher was saved.
	Message string `json:"message,omitempty"`
	// Faults are applied to every process of the transcript with Seed
	// (writer faults only, when Materialized).
	Faults string `json:"faults,omitempty"`
	Seed   int64  `json:"seed"`
	// Interrupt makes the caller interrupt the first turn at its stall.
	Interrupt bool `json:"interrupt,omitempty"`
	// Permission is the caller's permission policy.
	Permission string `json:"permission,omitempty"`
	// Base says the content must equal the transcript's without Faults
	// (they are content-neutral): the lossless property's expectation.
	Base bool `json:"base,omitempty"`
	// Materialized says the step faults are written into the transcript.
	Materialized bool `json:"materialized,omitempty"`
	// Edits are the JSON-RPC aware edits the transcript was made with
	// (they are written into it): its content is not a fixture's.
	Edits string `json:"edits,omitempty"`
	// Input is the fuzz input the crasher was shrunk from.
	Input string `json:"input,omitempty"`
}

// metaMarker starts the JSON metadata in a crasher's description.
const metaMarker = "agentconform-fuzz "

// Case is the crasher as a case to run.
func (c *Crasher) Case() Case {
	cs := Case{Transcript: c.Transcript, Faults: c.Meta.Faults, Seed: c.Meta.Seed, Interrupt: c.Meta.Interrupt,
		Permission: c.Meta.Permission, Edits: c.Meta.Edits}
	if c.Meta.Base {
		cs.Base = c.Transcript
	}
	return cs
}

// header returns the transcript header that carries the metadata.
func (c *Crasher) header() (transcript.Header, error) {
	h := c.Transcript.Header
	meta, err := json.Marshal(c.Meta)
	if err != nil {
		return h, err
	}
	first, _, _ := strings.Cut(c.Meta.Message, "\n")
	h.Scenario = "fuzz-" + c.Meta.Property
	h.Description = fmt.Sprintf("fuzz crasher: %s breaks %s: %s %s%s", c.Meta.Target, c.Meta.Property, clip(first, 300), metaMarker, meta)
	h.Source = "synthesized"
	return h, nil
}

// Bytes renders the crasher as its transcript file.
func (c *Crasher) Bytes() ([]byte, error) {
	h, err := c.header()
	if err != nil {
		return nil, err
	}
	t := *c.Transcript
	t.Header = h
	var buf bytes.Buffer
	if err := transcript.Write(&buf, &t); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Name is the crasher's file name: target, property and a hash of its
// content, so that the same crasher found twice is one file.
func (c *Crasher) Name() (string, error) {
	b, err := c.Bytes()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	target := strings.NewReplacer("/", "-", " ", "-").Replace(c.Meta.Target)
	return fmt.Sprintf("%s-%s-%s-%s.jsonl", c.Transcript.Header.CLI, target, c.Meta.Property, hex.EncodeToString(sum[:])[:10]), nil
}

// Save writes the crasher into dir and returns its path.
func (c *Crasher) Save(dir string) (string, error) {
	b, err := c.Bytes()
	if err != nil {
		return "", err
	}
	name, err := c.Name()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return "", err
	}
	c.Path = p
	return p, nil
}

// LoadCrasher reads a crasher file.
func LoadCrasher(path string) (*Crasher, error) {
	t, err := transcript.ReadFile(path, transcript.Options{})
	if err != nil {
		return nil, err
	}
	i := strings.LastIndex(t.Header.Description, metaMarker)
	if i < 0 {
		return nil, fmt.Errorf("%s: not a fuzz crasher (no %q in the header's description)", path, strings.TrimSpace(metaMarker))
	}
	c := &Crasher{Transcript: t, Path: path}
	if err := json.Unmarshal([]byte(t.Header.Description[i+len(metaMarker):]), &c.Meta); err != nil {
		return nil, fmt.Errorf("%s: the crasher's metadata: %w", path, err)
	}
	return c, nil
}

// Crashers lists the crasher files in dir (*.jsonl), sorted.
func Crashers(dir string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(m)
	return m, nil
}

// Verdict is what a replay of a crasher says.
type Verdict string

// The verdicts of a replay.
const (
	// Fixed: the case no longer breaks its property.
	Fixed Verdict = "FIXED"
	// Failed: it still does.
	Failed Verdict = "FAILED"
	// Error: the case could not be run (an unreadable file, an adapter
	// that does not start, a target that does not exist).
	Error Verdict = "ERROR"
)

// ReplayResult is the outcome of one crasher's replay.
type ReplayResult struct {
	Path    string
	Verdict Verdict
	// Property is the property the crasher breaks.
	Property string
	// Detail says what happened: the failure, or why it could not run.
	Detail string
}

// Replay re-runs one crasher against its target. adapter overrides the
// command of an external crasher ("" keeps the one it was found with).
func Replay(path, adapter string, opts ExternalOptions) ReplayResult {
	c, err := LoadCrasher(path)
	if err != nil {
		return ReplayResult{Path: path, Verdict: Error, Detail: err.Error()}
	}
	r := ReplayResult{Path: path, Property: c.Meta.Property}
	var t Target
	switch {
	case strings.HasPrefix(c.Meta.Target, "reference/"):
		t, err = NewReferenceTarget(strings.TrimPrefix(c.Meta.Target, "reference/"))
	case c.Meta.Target == "external":
		cmd := adapter
		if cmd == "" {
			cmd = c.Meta.Adapter
		}
		if cmd == "" {
			err = fmt.Errorf("no adapter command: pass --adapter")
		} else {
			var e *External
			opts.Profile = c.Meta.Profile
			e, err = NewExternal(cmd, opts)
			if err == nil {
				defer e.Close()
				t = e
			}
		}
	default:
		err = fmt.Errorf("unknown target %q", c.Meta.Target)
	}
	if err != nil {
		r.Verdict, r.Detail = Error, err.Error()
		return r
	}
	f := t.Check(c.Case())
	switch {
	case f == nil:
		r.Verdict, r.Detail = Fixed, "every property holds"
	case f.Property == PropNoPanic && strings.HasPrefix(f.Message, "the case could not run"):
		r.Verdict, r.Detail = Error, f.Message
	case f.Property == c.Meta.Property:
		r.Verdict, r.Detail = Failed, f.Message
	default:
		r.Verdict, r.Detail = Failed, "now breaks "+f.Property+" instead: "+f.Message
	}
	return r
}

// ReplayCommand is the one command that replays a crasher, as printed
// with every finding: agentconform run --transcript when the conformance
// runner plays the case faithfully (the faults are written into the
// transcript, and the caller neither interrupts nor waits out a stall),
// else agentconform fuzz replay, which plays it exactly.
func ReplayCommand(c *Crasher) string {
	if !RunReplays(c) {
		cmd := "agentconform fuzz replay " + shellQuote(c.Path)
		if c.Meta.Target == "external" && c.Meta.Adapter != "" {
			cmd += " --adapter " + shellQuote(c.Meta.Adapter)
		}
		return cmd
	}
	cmd := "agentconform run --transcript " + shellQuote(c.Path)
	if c.Meta.Profile != "" {
		cmd += " --profile " + c.Meta.Profile
	}
	if c.Meta.Target == "external" && c.Meta.Adapter != "" {
		cmd += " --adapter " + shellQuote(c.Meta.Adapter)
	}
	if c.Meta.Seed != 0 {
		cmd += fmt.Sprintf(" --seed %d", c.Meta.Seed)
	}
	return cmd + " --keep"
}

// RunReplays reports whether agentconform run --transcript plays the
// crasher as the fuzzing did (it plays the CLIs' streams: an app-server
// session needs fuzz replay).
func RunReplays(c *Crasher) bool {
	return c.Meta.Materialized && c.Meta.Faults == "" && !c.Meta.Interrupt && !c.Meta.Base && !hasStall(c.Transcript.Steps) &&
		!appserver.IsTranscript(c.Transcript)
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
