#!/usr/bin/env node
// A harness driver (conformance/HARNESS.md) around codex-mcp-server, an MCP
// server whose codex tool runs `codex exec --model M -C DIR
// --skip-git-repo-check PROMPT` (human output, no --json), or `codex exec
// ... resume ID PROMPT` for a later turn of a session, and returns the
// CLI's stdout (or stderr). The driver is the MCP client (../lib/mcp.mjs):
// one tools/call per turn, progress notifications and the tool result
// handed on as they came (profile "native"). See ../README.md.

import { binScript, callerOptions } from '../lib/harness.mjs';
import { runMcpDriver } from '../lib/mcp.mjs';

const PKG = 'codex-mcp-server';

// SESSION is the server-side session every turn of the driver's session
// names: the server keeps the Codex conversation id of its first turn and
// resumes it in the next.
const SESSION = 'agentconform';

await runMcpDriver({
  name: 'codex-mcp-server',
  pkg: PKG,
  agent: 'codex',
  // multi_turn: the tool's sessionId; no resume of a given Codex thread
  // (the server's sessions live in its memory only), no permission
  // question (`codex exec` never asks).
  supports: ['multi_turn', 'interrupt'],
  script: binScript(PKG, 'dist/index.js'),
  tool: 'codex',
  args: (cmd, prompt) => {
    const a = { prompt, sessionId: SESSION, workingDirectory: cmd.cwd || process.cwd() };
    if (cmd.model) a.model = cmd.model;
    return Object.assign(a, callerOptions(cmd));
  },
  // The result's _meta carries the Codex thread id when the server found
  // one in the CLI's output.
  sessionOf: (result) => {
    const meta = Array.isArray(result?.content) ? result.content[0]?._meta : undefined;
    // The Codex thread id only: the server's own sessionId (the one this
    // driver passes) resumes nothing of the CLI's (HARNESS.md: turn_end's
    // session_id is the CLI's session).
    return (meta && meta.threadId) || '';
  },
});
