#!/usr/bin/env node
// A harness driver (conformance/HARNESS.md) around ai-sdk-provider-codex-cli,
// the Vercel AI SDK provider that runs `codex exec --experimental-json` per
// call. The driver calls the provider's language model the way the AI SDK's
// streamText() does: doStream({prompt, abortSignal}) with the conversation
// as AI SDK messages, and hands the runner every stream part the provider
// enqueues, unchanged (profile "native"), or with `--profile unified` as an
// AI SDK application shows them (../lib/aisdk.mjs). See ../README.md.

import { createCodexExec } from 'ai-sdk-provider-codex-cli';

import { providerLogger, showPart } from '../lib/aisdk.mjs';
import { Turns, callerOptions, errorText, hello, profileArg, serveTurns, turnEnd, write } from '../lib/harness.mjs';
import { UnifiedEvents } from '../lib/unified.mjs';

const profile = profileArg();
hello({
  profile,
  name: 'codex-cli-provider',
  pkg: 'ai-sdk-provider-codex-cli',
  agents: ['codex'],
  // multi_turn: the AI SDK's way, the whole conversation sent again as the
  // next call's prompt (the exec provider has no resume: every call is a
  // new `codex exec`). No resume of a given thread, no permission question.
  supports: ['multi_turn', 'interrupt'],
});

let model = null;
let unified = null; // the unified events, in the unified profile
let last = { reason: 'completed', error: '' }; // the last turn's outcome, for sessionEnded
let messages = []; // the conversation, as the AI SDK keeps it
let sessionId = '';
const turns = new Turns('the provider stream');

// runTurn makes one doStream call with the conversation so far plus the
// new user message, and ends it with a turn_end record.
let calls = 0; // doStream calls made

function runTurn(prompt) {
  const call = calls++;
  messages.push({ role: 'user', content: [{ type: 'text', text: prompt }] });
  let text = '';
  turns.run(
    async (abortSignal) => {
      const { stream } = await model.doStream({ prompt: messages, abortSignal });
      let ok = false;
      let error = '';
      for await (const part of stream) {
        if (unified) {
          // One session id for the stream: the first thread's.
          if (!unified.sessionId && typeof model.sessionId === 'string') unified.sessionId = model.sessionId;
          showPart(unified, part, call);
        } else {
          write(part);
        }
        if (part.type === 'text-delta') text += part.delta;
        if (part.type === 'finish') ok = true;
        if (part.type === 'error') {
          ok = false;
          error = errorText(part.error) || 'error part';
        }
      }
      if (!ok && !error) error = 'the stream ended without a finish part';
      return { ok, error };
    },
    () => {
      // The AI SDK keeps the assistant's answer in the conversation.
      if (text) messages.push({ role: 'assistant', content: [{ type: 'text', text }] });
      // The provider keeps the last thread id it saw (model.sessionId).
      if (typeof model.sessionId === 'string' && model.sessionId) sessionId = model.sessionId;
      return sessionId;
    },
    (ok, error, aborted) => {
      last = ok ? { reason: 'completed', error: '' } : { reason: aborted ? 'cancelled' : 'failed', error };
    },
  );
}

function start(cmd) {
  if (cmd.agent && cmd.agent !== 'codex') {
    turnEnd(false, `this driver drives codex, not ${cmd.agent}`, '');
    return;
  }
  const settings = {
    // The provider's documented way to name the executable; without it, the
    // @openai/codex package it can resolve, then `codex` on PATH.
    codexPath: process.env.CODEX_EXECUTABLE || process.env.AGENTCONFORM_CODEX || undefined,
    cwd: cmd.cwd || process.cwd(),
    logger: providerLogger(),
  };
  Object.assign(settings, callerOptions(cmd));
  const provider = createCodexExec();
  model = provider(cmd.model || 'gpt-5.3-codex', settings);
  if (profile === 'unified') unified = new UnifiedEvents('codex', settings.cwd);
  runTurn(cmd.prompt ?? '');
}

await serveTurns({ start, turns, ready: () => model !== null, runTurn, closed: () => {
  if (unified) unified.sessionEnded(last.reason, last.error);
} });
