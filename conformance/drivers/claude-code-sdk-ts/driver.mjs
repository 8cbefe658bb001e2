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

import { commands, errorText, finish, log, packageVersion, record, write } from '../lib/harness.mjs';

const PKG = '@instantlyeasy/claude-code-sdk-ts';

record('hello', {
  profile: 'native',
  agents: ['claude'],
  // multi_turn and resume: options.sessionId (`--resume ID`), one process
  // per turn; interrupt: options.signal. No permission callback (only
  // permissionMode, a policy set up front).
  supports: ['multi_turn', 'resume', 'interrupt'],
  name: 'claude-code-sdk-ts',
  version: packageVersion(PKG),
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
let turn = null; // {abort, done}

// runTurn runs one query() (one CLI process); a later turn resumes the
// session the previous one reported.
function runTurn(prompt, resume) {
  const abort = new AbortController();
  const options = { cwd: startCmd.cwd || process.cwd(), signal: abort.signal };
  if (startCmd.model) options.model = startCmd.model;
  if (resume) options.sessionId = resume;
  if (startCmd.options && typeof startCmd.options === 'object') Object.assign(options, startCmd.options);
  const done = (async () => {
    let ok = false;
    let error = '';
    let result = null;
    try {
      for await (const msg of query(prompt, options)) {
        write(msg);
        if (msg && typeof msg.session_id === 'string' && msg.session_id) sessionId = msg.session_id;
        if (msg && msg.type === 'result') result = msg;
      }
      if (!result) error = 'query() ended without a result message';
      else if (result.subtype !== 'success') error = `result ${result.subtype}`;
      else ok = true;
    } catch (err) {
      ok = false;
      error = abort.signal.aborted ? `interrupted: ${errorText(err)}` : errorText(err);
      log('query() failed:', errorText(err));
    }
    const fields = { ok };
    if (!ok) fields.error = error;
    fields.session_id = sessionId;
    record('turn_end', fields);
    turn = null;
  })();
  turn = { abort, done };
}

function interrupt() {
  if (!turn) {
    log('interrupt: no running turn; ignored');
    return;
  }
  turn.abort.abort();
}

process.on('SIGINT', interrupt);

for await (const cmd of commands()) {
  switch (cmd.op) {
    case 'start':
      if (startCmd) {
        log('start: a session was already started; ignored');
        break;
      }
      startCmd = cmd;
      if (cmd.agent && cmd.agent !== 'claude') {
        record('turn_end', { ok: false, error: `this driver drives claude, not ${cmd.agent}`, session_id: '' });
        startCmd = { ...cmd, refused: true };
        break;
      }
      if (installedClaude()) {
        const error = `${installedClaude()} exists and the library would run it instead of the claude on PATH; refusing`;
        record('turn_end', { ok: false, error, session_id: '' });
        startCmd = { ...cmd, refused: true };
        break;
      }
      runTurn(cmd.prompt ?? '', cmd.resume);
      break;
    case 'send':
      if (!startCmd || startCmd.refused) {
        record('turn_end', { ok: false, error: 'no session to send to', session_id: '' });
        break;
      }
      if (turn) await turn.done;
      runTurn(cmd.prompt ?? '', sessionId || startCmd.resume);
      break;
    case 'interrupt':
      interrupt();
      break;
    case 'close':
      if (cmd.eof) log('stdin ended without close; closing');
      if (turn) {
        log('close during a turn: aborting it');
        turn.abort.abort();
        await turn.done;
      }
      finish(true);
      break;
    default:
      log(`unknown op ${JSON.stringify(cmd.op)}; ignored`);
  }
}
