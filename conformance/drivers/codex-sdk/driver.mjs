#!/usr/bin/env node
// A harness driver (conformance/HARNESS.md) around the Codex SDK for
// TypeScript: it drives `codex exec` only through Codex, Thread and
// runStreamed(), the way an application does, and hands the runner every
// event the SDK yields, unchanged (profile "native"). See ../README.md.

import { Codex } from '@openai/codex-sdk';

import { Turns, callerOptions, hello, serveTurns, turnEnd, write } from '../lib/harness.mjs';

hello({
  name: 'codex-sdk',
  pkg: '@openai/codex-sdk',
  agents: ['codex'],
  // No "permission": `codex exec` never asks; approvals are a policy set
  // up front (ThreadOptions.approvalPolicy), not a question answered.
  supports: ['multi_turn', 'resume', 'interrupt'],
});

let thread = null;
const turns = new Turns('the SDK stream');

// runTurn runs one turn (one `codex exec` process) and ends it with a
// turn_end record. A thread that has an id resumes it (`exec ... resume ID`).
function runTurn(prompt) {
  turns.run(
    async (signal) => {
      const { events } = await thread.runStreamed(prompt, { signal });
      let ok = false;
      let error = '';
      for await (const ev of events) {
        write(ev);
        if (ev && ev.type === 'turn.completed') ok = true;
        if (ev && ev.type === 'turn.failed') {
          ok = false;
          error = ev.error?.message || 'turn failed';
        }
      }
      if (!ok && !error) error = 'the stream ended without turn.completed';
      return { ok, error };
    },
    () => thread.id ?? '',
  );
}

function start(cmd) {
  if (cmd.agent && cmd.agent !== 'codex') {
    turnEnd(false, `this driver drives codex, not ${cmd.agent}`, '');
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
  Object.assign(threadOptions, callerOptions(cmd));
  thread = cmd.resume ? codex.resumeThread(cmd.resume, threadOptions) : codex.startThread(threadOptions);
  runTurn(cmd.prompt ?? '');
}

// interrupt aborts the running turn. The SDK passes the signal to
// child_process.spawn: aborting sends the CLI SIGTERM and makes the event
// stream throw once the CLI's stdout ends.
await serveTurns({ start, turns, ready: () => thread !== null, runTurn });
