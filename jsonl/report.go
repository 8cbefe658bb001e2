package jsonl

import (
	"strconv"

	"github.com/agentconform/agentconform/finding"
)

// pending is a finding under construction: its JSON pointer is collected
// token by token, innermost first, as the recursion unwinds.
type pending struct {
	f    finding.Finding
	toks []string
}

// Slots of the per-line counters of repeatable findings.
const (
	dupSlot = iota
	loneSlot
	precisionSlot
	numSlots
)

// slotRules maps counter slots back to their rules.
var slotRules = [numSlots]*finding.Rule{RuleDuplicateKey, RuleLoneSurrogate, RuleNumberPrecision}

// capped counts one more finding in slot and reports whether the line
// already has maxPerRule of them, in which case the finding is not made.
// This keeps a hostile line from producing a finding per byte.
func (d *decoder) capped(slot int) bool {
	d.counts[slot]++
	return d.counts[slot] > maxPerRule
}

// addToken appends a pointer token to every finding made since index n0:
// they all lie inside the member or element the token names.
func (d *decoder) addToken(n0 int, tok string) {
	for i := n0; i < len(d.finds); i++ {
		d.finds[i].toks = append(d.finds[i].toks, tok)
	}
}

// deep records a too-deep finding for the container opening at col and
// stops decoding.
func (d *decoder) deep(col int) {
	d.failed = true
	d.tooDeep = true
	d.errIdx = len(d.finds)
	lim := strconv.Itoa(d.maxDepth)
	d.finds = append(d.finds, pending{f: finding.Finding{
		Rule:     RuleTooDeep,
		Column:   col,
		Message:  "objects and arrays nest deeper than the limit of " + lim + " levels",
		Expected: "at most " + lim + " levels of nesting",
		Actual:   "more than " + lim,
	}})
}

// fail records a syntax error at col and stops decoding.
func (d *decoder) fail(col int, msg, expected string) {
	d.failed = true
	d.errIdx = len(d.finds)
	d.finds = append(d.finds, pending{f: finding.Finding{
		Rule:     RuleInvalidJSON,
		Column:   col,
		Message:  "malformed JSON: " + msg,
		Expected: expected,
		Actual:   describe(d.data, col),
	}})
}

// unexpected records a syntax error for whatever byte is at col, which
// appears where the text says.
func (d *decoder) unexpected(col int, where, expected string) {
	if col >= len(d.data) {
		d.fail(col, "line ends "+where+" (truncated?)", expected)
		return
	}
	d.fail(col, "unexpected character "+where, expected)
}

// Descriptions of what the decoder expected, for findings.
const (
	expectValue  = "a JSON value (object, array, string, number, true, false or null)"
	expectKey    = `a key in double quotes`
	expectEscape = `an escape: \" \\ \/ \b \f \n \r \t or \uXXXX`
)
