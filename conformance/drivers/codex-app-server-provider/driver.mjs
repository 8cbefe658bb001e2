#!/usr/bin/env node
// A harness driver (conformance/HARNESS.md) around the app-server provider
// of ai-sdk-provider-codex-cli (createCodexAppServer): the Vercel AI SDK
// provider that keeps one `codex app-server` process and drives it over
// JSON-RPC itself (initialize, thread/start or thread/resume, turn/start,
// turn/interrupt on abort, the answers to approval requests). The driver
// only maps the harness onto the provider's documented settings and calls
// its language model as the AI SDK's streamText() does,
// doStream({prompt, abortSignal}); every stream part the provider enqueues
// is handed to the runner unchanged (profile "native"). See ../README.md.

import { createCodexAppServer } from 'ai-sdk-provider-codex-cli';

import { providerLogger, readStream } from '../lib/aisdk.mjs';
import { Turns, callerOptions, errorText, hello, log, serveTurns, turnEnd } from '../lib/harness.mjs';

hello({
  name: 'codex-app-server-provider',
  pkg: 'ai-sdk-provider-codex-cli',
  agents: ['codex-app-server'],
  // multi_turn: threadMode "persistent", the provider's way to keep one
  // thread for a model's calls; resume: its `resume` setting (a thread id);
  // interrupt: the call's AbortSignal (the provider sends turn/interrupt);
  // permission: its `autoApprove` setting, the answer it gives every
  // approval request when no handler is set.
  supports: ['multi_turn', 'resume', 'interrupt', 'permission'],
});

let provider = null;
let model = null;
let threadId = '';
const turns = new Turns('the provider stream');

// runTurn makes one doStream call with the new user message (the thread
// holds the conversation) and ends it with a turn_end record: ok when the
// stream finished with a finish part whose finishReason is not "error",
// as an AI SDK caller reads it.
function runTurn(prompt) {
  turns.run(
    async (abortSignal) => {
      const { stream } = await model.doStream({
        prompt: [{ role: 'user', content: [{ type: 'text', text: prompt }] }],
        abortSignal,
      });
      return readStream(stream, (part) => {
        const id = part.type === 'finish' ? part.providerMetadata?.['codex-app-server']?.threadId : null;
        if (typeof id === 'string' && id) threadId = id;
      });
    },
    () => {
      // The provider keeps the persistent thread's id (persistentThreadId).
      if (!threadId && typeof model.persistentThreadId === 'string') threadId = model.persistentThreadId;
      return threadId;
    },
  );
}

function start(cmd) {
  if (cmd.agent && cmd.agent !== 'codex-app-server') {
    turnEnd(false, `this driver drives codex-app-server, not ${cmd.agent}`, '');
    return;
  }
  const settings = {
    // The provider's documented way to name the executable; without it, the
    // @openai/codex package it can resolve, then `codex` on PATH.
    codexPath: process.env.CODEX_EXECUTABLE || process.env.AGENTCONFORM_CODEX || undefined,
    cwd: cmd.cwd || process.cwd(),
    threadMode: 'persistent',
    autoApprove: (cmd.permission || 'allow') === 'allow',
    logger: providerLogger(),
  };
  if (cmd.resume) settings.resume = cmd.resume;
  Object.assign(settings, callerOptions(cmd));
  provider = createCodexAppServer();
  model = provider(cmd.model || 'gpt-5.5', settings);
  runTurn(cmd.prompt ?? '');
}

await serveTurns({ start, turns, ready: () => model !== null, runTurn, closed: async () => {
  if (!provider) return;
  try {
    await provider.close();
  } catch (err) {
    log('provider.close failed:', errorText(err));
  }
} });
