//go:build !unix

package proctree

import "time"

// Reap cannot kill process groups here; it returns ps, none reaped.
func Reap(ps []Proc, grace time.Duration) []Proc { return ps }
