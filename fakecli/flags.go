package fakecli

import (
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// The fakes define their flags with pflag, but each real CLI parses its
// command line with a different library (Claude: commander.js; Codex:
// clap; Gemini: yargs), which differ from pflag on optional values
// ("--resume ID" as two tokens), variadic values ("--allowedTools A B"
// takes both), subcommands and error messages. normalizeArgs walks the
// arguments as the real parser would and rewrites them into a form pflag
// parses the same way, reporting unknown flags and missing values in the
// real parser's terms.

// argErrKind is what is wrong with an argument.
type argErrKind int

const (
	errUnknown      argErrKind = iota // a flag the CLI does not have
	errMissingValue                   // a flag that needs a value got none
)

// argError is an invalid argument, for the CLI-specific message.
type argError struct {
	kind  argErrKind
	token string      // the flag as given: "--x", "-a"
	flag  *pflag.Flag // the flag, for errMissingValue
}

// scanOpts describe the real parser's grammar beyond what pflag knows.
type scanOpts struct {
	// variadic flags take every following token up to the next one that
	// starts with "-" (commander "<x...>", clap num_args 1.., yargs array).
	variadic map[string]bool
	// optionalTakesNext: an optional-value flag (pflag NoOptDefVal) takes
	// the next token as its value unless it starts with "-" (commander
	// "[value]", yargs string options).
	optionalTakesNext bool
	// valueMayLookLikeFlag: a required value may start with "-"
	// (commander, yargs); clap reports a missing value instead when the
	// next token is a known flag.
	valueMayLookLikeFlag bool
	// stop ends the scan at a positional token (a subcommand): it gets the
	// token and how many positionals came before it.
	stop func(tok string, positionals int) bool
	// allUnknown collects every unknown flag instead of stopping at the
	// first (yargs reports them together).
	allUnknown bool
}

// scanResult is the rewritten argument list.
type scanResult struct {
	args []string // for pflag.Parse
	// stoppedAt is the index in the input of the token scan stopped at
	// (-1 when it did not stop).
	stoppedAt int
	unknown   []argError
}

// takesValue reports whether a flag needs a value token.
func takesValue(f *pflag.Flag) bool {
	return f.NoOptDefVal == "" && f.Value.Type() != "bool"
}

func normalizeArgs(fs *pflag.FlagSet, args []string, o scanOpts) (scanResult, *argError) {
	res := scanResult{stoppedAt: -1}
	positionals := 0
	emit := func(s ...string) { res.args = append(res.args, s...) }
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			emit(args[i:]...)
			return res, nil
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, val, hasVal := strings.Cut(a[2:], "=")
			f := fs.Lookup(name)
			if f == nil && strings.HasPrefix(name, "no-") {
				// yargs and commander negations of booleans.
				if nf := fs.Lookup(name[3:]); nf != nil && nf.Value.Type() == "bool" && !hasVal {
					emit("--" + nf.Name + "=false")
					continue
				}
			}
			if f == nil {
				ae := argError{kind: errUnknown, token: "--" + name}
				if !o.allUnknown {
					return res, &ae
				}
				res.unknown = append(res.unknown, ae)
				continue
			}
			long := "--" + f.Name
			switch {
			case hasVal:
				emit(long + "=" + val)
			case o.variadic[f.Name]:
				n := 0
				for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
					i++
					n++
					emit(long + "=" + args[i])
				}
				if n == 0 {
					return res, &argError{kind: errMissingValue, token: long, flag: f}
				}
			case f.NoOptDefVal != "" && f.Value.Type() != "bool":
				if o.optionalTakesNext && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
					i++
					emit(long + "=" + args[i])
				} else {
					emit(long)
				}
			case takesValue(f):
				if i+1 >= len(args) || (!o.valueMayLookLikeFlag && looksLikeKnownFlag(fs, args[i+1])) {
					return res, &argError{kind: errMissingValue, token: long, flag: f}
				}
				i++
				emit(long + "=" + args[i])
			default:
				emit(long)
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// One or more shorthands: -p, -pv, -mMODEL, -m MODEL.
			group := a[1:]
			for j := 0; j < len(group); j++ {
				c := group[j : j+1]
				f := fs.ShorthandLookup(c)
				if f == nil {
					ae := argError{kind: errUnknown, token: "-" + c}
					if !o.allUnknown {
						return res, &ae
					}
					res.unknown = append(res.unknown, ae)
					continue
				}
				long := "--" + f.Name
				rest := group[j+1:]
				switch {
				case !takesValue(f) && !(f.NoOptDefVal != "" && f.Value.Type() != "bool"):
					emit(long)
					continue
				case rest != "":
					emit(long + "=" + strings.TrimPrefix(rest, "="))
				case o.variadic[f.Name]:
					n := 0
					for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
						i++
						n++
						emit(long + "=" + args[i])
					}
					if n == 0 {
						return res, &argError{kind: errMissingValue, token: "-" + c, flag: f}
					}
				case f.NoOptDefVal != "":
					if o.optionalTakesNext && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
						i++
						emit(long + "=" + args[i])
					} else {
						emit(long)
					}
				default:
					if i+1 >= len(args) || (!o.valueMayLookLikeFlag && looksLikeKnownFlag(fs, args[i+1])) {
						return res, &argError{kind: errMissingValue, token: "-" + c, flag: f}
					}
					i++
					emit(long + "=" + args[i])
				}
				break
			}
		default:
			if o.stop != nil && o.stop(a, positionals) {
				res.stoppedAt = i
				return res, nil
			}
			positionals++
			// Keep positionals after "--" so that pflag never reads one
			// that starts with "-" as a flag; all of them follow.
			emit(a)
		}
	}
	return res, nil
}

// looksLikeKnownFlag reports whether tok is one of the set's flags.
func looksLikeKnownFlag(fs *pflag.FlagSet, tok string) bool {
	switch {
	case strings.HasPrefix(tok, "--") && len(tok) > 2:
		name, _, _ := strings.Cut(tok[2:], "=")
		return fs.Lookup(name) != nil
	case strings.HasPrefix(tok, "-") && len(tok) > 1:
		return fs.ShorthandLookup(tok[1:2]) != nil
	}
	return false
}

// newFlagSet makes a quiet flag set: the fakes print their own errors.
func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	return fs
}

// editDistance is the optimal-string-alignment distance commander uses to
// suggest a similar option.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := 0; j <= len(b); j++ {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
