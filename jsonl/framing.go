package jsonl

import (
	"strconv"

	"github.com/agentconform/agentconform/finding"
)

// FramingFindings returns the findings for the framing flags the Reader set
// on l (BOM, CRLF, TooLong, NoNewline), in that order. Line and Offset are
// taken from l, Column is relative to the line's first byte (the BOM
// included), and File is left empty for the caller.
func FramingFindings(l Line) []finding.Finding {
	if !l.BOM && !l.CR && !l.TooLong && !l.NoNewline {
		return nil
	}
	var fs []finding.Finding
	at := func(r *finding.Rule, col int64, msg string) finding.Finding {
		return finding.Finding{Rule: r, Line: l.Number, Offset: l.Offset, Column: int(col), Message: msg}
	}
	var bomLen int64
	if l.BOM {
		bomLen = int64(len(bom))
		fs = append(fs, at(RuleBOM, 0, "input begins with a UTF-8 byte order mark (EF BB BF)"))
	}
	end := bomLen + l.Len // column of the "\r", or of the "\n"
	if l.CR {
		fs = append(fs, at(RuleCRLF, end, `line ends with "\r\n" instead of "\n"`))
	}
	if l.TooLong {
		f := at(RuleLineTooLong, 0, "line is "+strconv.FormatInt(l.Len, 10)+
			" bytes, over the limit of "+strconv.FormatInt(l.Limit, 10)+" bytes; it was skipped unparsed")
		f.Expected = "at most " + strconv.FormatInt(l.Limit, 10) + " bytes"
		f.Actual = strconv.FormatInt(l.Len, 10) + " bytes"
		fs = append(fs, f)
	}
	if l.NoNewline {
		if l.CR {
			end++
		}
		fs = append(fs, at(RuleNoFinalNewline, end, `last line has no terminating "\n"; line readers may drop or hold it`))
	}
	return fs
}
