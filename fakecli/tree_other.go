//go:build !unix

package fakecli

import (
	"io"
	"os"
)

// treeSupported: process faults do not run here (no process groups or
// signals to imitate); the CLI runs as if they were not asked for.
const treeSupported = false

// runLauncher runs the CLI without a launcher where there are no process
// groups and signals to imitate: it is not handled.
func runLauncher(style string, every bool, name string, args []string, stdin, stdout, stderr *os.File, errw io.Writer) int {
	return exitHarness
}
