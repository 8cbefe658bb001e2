package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/agentconform/agentconform/capture"
	"github.com/agentconform/agentconform/conformance"
)

// realFlags are run's flags for the real CLIs (--cli real).
type realFlags struct {
	cli        *string
	paths      map[string]*string
	install    *bool
	npmVersion *string
}

func addRealFlags(fl *pflag.FlagSet) *realFlags {
	r := &realFlags{paths: map[string]*string{}}
	r.cli = fl.String("cli", "fake", "what plays the CLIs: fake (the fakes), real (the real CLIs, offline against the built-in mock model API: every case whose scenario a real CLI can play; the others SKIP), or fake,real (both runs, and the verdicts that differ)")
	for _, c := range capture.CLIs {
		r.paths[c] = fl.String(c+"-path", "", "with --cli real: the real "+c+" to run (default: "+c+" on PATH, else --install)")
	}
	r.install = fl.Bool("install", false, "with --cli real: install a real CLI that is not on PATH from npm into the cache (agentconform capture --install does the same)")
	r.npmVersion = fl.String("npm-version", "latest", "with --install: the npm version or tag to install")
	return r
}

// modes returns the runs --cli asks for, in order: "fake", "real".
func (r *realFlags) modes() ([]string, error) {
	var out []string
	for _, m := range strings.Split(*r.cli, ",") {
		m = strings.TrimSpace(m)
		switch m {
		case "fake", "real":
			for _, o := range out {
				if o == m {
					return nil, fmt.Errorf("--cli %q: %s twice", *r.cli, m)
				}
			}
			out = append(out, m)
		default:
			return nil, fmt.Errorf("--cli %q: want fake, real or fake,real", *r.cli)
		}
	}
	return out, nil
}

// locate finds the real CLIs of agents (all three by default): those it
// cannot find are left out, with a line on stderr saying why, and their
// cases SKIP.
func (r *realFlags) locate(ctx context.Context, stderr io.Writer) *conformance.RealCLIs {
	real := &conformance.RealCLIs{Binaries: map[string]*capture.Binary{}}
	for _, cli := range capture.CLIs {
		bin, err := capture.Locate(ctx, cli, capture.LocateOptions{Path: *r.paths[cli], Install: *r.install, Version: *r.npmVersion,
			Log: func(format string, args ...any) { fmt.Fprintf(stderr, "agentconform run: "+format+"\n", args...) }})
		if err != nil {
			fmt.Fprintf(stderr, "agentconform run: no real %s: %v (its cases SKIP)\n", cli, err)
			continue
		}
		fmt.Fprintf(stderr, "agentconform run: real %s %s (%s)\n", cli, bin.Version, bin.Path)
		real.Binaries[cli] = bin
	}
	return real
}

// perMode returns the adapters' runs for the modes: each adapter once per
// mode, its run on the real CLIs named by conformance.RealRunName. real, when set,
// are the adapters as they run on the real CLIs, one for each of
// adapters (the reference adapters with the real CLIs' watchdog time).
func perMode(adapters []conformance.Adapter, modes []string, real []conformance.Adapter) []conformance.Adapter {
	var out []conformance.Adapter
	for i, a := range adapters {
		for _, m := range modes {
			b := a
			if m == "real" {
				if i < len(real) {
					b = real[i]
				}
				b.Name = conformance.RealRunName(b.Name)
			}
			out = append(out, b)
		}
	}
	return out
}

// isRealRun reports whether a is an adapter's run on the real CLIs.
func isRealRun(a conformance.Adapter) bool {
	return strings.HasSuffix(a.Name, conformance.RealRunMark)
}
