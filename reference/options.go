package reference

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
	"time"
)

// Options configure a Translator. The zero value works: the real clock,
// random event ids, and no session configuration beyond what the CLI
// reports.
type Options struct {
	// Clock stamps unified events; nil means time.Now. Inject a fixed
	// clock to make output reproducible.
	Clock func() time.Time
	// NewID returns a fresh unified event id; nil means ids made of a
	// random per-translator prefix and a counter. Inject a counter to make
	// output reproducible.
	NewID func() string

	// Cwd is the CLI's working directory. It, Model, Permission and
	// Sandbox fill the unified sessionStarted config and the shim's
	// system/init where the CLI itself does not report them.
	Cwd string
	// Model is the model the CLI was asked for.
	Model string
	// Permission is the adapter's permission policy.
	Permission Permission
	// Sandbox is Codex's sandbox mode (read-only, workspace-write,
	// danger-full-access), when one was chosen.
	Sandbox string
}

func (o Options) clock() func() time.Time {
	if o.Clock != nil {
		return o.Clock
	}
	return time.Now
}

func (o Options) newID() func() string {
	if o.NewID != nil {
		return o.NewID
	}
	return randomIDs()
}

// randomIDs returns an id source: "ev-<16 hex digits>-<n>", the prefix
// random per source so that ids of different sessions do not collide.
func randomIDs() func() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; fall back to the
		// clock rather than give up.
		t := time.Now().UnixNano()
		for i := range b {
			b[i] = byte(t >> (8 * i))
		}
	}
	prefix := "ev-" + hex.EncodeToString(b[:]) + "-"
	var n atomic.Int64
	return func() string { return prefix + strconv.FormatInt(n.Add(1), 10) }
}

// CounterIDs returns an id source giving prefix+"1", prefix+"2", ...: the
// deterministic NewID for tests and oracles.
func CounterIDs(prefix string) func() string {
	var n atomic.Int64
	return func() string { return prefix + strconv.FormatInt(n.Add(1), 10) }
}

// FixedClock returns a clock that always says t: the deterministic Clock
// for tests and oracles.
func FixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }
