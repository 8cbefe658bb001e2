#!/usr/bin/env node
// A harness driver (conformance/HARNESS.md) around the Codex SDK for
// TypeScript: it drives `codex exec` only through Codex, Thread and
// runStreamed(), the way an application does, and hands the runner every
// event the SDK yields, unchanged (profile "native"). See ../README.md.

import { Codex } from '@openai/codex-sdk';

import { commands, errorText, finish, log, packageVersion, record, write } from '../lib/harness.mjs';

const SDK = '@openai/codex-sdk';

record('hello', {
  profile: 'native',
  agents: ['codex'],
  // No "permission": `codex exec` never asks; approvals are a policy set
  // up front (ThreadOptions.approvalPolicy), not a question answered.
  supports: ['multi_turn', 'resume', 'interrupt'],
  name: 'codex-sdk',
  version: packageVersion(SDK),
});

let thread = null;
let turn = null; // the running turn: {abort: AbortController, done: Promise}

// runTurn runs one turn (one `codex exec` process) and ends it with a
// turn_end record. A thread that has an id resumes it (`exec ... resume ID`).
function runTurn(prompt) {
  const abort = new AbortController();
  const done = (async () => {
    let ok = false;
    let error = '';
    try {
      const { events } = await thread.runStreamed(prompt, { signal: abort.signal });
      for await (const ev of events) {
        write(ev);
        if (ev && ev.type === 'turn.completed') ok = true;
        if (ev && ev.type === 'turn.failed') {
          ok = false;
          error = ev.error?.message || 'turn failed';
        }
      }
      if (!ok && !error) error = 'the stream ended without turn.completed';
    } catch (err) {
      ok = false;
      error = abort.signal.aborted ? `interrupted: ${errorText(err)}` : errorText(err);
      log('the SDK stream failed:', errorText(err));
    }
    const fields = { ok };
    if (!ok) fields.error = error;
    fields.session_id = thread.id ?? '';
    record('turn_end', fields);
    turn = null;
  })();
  turn = { abort, done };
}

function start(cmd) {
  if (cmd.agent && cmd.agent !== 'codex') {
    record('turn_end', { ok: false, error: `this driver drives codex, not ${cmd.agent}`, session_id: '' });
    return;
  }
  const codexPathOverride = process.env.CODEX_EXECUTABLE || process.env.AGENTCONFORM_CODEX || undefined;
  const codex = new Codex({ codexPathOverride });
  const threadOptions = {
    workingDirectory: cmd.cwd || process.cwd(),
    // The runner's working directory is a fresh directory, not a Git
    // repository, which `codex exec` refuses without this.
    skipGitRepoCheck: true,
  };
  if (cmd.model) threadOptions.model = cmd.model;
  if (cmd.options && typeof cmd.options === 'object') Object.assign(threadOptions, cmd.options);
  thread = cmd.resume ? codex.resumeThread(cmd.resume, threadOptions) : codex.startThread(threadOptions);
  runTurn(cmd.prompt ?? '');
}

// interrupt aborts the running turn. The SDK passes the signal to
// child_process.spawn: aborting sends the CLI SIGTERM and makes the event
// stream throw once the CLI's stdout ends.
function interrupt() {
  if (!turn) {
    log('interrupt: no running turn; ignored');
    return;
  }
  turn.abort.abort();
}

// Signal mode (agentconform run --interrupt signal): SIGINT is the
// interrupt op.
process.on('SIGINT', interrupt);

for await (const cmd of commands()) {
  switch (cmd.op) {
    case 'start':
      if (thread) {
        log('start: a session was already started; ignored');
        break;
      }
      start(cmd);
      break;
    case 'send':
      if (!thread) {
        record('turn_end', { ok: false, error: 'no session to send to', session_id: '' });
        break;
      }
      if (turn) await turn.done; // one turn at a time: the next resumes the thread
      runTurn(cmd.prompt ?? '');
      break;
    case 'interrupt':
      interrupt();
      break;
    case 'close':
      if (cmd.eof) log('stdin ended without close; closing');
      if (turn) {
        // close during a turn: the caller is gone (HARNESS.md): abort it
        // (the SDK's only way to stop the CLI: one SIGTERM).
        log('close during a turn: aborting it');
        turn.abort.abort();
        await turn.done;
      }
      // Every turn's process has exited by now (the SDK waits for it), so
      // closing always succeeds; how each turn went is in its turn_end.
      finish(true);
      break;
    default:
      log(`unknown op ${JSON.stringify(cmd.op)}; ignored`);
  }
}
