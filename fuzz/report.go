package fuzz

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// The environment the fuzz targets read (agentconform fuzz sets it).
const (
	// EnvAdapter is the shell command of the adapter FuzzExternalAdapter
	// drives.
	EnvAdapter = "AGENTCONFORM_FUZZ_ADAPTER"
	// EnvFakeExe is the executable installed as the fakes for it ("": the
	// test binary).
	EnvFakeExe = "AGENTCONFORM_FUZZ_FAKE"
	// EnvDeadline bounds one external execution (a Go duration).
	EnvDeadline = "AGENTCONFORM_FUZZ_DEADLINE"
	// EnvAgents restricts external inputs to these CLIs (comma-separated).
	EnvAgents = "AGENTCONFORM_FUZZ_AGENTS"
	// EnvSignalInterrupt makes the runner interrupt with SIGINT.
	EnvSignalInterrupt = "AGENTCONFORM_FUZZ_SIGNAL_INTERRUPT"
	// EnvProfile is "acp" when the adapter command starts an ACP agent,
	// which EnvEditor's editor drives (agentconform fuzz --profile acp).
	EnvProfile = "AGENTCONFORM_FUZZ_PROFILE"
	// EnvEditor is the agentconform binary whose acp-editor plays the
	// editor for an ACP agent.
	EnvEditor = "AGENTCONFORM_FUZZ_EDITOR"
	// EnvCrashers is the directory failures are shrunk and saved into;
	// unset, a failure is reported as found.
	EnvCrashers = "AGENTCONFORM_FUZZ_CRASHERS"
)

// CrashersDir is where saved crashers live, relative to the package
// (testdata/crashers); KnownFile lists, in that directory, the crashers
// that show open issues.
const (
	CrashersDir = "testdata/crashers"
	KnownFile   = "KNOWN"
)

// Report describes a failure for the test log: the property, the input
// and how it broke, and, when dir is not empty, the shrunk crasher saved
// there with the commands that replay it.
func Report(t Target, in Input, f *Failure, dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s breaks property %s\ninput: %s\n%s\n", t.Name(), f.Property, in, f.Message)
	if dir == "" {
		fmt.Fprintf(&b, "(to shrink it and save it as a crasher, re-run this input with %s=%s, or use agentconform fuzz)", EnvCrashers, CrashersDir)
		return b.String()
	}
	c := Shrink(t, in, f)
	if c == nil {
		fmt.Fprintf(&b, "(it could not be shrunk)")
		return b.String()
	}
	p, err := c.Save(dir)
	if err != nil {
		fmt.Fprintf(&b, "(saving the crasher: %v)", err)
		return b.String()
	}
	fmt.Fprintf(&b, "shrunk to %s (%d steps: %s), which breaks %s: %s\nreplay: %s\n",
		p, len(c.Transcript.Steps), c.Meta.Input, c.Meta.Property, firstLine(c.Meta.Message), ReplayCommand(c))
	fmt.Fprintf(&b, "%s%s\n", crasherMarker, p)
	return b.String()
}

// crasherMarker starts the line of a report that names the saved crasher
// (agentconform fuzz looks for it).
const crasherMarker = "agentconform-fuzz-crasher: "

// CrasherPaths returns the crashers a test log names.
func CrasherPaths(log string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, crasherMarker); i >= 0 {
			p := strings.TrimSpace(line[i+len(crasherMarker):])
			if len(out) == 0 || out[len(out)-1] != p {
				out = append(out, p)
			}
		}
	}
	return out
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// A KnownIssue is an open issue: a saved crasher listed in KNOWN. A
// failure of the same target with the same signature (the property and
// the message's first line, quoted strings and numbers aside) is the same
// issue, which the fuzzing does not stop at again.
type KnownIssue struct {
	// Name is the crasher's file name.
	Name string
	// Target and Property are the crasher's; Message is its signature.
	Target, Property, Message string
}

var (
	knownOnce   sync.Once
	knownIssues []KnownIssue
)

// LoadKnown reads the open issues of a crashers directory: KNOWN lists
// crasher file names, one per line, "#" starting a comment.
func LoadKnown(dir string) ([]KnownIssue, error) {
	f, err := os.Open(filepath.Join(dir, KnownFile))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []KnownIssue
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		name := strings.TrimSpace(line)
		if name == "" {
			continue
		}
		c, err := LoadCrasher(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("%s lists %s: %w", KnownFile, name, err)
		}
		out = append(out, KnownIssue{Name: name, Target: c.Meta.Target, Property: c.Meta.Property,
			Message: signature(&Failure{Property: c.Meta.Property, Message: c.Meta.Message})})
	}
	return out, sc.Err()
}

// knownIssue returns the name of the open issue f is an instance of, if
// any (fuzz/testdata/crashers/KNOWN of the checkout, read once).
func knownIssue(t Target, f *Failure) string {
	knownOnce.Do(func() {
		if root, err := CheckoutRoot(); err == nil {
			knownIssues, _ = LoadKnown(filepath.Join(root, "fuzz", CrashersDir))
		}
	})
	return MatchKnown(knownIssues, knownAs(t), f)
}

// MatchKnown returns the name of the known issue f of target is, or "".
func MatchKnown(ks []KnownIssue, target string, f *Failure) string {
	sig := signature(f)
	for _, k := range ks {
		if k.Target == target && k.Property == f.Property && k.Message == sig {
			return k.Name
		}
	}
	return ""
}
