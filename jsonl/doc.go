// Package jsonl reads newline-delimited JSON the way agentconform checks
// it: strictly, in constant memory, and fast.
//
// A Reader cuts any io.Reader into Lines, recording framing facts (BOM,
// CRLF, missing final newline, over-long lines) that FramingFindings turns
// into findings. Parse decodes one line with a hand-written single-pass
// decoder into the shapes encoding/json produces for an `any`, and reports
// everything a strict consumer would trip over: non-JSON leakage, malformed
// or truncated JSON, several values or a non-object on one line, invalid
// UTF-8, terminal escapes, SSE prefixes, duplicate keys, lone surrogates,
// excessive nesting and numbers a float64 cannot hold. Locate then places
// Parse's findings in a file.
//
// See the package example for the loop that ties them together.
package jsonl
