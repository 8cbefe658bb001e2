#!/bin/bash -eu
# Builds agentconform's fuzz targets for ClusterFuzzLite and OSS-Fuzz: the
# same native Go fuzz tests `go test -fuzz` runs, through
# compile_native_go_fuzzer, with no change to the code. Each line names
# the package, the Fuzz function and the fuzzer (<package dir with _>_<Func>);
# fuzz/corpus_test.go checks that every Fuzz* function of the module is
# here.
cd "$SRC/agentconform"

# Seed corpora first (OSS-Fuzz ignores F.Add): <fuzzer>_seed_corpus.zip.
.clusterfuzzlite/export_seeds.sh "$OUT"

# The testing shim the libFuzzer builds use, in this build's module only.
go get github.com/AdamKorcz/go-118-fuzz-build/testing

# fuzz/targets: the JSONL reader and validate, the transcript format, the
# fakes' flag parsing, the reference adapters in process, and any external
# adapter (it skips without $AGENTCONFORM_FUZZ_ADAPTER, which a libFuzzer
# run does not have).
compile_native_go_fuzzer github.com/agentconform/agentconform/fuzz/targets FuzzValidate fuzz_targets_FuzzValidate
compile_native_go_fuzzer github.com/agentconform/agentconform/fuzz/targets FuzzTranscript fuzz_targets_FuzzTranscript
compile_native_go_fuzzer github.com/agentconform/agentconform/fuzz/targets FuzzFakeFlags fuzz_targets_FuzzFakeFlags
compile_native_go_fuzzer github.com/agentconform/agentconform/fuzz/targets FuzzReferenceUnified fuzz_targets_FuzzReferenceUnified
compile_native_go_fuzzer github.com/agentconform/agentconform/fuzz/targets FuzzReferenceShim fuzz_targets_FuzzReferenceShim
compile_native_go_fuzzer github.com/agentconform/agentconform/fuzz/targets FuzzExternalAdapter fuzz_targets_FuzzExternalAdapter
# The JSON-RPC surfaces: both line decoders, the acp and appserver validators.
compile_native_go_fuzzer github.com/agentconform/agentconform/fuzz/targets FuzzRPCMessage fuzz_targets_FuzzRPCMessage
compile_native_go_fuzzer github.com/agentconform/agentconform/fuzz/targets FuzzACP fuzz_targets_FuzzACP
compile_native_go_fuzzer github.com/agentconform/agentconform/fuzz/targets FuzzAppServer fuzz_targets_FuzzAppServer

# The packages' own fuzz tests.
compile_native_go_fuzzer github.com/agentconform/agentconform/jsonl FuzzParse jsonl_FuzzParse
compile_native_go_fuzzer github.com/agentconform/agentconform/jsonl FuzzReaderSplit jsonl_FuzzReaderSplit
compile_native_go_fuzzer github.com/agentconform/agentconform/fakecli FuzzFlags fakecli_FuzzFlags
compile_native_go_fuzzer github.com/agentconform/agentconform/fakecli FuzzClaudeStdin fakecli_FuzzClaudeStdin
compile_native_go_fuzzer github.com/agentconform/agentconform/fakecli FuzzSpliceDelta fakecli_FuzzSpliceDelta
compile_native_go_fuzzer github.com/agentconform/agentconform/fakecli/faults FuzzParse fakecli_faults_FuzzParse
compile_native_go_fuzzer github.com/agentconform/agentconform/fakecli/faults FuzzSteps fakecli_faults_FuzzSteps
compile_native_go_fuzzer github.com/agentconform/agentconform/fakecli/faults FuzzEdits fakecli_faults_FuzzEdits
compile_native_go_fuzzer github.com/agentconform/agentconform/redact FuzzJSONStaysValid redact_FuzzJSONStaysValid
compile_native_go_fuzzer github.com/agentconform/agentconform/reference FuzzReadHeader reference_FuzzReadHeader
compile_native_go_fuzzer github.com/agentconform/agentconform/jsonl/linesplit FuzzSplitter jsonl_linesplit_FuzzSplitter
compile_native_go_fuzzer github.com/agentconform/agentconform/reference FuzzShimToolResultMarshal reference_FuzzShimToolResultMarshal
compile_native_go_fuzzer github.com/agentconform/agentconform/reference/unified FuzzToolCompletedMarshal reference_unified_FuzzToolCompletedMarshal
compile_native_go_fuzzer github.com/agentconform/agentconform/jsonvalid FuzzCompact jsonvalid_FuzzCompact
compile_native_go_fuzzer github.com/agentconform/agentconform/jsonvalid FuzzEnd jsonvalid_FuzzEnd
compile_native_go_fuzzer github.com/agentconform/agentconform/reference FuzzJSONStringValue reference_FuzzJSONStringValue
compile_native_go_fuzzer github.com/agentconform/agentconform/reference FuzzShimTextMarshal reference_FuzzShimTextMarshal
compile_native_go_fuzzer github.com/agentconform/agentconform/reference FuzzShimContentText reference_FuzzShimContentText
compile_native_go_fuzzer github.com/agentconform/agentconform/reference FuzzCanonicalToken reference_FuzzCanonicalToken
compile_native_go_fuzzer github.com/agentconform/agentconform/reference FuzzMentionsControl reference_FuzzMentionsControl
compile_native_go_fuzzer github.com/agentconform/agentconform/jsonstr FuzzLikeEncodingJSON jsonstr_FuzzLikeEncodingJSON
compile_native_go_fuzzer github.com/agentconform/agentconform/conformance FuzzWriteRecord conformance_FuzzWriteRecord
