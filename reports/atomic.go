package reports

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// AtomicFile is a report file being written: the bytes go to a temporary
// file in the same directory, which Commit renames over the final name and
// Abort removes. Until Commit, the final name keeps what it held before
// (or stays absent), so a run killed midway never leaves a half-written
// report behind, only at worst a stray temporary file named
// ".NAME.*.tmp". Its methods may be called concurrently (an Abort from a
// signal handler while another goroutine writes).
type AtomicFile struct {
	mu   sync.Mutex
	path string
	tmp  *os.File
	bw   *bufio.Writer
	done bool
}

// CreateAtomic starts writing the file path, creating its directory.
func CreateAtomic(path string) (*AtomicFile, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	return &AtomicFile{path: path, tmp: tmp, bw: bufio.NewWriterSize(tmp, 64<<10)}, nil
}

// Name is the final name of the file.
func (a *AtomicFile) Name() string { return a.path }

// Write writes to the temporary file.
func (a *AtomicFile) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return 0, fs.ErrClosed
	}
	return a.bw.Write(p)
}

// Commit flushes the temporary file to disk and renames it to the final
// name. The file gets the mode the file it replaces had, else 0644. After
// a failed Commit nothing is left behind and the final name is untouched.
func (a *AtomicFile) Commit() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return fs.ErrClosed
	}
	a.done = true
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(a.path); err == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm()
	}
	err := a.bw.Flush()
	if err == nil {
		err = a.tmp.Chmod(mode)
	}
	if err == nil {
		err = a.tmp.Sync()
	}
	if cerr := a.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(a.tmp.Name(), a.path)
	}
	if err != nil {
		os.Remove(a.tmp.Name())
		return fmt.Errorf("writing %s: %w", a.path, err)
	}
	return nil
}

// Abort removes the temporary file; the final name keeps what it held. It
// does nothing after Commit, so it can be deferred.
func (a *AtomicFile) Abort() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return
	}
	a.done = true
	a.tmp.Close()
	os.Remove(a.tmp.Name())
}

// WriteFileAtomic writes the file path (creating its directory) with
// write, replacing it atomically: path holds either what it held before
// or everything write wrote, never part of it. When write fails, path is
// left as it was.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	a, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	if err := write(a); err != nil {
		a.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return a.Commit()
}
