#!/usr/bin/env node
// A harness driver (conformance/HARNESS.md) around the Claude Agent SDK for
// TypeScript: it drives `claude` only through query(), the way an
// application does, and hands the runner every message the SDK yields,
// unchanged (profile "native"). See ../README.md.

import { query } from '@anthropic-ai/claude-agent-sdk';

import { Inbox, callerDelay, callerOptions, errorText, finish, hello, log, serve, turnEnd, write } from '../lib/harness.mjs';

hello({
  name: 'claude-agent-sdk',
  pkg: '@anthropic-ai/claude-agent-sdk',
  agents: ['claude'],
  supports: ['multi_turn', 'resume', 'interrupt', 'permission', 'max_turns', 'permission_delay'],
});

// The session: one query() in streaming input mode, fed by inbox.
let q = null;
let inbox = null;
let pump = null; // resolves when the SDK's message stream has ended
let ended = false; // the message stream has ended (the CLI is gone)
let sdkError = null; // what the stream threw, if it did
let turnOpen = false;
let sessionId = '';

// userMessage is an SDKUserMessage as an application writes it.
function userMessage(prompt) {
  return { type: 'user', message: { role: 'user', content: prompt }, parent_tool_use_id: null };
}

function endTurn(ok, error) {
  turnOpen = false;
  turnEnd(ok, error, sessionId);
}

// resultError is what a failed result says went wrong.
function resultError(msg) {
  if (Array.isArray(msg.errors) && msg.errors.length > 0) return msg.errors.join('; ');
  if (typeof msg.result === 'string' && msg.result) return msg.result;
  return msg.subtype || 'error result';
}

// run reads the SDK's messages until the stream ends: each message goes to
// the runner as it is, each result ends a turn.
async function run() {
  try {
    for await (const msg of q) {
      write(msg);
      if (msg && typeof msg.session_id === 'string' && msg.session_id) sessionId = msg.session_id;
      if (msg && msg.type === 'result') {
        const ok = msg.subtype === 'success' && !msg.is_error;
        endTurn(ok, ok ? '' : resultError(msg));
      }
    }
  } catch (err) {
    sdkError = err;
    log('the SDK stream failed:', errorText(err));
  }
  ended = true;
  if (turnOpen) endTurn(false, sdkError ? errorText(sdkError) : 'the SDK stream ended without a result');
}

function start(cmd) {
  if (cmd.agent && cmd.agent !== 'claude') {
    endTurn(false, `this driver drives claude, not ${cmd.agent}`);
    return;
  }
  const permission = cmd.permission;
  // canUseTool answers the CLI's can_use_tool requests; giving it makes the
  // SDK pass --permission-prompt-tool=stdio.
  const canUseTool = async (toolName, input) => {
    await callerDelay(cmd); // the caller takes its time to decide
    if (permission === 'allow') return { behavior: 'allow', updatedInput: input };
    return { behavior: 'deny', message: `agentconform: ${toolName} denied by the harness` };
  };
  const options = {
    pathToClaudeCodeExecutable: process.env.CLAUDE_CODE_EXECUTABLE || process.env.AGENTCONFORM_CLAUDE || undefined,
    cwd: cmd.cwd || process.cwd(),
    // The CLI's stderr goes to ours (the case's wire log).
    stderr: (data) => process.stderr.write(data),
  };
  if (cmd.model) options.model = cmd.model;
  if (cmd.resume) options.resume = cmd.resume;
  // The caller's turn limit: the SDK passes it as --max-turns.
  if (cmd.max_turns) options.maxTurns = cmd.max_turns;
  if (permission) options.canUseTool = canUseTool;
  Object.assign(options, callerOptions(cmd));

  inbox = new Inbox();
  inbox.push(userMessage(cmd.prompt ?? ''));
  turnOpen = true;
  try {
    q = query({ prompt: inbox, options });
  } catch (err) {
    sdkError = err;
    ended = true;
    endTurn(false, errorText(err));
    return;
  }
  pump = run();
}

// interrupt asks the CLI to stop the running turn: Query.interrupt(), a
// control request on the CLI's stdin. Not awaited: the receipt and the
// interrupted turn's result arrive through the message stream, and
// commands keep flowing meanwhile.
function interrupt() {
  if (!q || ended) {
    log('interrupt: no running session; ignored');
    return;
  }
  q.interrupt().then(
    (receipt) => log('interrupt receipt:', JSON.stringify(receipt ?? null)),
    (err) => log('interrupt failed:', errorText(err)),
  );
}

// Signal mode (agentconform run --interrupt signal): SIGINT is the
// interrupt op.
process.on('SIGINT', interrupt);

await serve({
  start,
  send(cmd) {
    if (!q || ended) {
      endTurn(false, sdkError ? errorText(sdkError) : 'no running session to send to');
      return;
    }
    turnOpen = true;
    inbox.push(userMessage(cmd.prompt ?? ''));
  },
  interrupt,
  async close() {
    // Ending the input lets the SDK close the CLI's stdin once the running
    // turn is over; the CLI then exits and the message stream ends.
    if (inbox && !inbox.ended) inbox.end();
    if (turnOpen && q && !ended) {
      // close during a turn: the caller is gone (HARNESS.md). Interrupt
      // the turn; if it does not end, Query.close() stops the CLI (the
      // SDK's SIGTERM, then SIGKILL).
      log('close during a turn: interrupting, then closing the query');
      q.interrupt().catch((err) => log('interrupt failed:', errorText(err)));
      const stop = setTimeout(() => {
        try {
          q.close?.();
        } catch (err) {
          log('close failed:', errorText(err));
        }
      }, 2000);
      if (pump) await pump;
      clearTimeout(stop);
      finish(false, 'closed during a turn');
      return;
    }
    if (pump) await pump;
    finish(!sdkError, errorText(sdkError));
  },
});
