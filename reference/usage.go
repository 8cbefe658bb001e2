package reference

import "github.com/agentconform/agentconform/reference/unified"

// usage is token usage in the terms every CLI's numbers map onto without
// loss of meaning: uncached input, cache reads and cache writes (which
// together make the whole prompt), output, and reasoning (part of output)
// when reported.
type usage struct {
	uncached   int64
	cacheRead  int64
	cacheWrite int64
	output     int64
	reasoning  *int64
	total      *int64 // the CLI's own total, when it gives one
}

// input is every prompt token, cached or not.
func (u *usage) input() int64 { return u.uncached + u.cacheRead + u.cacheWrite }

// totalTokens is the CLI's total, or input plus output.
func (u *usage) totalTokens() int64 {
	if u.total != nil {
		return *u.total
	}
	return u.input() + u.output
}

// add accumulates v into u (for a session's total). The total is the sum
// of both totals, so a CLI's own totals stay as they were reported.
func (u *usage) add(v *usage) {
	total := u.totalTokens() + v.totalTokens()
	u.uncached += v.uncached
	u.cacheRead += v.cacheRead
	u.cacheWrite += v.cacheWrite
	u.output += v.output
	if v.reasoning != nil {
		u.reasoning = ptr(deref(u.reasoning) + *v.reasoning)
	}
	u.total = &total
}

// sub returns u minus prev, field by field: the usage of one turn when the
// CLI reports running totals (Codex). Negative differences (a counter that
// went backwards) are clamped to zero.
func (u *usage) sub(prev *usage) *usage {
	if prev == nil {
		c := *u
		return &c
	}
	d := &usage{
		uncached:   clamp(u.uncached - prev.uncached),
		cacheRead:  clamp(u.cacheRead - prev.cacheRead),
		cacheWrite: clamp(u.cacheWrite - prev.cacheWrite),
		output:     clamp(u.output - prev.output),
	}
	if u.reasoning != nil {
		d.reasoning = ptr(clamp(*u.reasoning - deref(prev.reasoning)))
	}
	return d
}

func clamp(v int64) int64 { return max(v, 0) }

// unified renders u as a unified TokenUsage.
func (u *usage) unified() *unified.TokenUsage {
	if u == nil {
		return nil
	}
	return &unified.TokenUsage{
		InputTokens:     u.input(),
		OutputTokens:    u.output,
		CachedTokens:    ptr(u.cacheRead),
		ReasoningTokens: u.reasoning,
		TotalTokens:     u.totalTokens(),
	}
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
