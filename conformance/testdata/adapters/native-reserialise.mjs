#!/usr/bin/env node
// native-reserialise.mjs: a CORRECT but unusual test adapter (profile native,
// agents codex and claude, supports interrupt). See README.md in this
// directory.
//
// It hands on every event the CLI wrote, in order, but re-serialised the way
// a typed SDK does it, and with events of its own:
//
// - every key whose value is null, "" or an empty array is left out, at any
//   depth (what Go structs with `json:",omitempty"` tags write back after
//   decoding an event: exit_code null, aggregated_output "", stop_reason
//   null, mcp_servers [] all disappear; false and 0 stay, as pointer fields
//   keep them);
// - {"type":"adapter.turn_started"} before the first CLI event of a turn,
//   and {"type":"adapter.stats","lines":N} after its last, N being the number
//   of CLI events handed on in the turn (SDKs add their own lifecycle events
//   to the stream: the Go and Rust Codex SDKs' turn wrappers, the TypeScript
//   Claude SDK's own "system" messages).
//
// Nothing the CLI said with a value is lost, and nothing is invented about
// the conversation; a caller reading these events learns all the CLI told.
//
// Harness protocol (conformance/HARNESS.md): hello first, one turn_end per
// turn, end last, exit 0 after close. Codex: one `codex exec --json` per
// turn (a `send` resumes the thread). Claude: print mode, `claude -p
// --output-format stream-json --verbose PROMPT`, stdin closed, one process
// per turn (a `send` resumes with --resume=ID); `multi_turn` is not
// declared. Interrupt: SIGINT for both (Codex stops; Claude in print mode
// ends the turn with an error result and exits 0), then SIGTERM 2 s later
// and SIGKILL 2 s after that if the CLI has not exited; the adapter always
// waits for the CLI to exit before it reports the turn. `close` during a
// turn stops it the same way.

import { Adapter, write } from './_harness.mjs';

// omitEmpty drops the keys whose value is null, "" or [] at every depth.
function omitEmpty(v) {
  if (Array.isArray(v)) return v.map(omitEmpty);
  if (v === null || typeof v !== 'object') return v;
  const out = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === null || x === '' || (Array.isArray(x) && x.length === 0)) continue;
    out[k] = omitEmpty(x);
  }
  return out;
}

class NativeReserialise extends Adapter {
  interruptIgnored = 'interrupt: no running turn (or already interrupted); ignored';

  turnState() {
    return { lines: 0 };
  }

  event(t, obj) {
    this.observe(t, obj);
    if (t.lines === 0) write({ type: 'adapter.turn_started' });
    t.lines++;
    write(omitEmpty(obj));
  }

  exited(t, code, signal) {
    write({ type: 'adapter.stats', lines: t.lines });
    super.exited(t, code, signal);
  }
}

const adapter = new NativeReserialise({ name: 'native-reserialise', agents: ['codex', 'claude'], supports: ['interrupt'] });
process.on('SIGINT', () => adapter.interrupt('interrupted'));
adapter.serve();
