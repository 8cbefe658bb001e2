package jsonl

// esc is the ASCII escape byte that starts every terminal control sequence.
const esc = 0x1b

// colMap maps columns of the text Parse decodes back to columns of the line
// it was given, after a BOM, terminal escapes or an SSE prefix were removed.
type colMap struct {
	shift int   // added to every column while idx is nil
	idx   []int // idx[c] is the original column of column c; one extra entry for the end
}

// orig returns the original column of column c.
func (m *colMap) orig(c int) int {
	if m.idx == nil {
		return c + m.shift
	}
	if c >= len(m.idx) {
		c = len(m.idx) - 1
	}
	return m.idx[c]
}

// drop records that n bytes were removed from the front of the text.
func (m *colMap) drop(n int) {
	if m.idx != nil {
		m.idx = m.idx[n:]
		return
	}
	m.shift += n
}

// stripANSI removes terminal escape sequences from b: CSI (ESC [ ... final),
// OSC, DCS, SOS, PM and APC strings (ESC ] ... BEL or ESC \), nF and Fe
// sequences (ESC, intermediates, final), and any stray ESC. It returns the
// remaining text, its column map onto the line, how many sequences it
// removed, and the first one, for the finding.
func stripANSI(b []byte, m colMap) (out []byte, nm colMap, count int, first []byte) {
	out = make([]byte, 0, len(b))
	idx := make([]int, 0, len(b)+1)
	for i := 0; i < len(b); {
		if b[i] != esc {
			out = append(out, b[i])
			idx = append(idx, m.orig(i))
			i++
			continue
		}
		n := escLen(b[i:])
		if count == 0 {
			first = b[i : i+n]
		}
		count++
		i += n
	}
	idx = append(idx, m.orig(len(b)))
	return out, colMap{idx: idx}, count, first
}

// escLen returns the length of the escape sequence at the start of b, which
// begins with ESC.
func escLen(b []byte) int {
	if len(b) < 2 {
		return 1
	}
	switch b[1] {
	case '[': // CSI: parameter bytes, intermediate bytes, one final byte
		i := 2
		for i < len(b) && b[i] >= 0x30 && b[i] <= 0x3f {
			i++
		}
		for i < len(b) && b[i] >= 0x20 && b[i] <= 0x2f {
			i++
		}
		if i < len(b) && b[i] >= 0x40 && b[i] <= 0x7e {
			i++
		}
		return i
	case ']', 'P', 'X', '^', '_': // string up to BEL or ST (ESC \)
		for i := 2; i < len(b); i++ {
			switch b[i] {
			case 0x07:
				return i + 1
			case esc:
				if i+1 < len(b) && b[i+1] == '\\' {
					return i + 2
				}
				return i
			}
		}
		return len(b)
	}
	// nF (ESC, intermediates 0x20-0x2F, final 0x30-0x7E) and Fe/Fp/Fs
	// (ESC and one byte 0x30-0x7E).
	i := 1
	for i < len(b) && b[i] >= 0x20 && b[i] <= 0x2f {
		i++
	}
	if i < len(b) && b[i] >= 0x30 && b[i] <= 0x7e {
		i++
	}
	return i
}
