package jsonl

import (
	"context"
	"errors"
	"io"
	"testing"
)

// endless is input that never ends and never has a newline (/dev/zero);
// it cancels its context after cancelAfter reads and gives up (with
// io.ErrUnexpectedEOF) after limit reads, so a Reader that does not stop
// fails the test instead of hanging it.
type endless struct {
	reads, cancelAfter, limit int
	cancel                    context.CancelFunc
}

func (e *endless) Read(p []byte) (int, error) {
	e.reads++
	if e.reads == e.cancelAfter {
		e.cancel()
	}
	if e.reads > e.limit {
		return 0, io.ErrUnexpectedEOF
	}
	n := min(len(p), 64<<10) // as much as a pipe holds
	clear(p[:n])
	return n, nil
}

// TestReaderStopsWhenContextIsDone: while it grows its buffer for a long
// line and while it skips a line that is too long, the Reader stops at the
// first read after its context is done and returns the context's error,
// then again on every call.
func TestReaderStopsWhenContextIsDone(t *testing.T) {
	for name, max := range map[string]int64{"growing": DefaultMaxLineBytes, "skipping": 1 << 10} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			in := &endless{cancelAfter: 50, limit: 100000, cancel: cancel}
			r := NewReader(in, Options{MaxLineBytes: max, Context: ctx})
			_, err := r.Next()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Next = %v after %d reads, want the context's error", err, in.reads)
			}
			if in.reads != 50 {
				t.Errorf("%d reads; want none after the one that cancelled", in.reads)
			}
			if _, err2 := r.Next(); !errors.Is(err2, context.Canceled) {
				t.Errorf("second Next = %v", err2)
			}
		})
	}
}

// TestReaderContextLinesBeforeTheCancel: lines read before the context
// was done still come out.
func TestReaderContextLinesBeforeTheCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := NewReader(&oneThenCancel{data: []byte("{}\n{\"a\":1}\n"), cancel: cancel}, Options{Context: ctx})
	for i := 0; i < 2; i++ {
		if _, err := r.Next(); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	if _, err := r.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("after the lines: %v", err)
	}
}

type oneThenCancel struct {
	data   []byte
	cancel context.CancelFunc
}

func (o *oneThenCancel) Read(p []byte) (int, error) {
	n := copy(p, o.data)
	o.data = o.data[n:]
	if len(o.data) == 0 {
		o.cancel()
	}
	return n, nil
}
