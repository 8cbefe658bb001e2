// AI SDK stream parts (LanguageModelV3, what a provider's doStream
// enqueues) shown as unified events, as an application built on the AI SDK
// shows them: the answer's text deltas as assistant text, reasoning and
// error parts as notices, each tool call with its input and its result,
// and the usage of each call's finish part as the turn's.

import { errorText, log, write } from './harness.mjs';

// providerLogger is a provider's logger setting that sends its messages to
// stderr, the case's wire log (a provider's own logger writes to the
// console, stdout for info).
export function providerLogger() {
  return {
    debug: () => {},
    info: (m) => log('provider:', m),
    warn: (m) => log('provider warn:', m),
    error: (m) => log('provider error:', m),
  };
}

// readStream hands the runner every part of a doStream call's stream
// (onPart sees each too) and says how the call ended, as an AI SDK caller
// reads it: ok when a finish part came whose finishReason is not "error",
// and no error part.
export async function readStream(stream, onPart = () => {}) {
  let finished = null;
  let error = '';
  for await (const part of stream) {
    write(part);
    onPart(part);
    if (part.type === 'finish') finished = part;
    if (part.type === 'error') error = errorText(part.error) || 'error part';
  }
  if (error) return { ok: false, error };
  if (!finished) return { ok: false, error: 'the stream ended without a finish part' };
  const reason = finished.finishReason ?? {};
  if (reason.unified === 'error') return { ok: false, error: `finishReason error: ${String(reason.raw ?? '')}` };
  return { ok: true, error: '' };
}

// toolSucceeded says whether a tool-result part reports a success: not an
// error, no failed or declined status, no non-zero exit code.
function toolSucceeded(part) {
  const r = part.result;
  if (part.isError === true) return false;
  if (r && typeof r === 'object') {
    if (r.status === 'failed' || r.status === 'declined') return false;
    if (typeof r.exitCode === 'number' && r.exitCode !== 0) return false;
  }
  return true;
}

// toolInput is a tool-call part's input as an object (the AI SDK passes it
// as a JSON string).
function toolInput(input) {
  if (input && typeof input === 'object') return input;
  try {
    const v = JSON.parse(input);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch {
    // not JSON: the string itself
  }
  return { input };
}

// num is a token count of a usage field (a number, or {total}).
function num(v) {
  if (typeof v === 'number') return v;
  if (v && typeof v.total === 'number') return v.total;
  return 0;
}

// changeTypes maps a file change's kind, as providers pass on Codex's
// (add, delete, update), to the unified change type.
const changeTypes = { add: 'created', delete: 'deleted', update: 'modified' };

// showPart writes what one stream part of call number call shows (events: a
// UnifiedEvents). Tool call ids are the provider's, which need not be unique
// across calls (Codex's item ids restart in every process): the call number
// qualifies them.
export function showPart(events, part, call = 0) {
  const toolId = (id) => (call > 0 ? `${id}#${call + 1}` : id);
  const open = (events.openTools ??= new Set());
  switch (part.type) {
    case 'text-delta':
      events.text(part.delta, 'assistant');
      break;
    case 'reasoning-delta':
      events.text(part.delta, null);
      break;
    case 'error':
      events.text(part.error instanceof Error ? part.error.message : String(part.error?.message ?? part.error), null);
      break;
    case 'tool-call':
      events.emit('toolStarted', { toolId: toolId(part.toolCallId), toolName: part.toolName, arguments: toolInput(part.input) });
      open.add(toolId(part.toolCallId));
      break;
    case 'tool-result': {
      open.delete(toolId(part.toolCallId));
      events.emit('toolCompleted', { toolId: toolId(part.toolCallId), success: toolSucceeded(part), result: part.result });
      // A file change's result names the files it changed.
      const changes = part.result && Array.isArray(part.result.changes) ? part.result.changes : [];
      for (const c of changes) {
        if (c && typeof c.path === 'string') events.emit('fileChanged', { filePath: c.path, changeType: changeTypes[c.kind] ?? 'modified' });
      }
      break;
    }
    case 'finish': {
      // A tool the call left running (a command in the background) has
      // no result: the application shows it ended with the turn.
      for (const id of open) events.emit('toolCompleted', { toolId: id, success: false, error: 'still running when the turn ended' });
      open.clear();
      const u = part.usage ?? {};
      const input = num(u.inputTokens);
      const output = num(u.outputTokens);
      const usage = { inputTokens: input, outputTokens: output, totalTokens: input + output };
      if (typeof u.inputTokens?.cacheRead === 'number') usage.cachedTokens = u.inputTokens.cacheRead;
      if (typeof u.outputTokens?.reasoning === 'number') usage.reasoningTokens = u.outputTokens.reasoning;
      events.emit('turnCompleted', { usage });
      break;
    }
    case 'response-metadata':
      // Providers pass the CLI's error events on as metadata
      // (providerMetadata.<provider>.error): an application shows them.
      for (const m of Object.values(part.providerMetadata ?? {})) {
        if (m && typeof m.error === 'string') events.text(m.error, null);
      }
      break;
    default:
      break;
  }
}
