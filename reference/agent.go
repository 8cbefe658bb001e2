package reference

import "fmt"

// Agent names a CLI an adapter drives.
type Agent string

// The CLIs.
const (
	Claude Agent = "claude"
	Codex  Agent = "codex"
	Gemini Agent = "gemini"
)

// Agents lists every agent in a stable order.
var Agents = []Agent{Claude, Codex, Gemini}

// ParseAgent checks an agent name.
func ParseAgent(s string) (Agent, error) {
	for _, a := range Agents {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("unknown agent %q (want claude, codex or gemini)", s)
}

// Profile names the event vocabulary an adapter hands its caller.
type Profile string

// The profiles the reference adapters implement.
const (
	// ProfileUnified is the unified event model (docs/protocols/unified.md).
	ProfileUnified Profile = "unified"
	// ProfileShim is the Claude-compatible stream of a shim (docs/protocols/shim.md).
	ProfileShim Profile = "shim"
)

// ParseProfile checks a profile name.
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(s); p {
	case ProfileUnified, ProfileShim:
		return p, nil
	}
	return "", fmt.Errorf("unknown profile %q (want unified or shim)", s)
}

// Permission is what an adapter answers when the CLI asks to use a tool.
type Permission string

// The permission policies. The zero value leaves the CLI's own default in
// place (Claude denies tools that need approval, Gemini's headless default
// mode removes them, Codex runs in its default read-only sandbox).
const (
	PermissionDefault Permission = ""
	PermissionAllow   Permission = "allow"
	PermissionDeny    Permission = "deny"
)

// ParsePermission checks a permission name ("" is the default).
func ParsePermission(s string) (Permission, error) {
	switch p := Permission(s); p {
	case PermissionDefault, PermissionAllow, PermissionDeny:
		return p, nil
	}
	return "", fmt.Errorf("unknown permission %q (want allow or deny)", s)
}
