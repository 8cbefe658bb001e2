//go:build !unix

package fakecli

import (
	"errors"
	"io"
	"os"
	"time"

	"github.com/agentconform/agentconform/fakecli/faults"
)

// treeSupported: process faults do not run here (no process groups or
// signals to imitate); the CLI runs as if they were not asked for.
const treeSupported = false

// runLauncher runs the CLI without a launcher where there are no process
// groups and signals to imitate: it is not handled.
func runLauncher(style, name string, args []string, stdin, stdout, stderr *os.File, errw io.Writer) int {
	return exitHarness
}

// startGrandchild is not supported here.
func startGrandchild(name string, g faults.Grandchild, stdout, stderr io.Writer) (int, error) {
	return 0, errors.New("process faults need a unix system")
}

// runGrandchild lives its time.
func runGrandchild(g faults.Grandchild) int {
	time.Sleep(g.Life)
	return 0
}
