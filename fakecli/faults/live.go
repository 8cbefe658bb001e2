package faults

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// liveFaults are the faults a live stream can carry: those that sit
// between a CLI and its reader (how the bytes travel, what the pipe adds),
// as opposed to those that need the fake's transcript (where the CLI dies,
// which event to drop, a line grown to a size). The recording wrapper
// around a real CLI (package realcli) applies them to the real CLI's
// output; launcher and grandchild are the real CLI's own process tree
// there, and need no fault.
var liveFaults = []string{"slicer", "latency", "bandwidth", "start_delay", "crlf", "no_final_newline", "banner", "stderr_flood"}

// LiveSupported reports whether every fault of spec can be applied to a
// real CLI's live output; the error names the first that cannot, and why.
// Process faults (launcher, grandchild) are reported too: under a real CLI
// the CLI's own launcher and tools are what the case sees.
func LiveSupported(spec string) error {
	p, err := Parse(spec, 1)
	if err != nil {
		return err
	}
	if p == nil {
		return nil
	}
	for _, f := range p.faults {
		if !slices.Contains(liveFaults, f.def.name) {
			return fmt.Errorf("fault %s needs the fake CLI (%s): a real CLI's output can only be sliced, delayed, throttled, re-terminated or surrounded on its way to the adapter", f.def.name, f.def.kind)
		}
	}
	return nil
}

// Live applies a plan to a stream relayed as it happens: a real CLI's
// stdout and stderr, line by line, on their way to the adapter. The
// writer faults act as Stdout's do; crlf ends every line with "\r\n",
// no_final_newline holds each line's newline back until the next line
// comes (so the last line never gets one), banner writes its line before
// the stdout line it names, and stderr_flood writes its bytes to stderr
// before the first stdout line. Faults a live stream cannot carry (see
// LiveSupported) make NewLive fail.
type Live struct {
	p        *Plan
	out, err io.Writer

	crlf, holdNewline bool
	banner            *fault
	flood             *fault

	lines   int    // stdout lines written (the banner counts)
	pending string // a held line end
}

// NewLive applies p to stdout and stderr, the adapter's ends. The returned
// Live writes stdout lines with Line and stderr with Stderr; Close ends
// the stream. A nil plan relays unchanged.
func NewLive(p *Plan, stdout, stderr io.Writer) (*Live, error) {
	l := &Live{p: p, out: stdout, err: stderr}
	if p == nil {
		return l, nil
	}
	for _, f := range p.faults {
		switch f.def.name {
		case "crlf":
			l.crlf = true
			p.record(f, `"\r\n" ends every newline-terminated stdout line`)
		case "no_final_newline":
			l.holdNewline = true
			p.record(f, "each stdout line's newline is held until the next line comes: the last line has none")
		case "banner":
			l.banner = f
		case "stderr_flood":
			l.flood = f
		case "slicer", "latency", "bandwidth", "start_delay":
		default:
			return nil, fmt.Errorf("faults: %s cannot be applied to a live stream", f.def.name)
		}
	}
	l.out = p.Stdout(stdout, func(int) {})
	return l, nil
}

// Line writes one stdout line. line holds its newline, unless it is the
// stream's unterminated end. It returns the bytes written, every one the
// faults added included, and the first error of the adapter's stdout.
func (l *Live) Line(line []byte) (int, error) {
	n := 0
	if l.lines == 0 && l.flood != nil {
		if err := l.writeFlood(); err != nil {
			return 0, err
		}
	}
	if l.banner != nil && int64(l.lines+1) == l.banner.ints["at"] {
		k, err := l.write([]byte(l.banner.strs["text"] + "\n"))
		n += k
		if err != nil {
			return n, err
		}
		l.p.record(l.banner, fmt.Sprintf("non-JSON line %q on stdout before the real CLI's line %d", l.banner.strs["text"], l.lines+1), "at", strconv.FormatInt(l.banner.ints["at"], 10))
		l.banner = nil
	}
	body, newline := line, false
	if len(body) > 0 && body[len(body)-1] == '\n' {
		body, newline = body[:len(body)-1], true
	}
	var b []byte
	b = append(b, l.pending...)
	l.pending = ""
	b = append(b, body...)
	if newline {
		end := "\n"
		if l.crlf && (len(body) == 0 || body[len(body)-1] != '\r') {
			end = "\r\n"
		}
		if l.holdNewline {
			l.pending = end
		} else {
			b = append(b, end...)
		}
	}
	k, err := l.write(b)
	return n + k, err
}

// write is one Write of the (fault-wrapped) stdout; a line counts once
// written.
func (l *Live) write(b []byte) (int, error) {
	l.lines++
	return l.out.Write(b)
}

// writeFlood writes the stderr flood, as stderr_flood's steps do.
func (l *Live) writeFlood() error {
	total := int(l.flood.ints["bytes"])
	full := floodText(floodLine - 1)
	var sb strings.Builder
	for left := total; left > 0; {
		n := min(left, floodLine)
		text := full
		if n < floodLine {
			text = full[:n-1]
		}
		sb.WriteString(text)
		sb.WriteByte('\n')
		left -= n
	}
	l.p.record(l.flood, fmt.Sprintf("%d bytes of stderr before the real CLI's first stdout line", total))
	l.flood = nil
	_, err := io.WriteString(l.err, sb.String())
	return err
}

// Stderr writes stderr bytes unchanged.
func (l *Live) Stderr(b []byte) (int, error) { return l.err.Write(b) }

// Close ends the stream: a held newline is never written, and a flood
// not yet written (the CLI wrote no stdout line) is written now.
func (l *Live) Close() error {
	l.pending = ""
	if l.flood != nil {
		return l.writeFlood()
	}
	return nil
}
