#!/usr/bin/env node
// A harness driver (conformance/HARNESS.md) around ai-sdk-provider-codex-cli,
// the Vercel AI SDK provider that runs `codex exec --experimental-json` per
// call. The driver calls the provider's language model the way the AI SDK's
// streamText() does: doStream({prompt, abortSignal}) with the conversation
// as AI SDK messages, and hands the runner every stream part the provider
// enqueues, unchanged (profile "native"). See ../README.md.

import { createCodexExec } from 'ai-sdk-provider-codex-cli';

import { commands, errorText, finish, log, packageVersion, record, write } from '../lib/harness.mjs';

const PKG = 'ai-sdk-provider-codex-cli';

record('hello', {
  profile: 'native',
  agents: ['codex'],
  // multi_turn: the AI SDK's way, the whole conversation sent again as the
  // next call's prompt (the exec provider has no resume: every call is a
  // new `codex exec`). No resume of a given thread, no permission question.
  supports: ['multi_turn', 'interrupt'],
  name: 'codex-cli-provider',
  version: packageVersion(PKG),
});

let model = null;
let messages = []; // the conversation, as the AI SDK keeps it
let turn = null; // {abort, done}
let sessionId = '';

// runTurn makes one doStream call with the conversation so far plus the
// new user message, and ends it with a turn_end record.
function runTurn(prompt) {
  const abort = new AbortController();
  messages.push({ role: 'user', content: [{ type: 'text', text: prompt }] });
  const done = (async () => {
    let ok = false;
    let error = '';
    let text = '';
    try {
      const { stream } = await model.doStream({ prompt: messages, abortSignal: abort.signal });
      for await (const part of stream) {
        write(part);
        if (part.type === 'text-delta') text += part.delta;
        if (part.type === 'finish') ok = true;
        if (part.type === 'error') {
          ok = false;
          error = errorText(part.error) || 'error part';
        }
      }
      if (!ok && !error) error = 'the stream ended without a finish part';
    } catch (err) {
      ok = false;
      error = abort.signal.aborted ? `interrupted: ${errorText(err)}` : errorText(err);
      log('the provider stream failed:', errorText(err));
    }
    // The AI SDK keeps the assistant's answer in the conversation.
    if (text) messages.push({ role: 'assistant', content: [{ type: 'text', text }] });
    // The provider keeps the last thread id it saw (model.sessionId).
    if (typeof model.sessionId === 'string' && model.sessionId) sessionId = model.sessionId;
    const fields = { ok };
    if (!ok) fields.error = error;
    fields.session_id = sessionId;
    record('turn_end', fields);
    turn = null;
  })();
  turn = { abort, done };
}

function start(cmd) {
  if (cmd.agent && cmd.agent !== 'codex') {
    record('turn_end', { ok: false, error: `this driver drives codex, not ${cmd.agent}`, session_id: '' });
    return false;
  }
  const settings = {
    // The provider's documented way to name the executable; without it, the
    // @openai/codex package it can resolve, then `codex` on PATH.
    codexPath: process.env.CODEX_EXECUTABLE || process.env.AGENTCONFORM_CODEX || undefined,
    cwd: cmd.cwd || process.cwd(),
    // The provider's own logger writes to the console (stdout for info);
    // its messages go to stderr, the case's wire log.
    logger: {
      debug: () => {},
      info: (m) => log('provider:', m),
      warn: (m) => log('provider warn:', m),
      error: (m) => log('provider error:', m),
    },
  };
  if (cmd.options && typeof cmd.options === 'object') Object.assign(settings, cmd.options);
  const provider = createCodexExec();
  model = provider(cmd.model || 'gpt-5.3-codex', settings);
  runTurn(cmd.prompt ?? '');
  return true;
}

function interrupt() {
  if (!turn) {
    log('interrupt: no running turn; ignored');
    return;
  }
  turn.abort.abort();
}

process.on('SIGINT', interrupt);

let started = false;
for await (const cmd of commands()) {
  switch (cmd.op) {
    case 'start':
      if (started) {
        log('start: a session was already started; ignored');
        break;
      }
      started = true;
      start(cmd);
      break;
    case 'send':
      if (!model) {
        record('turn_end', { ok: false, error: 'no session to send to', session_id: '' });
        break;
      }
      if (turn) await turn.done;
      runTurn(cmd.prompt ?? '');
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
