#!/usr/bin/env node
// await-close.mjs: a BUGGY test adapter (profile native, agents codex,
// gemini and claude, supports interrupt). See README.md in this directory.
//
// Planted bug: signals reach only the process the adapter started, and the
// turn is over only when the CLI's stdout has ended. This is the harness's
// session as it is (_harness.mjs): the CLI spawned with
// child_process.spawn's defaults (in the adapter's process group),
// interrupted with child.kill('SIGINT'), then SIGTERM and SIGKILL two
// seconds apart, all to that one pid, and the turn reported at Node's
// 'close' event, the end of every pipe the child had. Against a CLI behind
// its npm launcher the signals stop at the launcher (Gemini CLI's ignores
// them, Claude Code's fallback launcher dies of them alone, as captured:
// docs/protocols/gemini.md#launcher, docs/protocols/claude.md#launcher),
// and the CLI itself goes on with the turn, holding the stdout the adapter
// waits for: the interrupted turn, the session and the caller wait for as
// long as the CLI runs.
//
// How the real thing looks: the SDKs and wrappers that spawn without
// detached, abort with child.kill() or spawn's AbortSignal, and end a turn
// at the end of a readline over the child's stdout (for await ... of rl)
// or at child.on('close'); Python ones that read proc.stdout to EOF before
// proc.wait().
//
// Everything else follows conformance/HARNESS.md: hello first, the CLI's
// JSON lines handed on re-serialised, one turn_end per turn, end last,
// exit 0 after close. A `send` resumes the session in a new process.

import { Adapter } from './_harness.mjs';

new Adapter({ name: 'await-close', agents: ['codex', 'gemini', 'claude'], supports: ['interrupt'] }).serve();
