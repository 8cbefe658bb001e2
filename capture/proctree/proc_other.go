//go:build !linux

package proctree

// Scan needs /proc.
func Scan(m Match) ([]Proc, error) { return nil, ErrUnsupported }

// Read needs /proc.
func Read(pid int) (Proc, error) { return Proc{}, ErrUnsupported }

func readStat(pid int) (Proc, error) { return Proc{}, ErrUnsupported }
