package fakecli

import (
	"io"
	"os"
)

// isTerminalReader reports whether r is a terminal (a real CLI's
// process.stdin.isTTY / is_terminal()).
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isTerminalFile(f)
}

// isTerminalWriter reports whether w is a terminal.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminalFile(f)
}

// isTerminalFile asks without f.Fd(), which would switch the file to
// blocking mode.
func isTerminalFile(f *os.File) bool {
	if f == nil {
		return false
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	tty := false
	if err := sc.Control(func(fd uintptr) { tty = isTerminalFD(fd) }); err != nil {
		return false
	}
	return tty
}
