#!/bin/bash -eu
# Writes <fuzzer>_seed_corpus.zip for every fuzz target of the module into
# the directory $1 (default: $OUT): each target's committed corpus
# (testdata/fuzz/<Func>) and, for the targets of fuzz/targets, the seeds
# their F.Add calls add, which OSS-Fuzz never sees. The inputs are encoded
# as a libFuzzer build of a Go fuzz target decodes its arguments.
# Run from anywhere in the checkout; needs only the Go toolchain.
out="${1:-${OUT:?give the output directory}}"
cd "$(dirname "$0")/.."
go run ./cmd/agentconform fuzz seeds --out "$out"
