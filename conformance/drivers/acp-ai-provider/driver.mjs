#!/usr/bin/env node
// A harness driver (conformance/HARNESS.md) around @mcpc-tech/acp-ai-provider,
// the Vercel AI SDK provider that spawns an Agent Client Protocol agent
// (here `gemini --experimental-acp`, as its README shows) and speaks ACP to
// it as the client. The driver calls the provider's language model the way
// the AI SDK's streamText() does: doStream({prompt, abortSignal}) with the
// conversation as AI SDK messages, and hands the runner every stream part
// the provider enqueues, unchanged (profile "native"). See ../README.md.

import { createACPProvider } from '@mcpc-tech/acp-ai-provider';

import { callerOptions, errorText, finish, hello, log, serve, turnEnd, write } from '../lib/harness.mjs';

hello({
  name: 'acp-ai-provider',
  pkg: '@mcpc-tech/acp-ai-provider',
  agents: ['gemini-acp'],
  // multi_turn: one agent process and ACP session for the provider
  // (persistSession, its documented way to keep a session), the next user
  // message sent in it; resume: existingSessionId (session/load). No
  // permission: the provider has no setting for it (it answers every
  // request itself).
  supports: ['multi_turn', 'resume', 'interrupt'],
});

let provider = null;
let model = null;
let messages = []; // the conversation, as the AI SDK keeps it
let turn = null; // the running turn: {abort, reader, done}

// runTurn makes one doStream call with the conversation so far plus the
// new user message, reads its stream to the end, and reports the turn:
// ok when a finish part came with finishReason "stop" (the provider's
// end_turn) and no error part.
function runTurn(prompt) {
  messages.push({ role: 'user', content: [{ type: 'text', text: prompt }] });
  const abort = new AbortController();
  const t = { abort, reader: null, closed: false };
  t.done = (async () => {
    let ok = false;
    let error = '';
    let text = '';
    try {
      const { stream } = await model.doStream({ prompt: messages, abortSignal: abort.signal });
      t.reader = stream.getReader();
      if (t.closed) t.reader.cancel('the caller is gone').catch(() => {});
      for (;;) {
        const { done, value: part } = await t.reader.read();
        if (done) break;
        write(part);
        if (part.type === 'text-delta') text += part.delta;
        if (part.type === 'finish') {
          ok = part.finishReason?.unified === 'stop';
          if (!ok) error = `finishReason ${JSON.stringify(part.finishReason)}`;
        }
        if (part.type === 'error') {
          ok = false;
          error = errorText(part.error) || 'error part';
        }
      }
      if (t.closed && !ok) error = error || 'the caller stopped reading the stream (close during the turn)';
      else if (!ok && !error) error = 'the stream ended without a finish part';
    } catch (err) {
      ok = false;
      error = abort.signal.aborted ? `interrupted: ${errorText(err)}` : errorText(err);
      log('the provider stream failed:', errorText(err));
    }
    // The AI SDK keeps the assistant's answer in the conversation.
    if (text) messages.push({ role: 'assistant', content: [{ type: 'text', text }] });
    turnEnd(ok, error, provider.getSessionId() ?? '');
    turn = null;
  })();
  turn = t;
}

function start(cmd) {
  if (cmd.agent && cmd.agent !== 'gemini-acp') {
    turnEnd(false, `this driver drives gemini-acp, not ${cmd.agent}`, '');
    return;
  }
  const settings = {
    // The README's own example: gemini's ACP mode, by the executable the
    // runner names (GEMINI_EXECUTABLE), else gemini on PATH (the fake).
    command: process.env.GEMINI_EXECUTABLE || process.env.AGENTCONFORM_GEMINI || 'gemini',
    args: ['--experimental-acp'],
    session: { cwd: cmd.cwd || process.cwd(), mcpServers: [] },
    persistSession: true,
  };
  if (cmd.resume) settings.existingSessionId = cmd.resume;
  Object.assign(settings, callerOptions(cmd));
  provider = createACPProvider(settings);
  model = provider.languageModel(cmd.model || undefined);
  runTurn(cmd.prompt ?? '');
}

// interrupt aborts the running call's signal, as streamText passes the
// caller's abortSignal to doStream.
function interrupt() {
  if (!turn) {
    log('interrupt: no running turn; ignored');
    return;
  }
  turn.abort.abort();
}
process.on('SIGINT', interrupt);

await serve({
  start,
  async send(cmd) {
    if (turn) await turn.done;
    if (!model) {
      turnEnd(false, 'no session to send to', '');
      return;
    }
    runTurn(cmd.prompt ?? '');
  },
  interrupt,
  async close() {
    const during = turn !== null;
    if (turn) {
      // The caller is gone: it aborts its signal and stops reading the
      // stream (ReadableStream.cancel, which the provider handles).
      log('close during a turn: aborting the call and cancelling its stream');
      turn.closed = true;
      turn.abort.abort();
      if (turn.reader) turn.reader.cancel('the caller is gone').catch(() => {});
      await turn.done;
    }
    // The provider's documented release of a persistent session: it ends
    // the agent process.
    if (provider) provider.cleanup();
    finish(!during, during ? 'closed during a turn' : undefined);
  },
});
