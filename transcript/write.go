package transcript

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// Write writes t in the agentconform/v1 form: the header line, then one
// line per step. Load reads back what Write wrote.
func Write(w io.Writer, t *Transcript) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	h := t.Header
	if h.Format == "" {
		h.Format = Format
	}
	if err := enc.Encode(h); err != nil {
		return fmt.Errorf("writing transcript header: %w", err)
	}
	for i, s := range t.Steps {
		if err := enc.Encode(s); err != nil {
			return fmt.Errorf("writing transcript step %d: %w", i+1, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing transcript: %w", err)
	}
	return nil
}
