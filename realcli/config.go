// Package realcli runs a real CLI (Claude Code, Codex, Gemini CLI) under an
// adapter in place of a fake, and records what it did in the fakes'
// observation log, so that the conformance checks judge a run on the real
// CLI exactly as they judge one on the fakes (`agentconform run --cli
// real`).
//
// What the adapter starts as claude, codex or gemini is a thin wrapper
// (the same executable that acts as the fakes, told by EnvConfig to wrap
// instead). It starts the real CLI as its child and hands the adapter the
// CLI's process semantics:
//
//   - the CLI stays in the wrapper's process group, so a signal to the
//     group reaches it directly, once; a signal to the wrapper alone is
//     passed on. The two are told apart by a canary, a process of the
//     group that blocks the signals the wrapper passes on: a signal sent to
//     the group is left pending in it (canary_linux.go);
//   - SIGKILL of the wrapper kills the CLI (its parent-death signal);
//   - the wrapper exits as the CLI did: its status, or death by its signal.
//
// A relay process in a session of its own holds the adapter's stdin,
// stdout and stderr: it passes stdin lines to the CLI and the CLI's
// output to the adapter, through the faults a live stream can carry
// (faults.Live: slicer, latency, bandwidth, CR LF, a banner, a stderr
// flood), and logs every line each way. It outlives the wrapper only as
// long as something the CLI started keeps the CLI's stdout open, as the
// adapter would see it without the wrapper.
package realcli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// EnvConfig names the wrapper's configuration file (JSON, a Config),
// which the runner writes for every case. A claude, codex or gemini
// started with it set wraps the real CLI instead of faking one.
const EnvConfig = "AGENTCONFORM_REAL"

// envRole says which of the wrapper's helper processes a process is; see
// Dispatch.
const envRole = "AGENTCONFORM_REAL_ROLE"

// Roles of the helper processes.
const (
	roleRelay     = "relay"
	roleCanaryArm = "canary-arm"
)

// The relay's view of the wrapper (set in its environment).
const (
	envWrapperPID   = "AGENTCONFORM_REAL_PID"
	envWrapperStart = "AGENTCONFORM_REAL_START"
	envResume       = "AGENTCONFORM_REAL_RESUME"
	envStdinTTY     = "AGENTCONFORM_REAL_STDIN_TTY"
)

// Config is what the wrapper needs besides the fakes' own environment
// (the observation log, EnvObserve, and the wire copies, EnvWire).
type Config struct {
	// CLI is "claude", "codex" or "gemini".
	CLI string `json:"cli"`
	// Path is the real CLI's executable: its npm launcher or native binary.
	Path string `json:"path"`
	// Version is the real CLI's version, for the start record.
	Version string `json:"version"`
	// Env are NAME=VALUE settings made over the environment the adapter
	// gave the CLI: the throwaway home and the mock model API.
	Env []string `json:"env,omitempty"`
	// Unset are variables removed from that environment before Env is
	// applied (credentials and settings that would lead the CLI outside
	// its sandbox); a name ending in "*" removes every name it prefixes.
	Unset []string `json:"unset,omitempty"`
	// Faults are the live faults the relay applies to the CLI's output
	// (faults.LiveSupported) and the start delay the wrapper sits out.
	Faults string `json:"faults,omitempty"`
	// Seed drives the faults' random choices.
	Seed int64 `json:"seed,omitempty"`
	// Deadline is when the relay stops waiting for the CLI's output to
	// end: the case's deadline.
	Deadline time.Time `json:"deadline"`
}

// WriteConfig writes c to path as the wrapper reads it.
func WriteConfig(path string, c *Config) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("realcli: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("realcli: writing the wrapper's configuration: %w", err)
	}
	return nil
}

// ReadConfig reads a Config written by WriteConfig.
func ReadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("realcli: reading the wrapper's configuration (%s): %w", EnvConfig, err)
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("realcli: %s: %w", path, err)
	}
	switch {
	case c.CLI != "claude" && c.CLI != "codex" && c.CLI != "gemini":
		return nil, fmt.Errorf("realcli: %s: cli %q is not claude, codex or gemini", path, c.CLI)
	case c.Path == "":
		return nil, fmt.Errorf("realcli: %s: no path to the real %s", path, c.CLI)
	}
	return &c, nil
}

// EnvCanary marks the wrapper's canary (canary_linux.go), so that the
// runner does not count it among the processes an adapter left behind.
const EnvCanary = "AGENTCONFORM_REAL_CANARY"

// EnvCLI marks the real CLI and everything it starts (its value is the
// wrapper's pid): the runner tells a tool's process the CLI left in a
// session of its own, which no adapter can reach, from the adapter's.
const EnvCLI = "AGENTCONFORM_REAL_CLI"

// TranscriptPrefix begins the transcript a wrapper's start record names
// ("real:codex@0.171.0"): the runner tells a real CLI's start from a
// fake's by it.
const TranscriptPrefix = "real:"

// keptMarks are the runner's variables the CLI keeps: the run mark, by
// which the runner finds what the CLI left running, and the case's name.
var keptMarks = map[string]bool{"AGENTCONFORM_RUN_MARK": true, "AGENTCONFORM_CASE": true}

// cliEnv is the environment the real CLI gets: the adapter's (env), less
// what Unset names and the wrapper's own settings, with Env over it.
func (c *Config) cliEnv(env []string) []string {
	drop := func(k string) bool {
		if strings.HasPrefix(k, "AGENTCONFORM_") && !keptMarks[k] {
			// The fakes' settings and the wrapper's own: nothing a real
			// CLI reads, and a CLI that happens to be agentconform's
			// fake must not log into the wrapper's log.
			return true
		}
		for _, u := range c.Unset {
			if p, ok := strings.CutSuffix(u, "*"); ok && strings.HasPrefix(k, p) || u == k {
				return true
			}
		}
		return false
	}
	set := map[string]bool{}
	for _, kv := range c.Env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if drop(k) || set[k] {
			continue
		}
		out = append(out, kv)
	}
	return append(out, c.Env...)
}
