#!/usr/bin/env node
// A harness driver (conformance/HARNESS.md) around ai-sdk-provider-claude-code,
// the Vercel AI SDK provider that runs Claude Code through the Claude Agent
// SDK it pins (@anthropic-ai/claude-agent-sdk 0.3.226, under the package's
// own node_modules). The driver calls the provider's language model the way
// the AI SDK's streamText() does: doStream({prompt, abortSignal}) with the
// conversation as AI SDK messages, and hands the runner every stream part
// the provider enqueues, unchanged (profile "native"). See ../README.md.

import { createClaudeCode } from 'ai-sdk-provider-claude-code';

import { providerLogger, readStream } from '../lib/aisdk.mjs';
import { Turns, callerDelay, callerOptions, hello, serveTurns, turnEnd } from '../lib/harness.mjs';

hello({
  name: 'claude-code-provider',
  pkg: 'ai-sdk-provider-claude-code',
  agents: ['claude'],
  // multi_turn: the provider keeps the session id of its last call and
  // resumes it on the next; resume: its `resume` setting; interrupt: the
  // call's AbortSignal; permission: its `canUseTool` setting.
  supports: ['multi_turn', 'resume', 'interrupt', 'permission', 'max_turns', 'permission_delay'],
});

let model = null;
let messages = []; // the conversation, as the AI SDK keeps it
let sessionId = '';
const turns = new Turns('the provider stream');

// runTurn makes one doStream call with the conversation so far plus the
// new user message, and ends it with a turn_end record: ok when a finish
// part came whose finishReason is not "error" and no error part.
function runTurn(prompt) {
  messages.push({ role: 'user', content: [{ type: 'text', text: prompt }] });
  let text = '';
  turns.run(
    async (abortSignal) => {
      const { stream } = await model.doStream({ prompt: messages, abortSignal });
      return readStream(stream, (part) => {
        if (part.type === 'text-delta') text += part.delta;
        const id = part.type === 'finish' ? part.providerMetadata?.['claude-code']?.sessionId : null;
        if (typeof id === 'string' && id) sessionId = id;
      });
    },
    () => {
      // The AI SDK keeps the assistant's answer in the conversation.
      if (text) messages.push({ role: 'assistant', content: [{ type: 'text', text }] });
      if (!sessionId && typeof model.sessionId === 'string') sessionId = model.sessionId;
      return sessionId;
    },
  );
}

function start(cmd) {
  if (cmd.agent && cmd.agent !== 'claude') {
    turnEnd(false, `this driver drives claude, not ${cmd.agent}`, '');
    return;
  }
  const permission = cmd.permission;
  const settings = {
    // The provider's documented way to name the executable; without it the
    // SDK runs the Claude Code it bundles (a real one).
    pathToClaudeCodeExecutable: process.env.CLAUDE_CODE_EXECUTABLE || process.env.AGENTCONFORM_CLAUDE || undefined,
    cwd: cmd.cwd || process.cwd(),
    logger: providerLogger(),
  };
  // The provider hands the CLI an allow-list of the environment (HOME,
  // PATH, ANTHROPIC_*, CLAUDE_*, proxies: getBaseProcessEnv,
  // dist/index.js:1322-1349) and its `env` setting: a host names there the
  // variables its CLI needs, here the runner's (HARNESS.md: the adapter
  // passes them on untouched).
  settings.env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('AGENTCONFORM_') || k === 'IS_SANDBOX'));
  if (cmd.resume) settings.resume = cmd.resume;
  // The caller's turn limit: the provider's maxTurns setting.
  if (cmd.max_turns) settings.maxTurns = cmd.max_turns;
  if (permission) {
    // canUseTool answers the CLI's permission questions by the policy.
    settings.canUseTool = async (toolName, input) => {
      await callerDelay(cmd); // the caller takes its time to decide
      if (permission === 'allow') return { behavior: 'allow', updatedInput: input };
      return { behavior: 'deny', message: `agentconform: ${toolName} denied by the harness` };
    };
  }
  Object.assign(settings, callerOptions(cmd));
  if (!settings.pathToClaudeCodeExecutable) {
    turnEnd(false, 'neither CLAUDE_CODE_EXECUTABLE nor AGENTCONFORM_CLAUDE names the CLI: refusing to run the real Claude Code the SDK bundles', '');
    return;
  }
  const provider = createClaudeCode();
  model = provider(cmd.model || 'sonnet', settings);
  runTurn(cmd.prompt ?? '');
}

await serveTurns({ start, turns, ready: () => model !== null, runTurn });
