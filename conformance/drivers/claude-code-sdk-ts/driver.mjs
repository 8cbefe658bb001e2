#!/usr/bin/env node
// A harness driver (conformance/HARNESS.md) around
// @instantlyeasy/claude-code-sdk-ts, an unofficial TypeScript SDK for Claude
// Code: query(prompt, options) runs `claude --output-format stream-json
// --verbose ... --print` with the prompt on stdin, one process per call, and
// yields its own message objects. The driver hands the runner every message
// query() yields, unchanged (profile "native"). See ../README.md.

import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { query } from '@instantlyeasy/claude-code-sdk-ts';

import { Turns, callerOptions, finish, hello, log, serve, turnEnd, write } from '../lib/harness.mjs';

hello({
  name: 'claude-code-sdk-ts',
  pkg: '@instantlyeasy/claude-code-sdk-ts',
  agents: ['claude'],
  // multi_turn and resume: options.sessionId (`--resume ID`), one process
  // per turn; interrupt: options.signal. No permission callback (only
  // permissionMode, a policy set up front).
  supports: ['multi_turn', 'resume', 'interrupt'],
});

// The library has no option naming the CLI: it runs ~/.claude/local/claude
// or ~/.claude/bin/claude when either exists, and only then `claude` from
// PATH (the fake). A driver that would run a real Claude Code refuses.
function installedClaude() {
  for (const p of [join(homedir(), '.claude', 'local', 'claude'), join(homedir(), '.claude', 'bin', 'claude')]) {
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not there
    }
  }
  return '';
}

let startCmd = null;
let sessionId = '';
const turns = new Turns('query()');

// runTurn runs one query() (one CLI process); a later turn resumes the
// session the previous one reported.
function runTurn(prompt, resume) {
  turns.run(
    async (signal) => {
      const options = { cwd: startCmd.cwd || process.cwd(), signal };
      if (startCmd.model) options.model = startCmd.model;
      if (resume) options.sessionId = resume;
      Object.assign(options, callerOptions(startCmd));
      let result = null;
      for await (const msg of query(prompt, options)) {
        write(msg);
        if (msg && typeof msg.session_id === 'string' && msg.session_id) sessionId = msg.session_id;
        if (msg && msg.type === 'result') result = msg;
      }
      if (!result) return { ok: false, error: 'query() ended without a result message' };
      if (result.subtype !== 'success') return { ok: false, error: `result ${result.subtype}` };
      return { ok: true };
    },
    () => sessionId,
  );
}

const interrupt = () => turns.interrupt();
process.on('SIGINT', interrupt);

await serve({
  start(cmd) {
    startCmd = cmd;
    let error = '';
    if (cmd.agent && cmd.agent !== 'claude') error = `this driver drives claude, not ${cmd.agent}`;
    else if (installedClaude()) error = `${installedClaude()} exists and the library would run it instead of the claude on PATH; refusing`;
    if (error) {
      turnEnd(false, error, '');
      startCmd = { ...cmd, refused: true };
      return;
    }
    runTurn(cmd.prompt ?? '', cmd.resume);
  },
  async send(cmd) {
    if (!startCmd || startCmd.refused) {
      turnEnd(false, 'no session to send to', '');
      return;
    }
    await turns.idle();
    runTurn(cmd.prompt ?? '', sessionId || startCmd.resume);
  },
  interrupt,
  async close() {
    await turns.close();
    finish(true);
  },
});
