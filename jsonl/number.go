package jsonl

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/agentconform/agentconform/finding"
)

// smallInts holds the boxed float64 values 0..1023 so that common small
// integers cost no allocation. The values are immutable and shared.
var smallInts = func() (t [1024]any) {
	for i := range t {
		t[i] = float64(i)
	}
	return t
}()

// cachedNum is one entry of the number cache: a float64's bits and its
// boxed interface value.
type cachedNum struct {
	bits uint64
	v    any
}

// number parses a number; d.pos is at '-' or a digit. Integers of up to
// 2^53-1 in magnitude take an exact fast path; other numbers go through
// strconv.ParseFloat. Numbers a float64 cannot hold are reported and kept
// as json.Number.
func (d *decoder) number() any {
	data := d.data
	start := d.pos
	i := start
	neg := data[i] == '-'
	if neg {
		i++
	}
	if i >= len(data) || data[i]-'0' > 9 {
		d.unexpected(i, "after '-'", "a digit")
		return nil
	}
	var mant uint64
	digits := 0
	nonzero := false
	if data[i] == '0' {
		i++
	} else {
		nonzero = true
		for i < len(data) && data[i]-'0' <= 9 {
			if digits < 19 {
				mant = mant*10 + uint64(data[i]-'0')
			}
			digits++
			i++
		}
	}
	isInt := true
	if i < len(data) && data[i] == '.' {
		isInt = false
		i++
		j := i
		for i < len(data) && data[i]-'0' <= 9 {
			if data[i] != '0' {
				nonzero = true
			}
			i++
		}
		if i == j {
			d.unexpected(i, "after a decimal point", "a digit")
			return nil
		}
	}
	if i < len(data) && data[i]|0x20 == 'e' {
		isInt = false
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := i
		for i < len(data) && data[i]-'0' <= 9 {
			i++
		}
		if i == j {
			d.unexpected(i, "in an exponent", "a digit")
			return nil
		}
	}
	d.pos = i
	if isInt {
		if digits < 16 || (digits == 16 && mant <= maxSafeInt) {
			if !neg && mant < uint64(len(smallInts)) {
				return smallInts[mant]
			}
			f := float64(mant)
			if neg {
				f = -f
			}
			return d.box(f)
		}
		lit := string(data[start:i])
		if d.capped(precisionSlot) {
			return json.Number(lit)
		}
		d.precision(start, "integer "+clip(lit, 40)+" is beyond ±(2^53-1); JavaScript and float64 decoders round it (kept exactly as json.Number)")
		return json.Number(lit)
	}
	f, err := strconv.ParseFloat(string(data[start:i]), 64)
	if err != nil || (f == 0 && nonzero) {
		lit := string(data[start:i])
		if d.capped(precisionSlot) {
			return json.Number(lit)
		}
		if err != nil {
			d.precision(start, "number "+clip(lit, 40)+" is outside the float64 range and overflows to ±Inf (kept exactly as json.Number)")
		} else {
			d.precision(start, "number "+clip(lit, 40)+" is too small for float64 and underflows to 0 (kept exactly as json.Number)")
		}
		return json.Number(lit)
	}
	return d.box(f)
}

// box returns f as an interface value, reusing the boxed value of a recent
// equal number (token counts, progress fractions) to save an allocation.
func (d *decoder) box(f float64) any {
	bits := math.Float64bits(f)
	e := &d.nums[(bits*0x9e3779b97f4a7c15)>>(64-numCacheBits)]
	if e.v != nil && e.bits == bits {
		return e.v
	}
	var v any = f
	e.bits, e.v = bits, v
	return v
}

// precision records a number-precision finding at column col.
func (d *decoder) precision(col int, msg string) {
	d.finds = append(d.finds, pending{f: finding.Finding{
		Rule:     RuleNumberPrecision,
		Column:   col,
		Message:  msg,
		Expected: "a number within ±(2^53-1) or the float64 range",
	}})
}
