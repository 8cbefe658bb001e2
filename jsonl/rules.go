package jsonl

import "github.com/agentconform/agentconform/finding"

// Sources of the rules: sections of the protocol reference (docs/protocols)
// that say what each rule enforces and on what evidence.
const (
	srcSyntax        = "docs/protocols/jsonl.md#json-syntax"
	srcNotJSON       = "docs/protocols/jsonl.md#not-json"
	srcNoEscapes     = "docs/protocols/jsonl.md#no-escapes"
	srcEncoding      = "docs/protocols/jsonl.md#encoding"
	srcLineEndings   = "docs/protocols/jsonl.md#line-endings"
	srcDuplicateKeys = "docs/protocols/jsonl.md#duplicate-keys"
	srcNumbersDepth  = "docs/protocols/jsonl.md#numbers-and-depth"
	srcLineSize      = "docs/protocols/jsonl.md#line-size"
)

// Framing rules: how lines are delimited and encoded. FramingFindings
// reports them from the flags the Reader sets on each Line (Parse reports
// jsonl/bom as well when a line it is given starts with a BOM).
var (
	// RuleLineTooLong flags lines longer than the reader's limit; clients
	// with a fixed buffer (the Python SDK defaults to 1 MiB) fail on them.
	RuleLineTooLong = &finding.Rule{
		ID:          "jsonl/line-too-long",
		Requirement: "Each line must fit within the reader's line-length limit (Options.MaxLineBytes, 64 MiB by default); longer lines are skipped unparsed.",
		Source:      srcLineSize,
		Level:       finding.Must,
	}
	// RuleBOM flags a UTF-8 byte order mark, which JSON texts must not carry.
	RuleBOM = &finding.Rule{
		ID:          "jsonl/bom",
		Requirement: "The stream must not begin with a UTF-8 byte order mark (EF BB BF), and no line may start with one.",
		Source:      srcEncoding,
		Level:       finding.Must,
	}
	// RuleCRLF flags lines terminated by "\r\n" instead of "\n".
	RuleCRLF = &finding.Rule{
		ID:          "jsonl/crlf",
		Requirement: "Lines should end with a bare \"\\n\", not \"\\r\\n\".",
		Source:      srcLineEndings,
		Level:       finding.Should,
	}
	// RuleNoFinalNewline flags a last line without "\n"; line readers may
	// drop or hold such a tail.
	RuleNoFinalNewline = &finding.Rule{
		ID:          "jsonl/no-final-newline",
		Requirement: "The last line should be terminated by \"\\n\" like every other line.",
		Source:      srcLineEndings,
		Level:       finding.Should,
	}
)

// Encoding and syntax rules: what Parse reports about one line.
var (
	// RuleInvalidUTF8 flags bytes that are not valid UTF-8.
	RuleInvalidUTF8 = &finding.Rule{
		ID:          "jsonl/invalid-utf8",
		Requirement: "Every line must be valid UTF-8; invalid bytes must be replaced before they are written.",
		Source:      srcEncoding,
		Level:       finding.Must,
	}
	// RuleANSIEscape flags raw ESC bytes (terminal colour or cursor codes).
	RuleANSIEscape = &finding.Rule{
		ID:          "jsonl/ansi-escape",
		Requirement: "Lines must not contain raw terminal escape sequences (ANSI colour codes); stdout carries plain JSON only.",
		Source:      srcNoEscapes,
		Level:       finding.Must,
	}
	// RuleSSEPrefix flags Server-Sent-Events framing ("data: {...}").
	RuleSSEPrefix = &finding.Rule{
		ID:          "jsonl/sse-prefix",
		Requirement: "Lines must not carry a \"data:\" or other SSE prefix.",
		Source:      srcNoEscapes,
		Level:       finding.Must,
	}
	// RuleNotJSON flags lines that are not JSON at all: banners, log lines,
	// stderr leaking into stdout, binary garbage.
	RuleNotJSON = &finding.Rule{
		ID:          "jsonl/not-json",
		Requirement: "Every non-empty line must be JSON; banners, logs and other stderr output must not appear on stdout.",
		Source:      srcNotJSON,
		Level:       finding.Must,
	}
	// RuleInvalidJSON flags lines that start like JSON but are malformed
	// (truncated, raw control bytes in strings, bad escapes, ...).
	RuleInvalidJSON = &finding.Rule{
		ID:          "jsonl/invalid-json",
		Requirement: "Every line must be well-formed JSON text.",
		Source:      srcSyntax,
		Level:       finding.Must,
	}
	// RuleMultipleValues flags more than one JSON value on one line.
	RuleMultipleValues = &finding.Rule{
		ID:          "jsonl/multiple-values",
		Requirement: "Each line must hold exactly one JSON value.",
		Source:      srcSyntax,
		Level:       finding.Must,
	}
	// RuleNotObject flags lines whose JSON value is not an object.
	RuleNotObject = &finding.Rule{
		ID:          "jsonl/not-object",
		Requirement: "Each line's JSON value must be an object.",
		Source:      srcSyntax,
		Level:       finding.Must,
	}
	// RuleDuplicateKey flags a name repeated inside one object; decoders
	// disagree on which value wins (Parse keeps the first).
	RuleDuplicateKey = &finding.Rule{
		ID:          "jsonl/duplicate-key",
		Requirement: "The names within an object should be unique.",
		Source:      srcDuplicateKeys,
		Level:       finding.Should,
	}
	// RuleLoneSurrogate flags an escaped unpaired UTF-16 surrogate such as
	// "\ud800": valid JSON grammar, but not Unicode.
	RuleLoneSurrogate = &finding.Rule{
		ID:          "jsonl/lone-surrogate",
		Requirement: "Strings should not contain escaped unpaired UTF-16 surrogates; decoders handle them differently.",
		Source:      srcEncoding,
		Level:       finding.Should,
	}
	// RuleTooDeep flags nesting beyond ParseOptions.MaxDepth.
	RuleTooDeep = &finding.Rule{
		ID:          "jsonl/too-deep",
		Requirement: "Objects and arrays must not nest deeper than the parser's depth limit (ParseOptions.MaxDepth, 1000 by default).",
		Source:      srcNumbersDepth,
		Level:       finding.Must,
	}
	// RuleNumberPrecision flags numbers that IEEE 754 doubles cannot hold.
	RuleNumberPrecision = &finding.Rule{
		ID:          "jsonl/number-precision",
		Requirement: "Integers should lie within ±(2^53-1) and numbers within the IEEE 754 binary64 range, so that every decoder reads the same value.",
		Source:      srcNumbersDepth,
		Level:       finding.Should,
	}
)

// Rules lists every rule of the package, framing rules first, so that
// reports and rule listings can enumerate them.
var Rules = []*finding.Rule{
	RuleLineTooLong,
	RuleBOM,
	RuleCRLF,
	RuleNoFinalNewline,
	RuleInvalidUTF8,
	RuleANSIEscape,
	RuleSSEPrefix,
	RuleNotJSON,
	RuleInvalidJSON,
	RuleMultipleValues,
	RuleNotObject,
	RuleDuplicateKey,
	RuleLoneSurrogate,
	RuleTooDeep,
	RuleNumberPrecision,
}
