//go:build !linux

package realcli

import (
	"fmt"
	"os"
)

// wrap needs Linux: the canary reads /proc, and the CLI's parent-death
// signal is a Linux feature.
func wrap(cfg *Config, args []string) int {
	fmt.Fprintf(os.Stderr, "agentconform real %s: runs on the real CLIs need Linux\n", cfg.CLI)
	return exitHarness
}

// armCanary is never asked for off Linux.
func armCanary() int { return exitHarness }

// unreadBytes is not known here.
func unreadBytes(*os.File) (int, bool) { return 0, false }
