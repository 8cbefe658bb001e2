#!/usr/bin/env node
// A harness driver (conformance/HARNESS.md) around gemini-mcp-tool, an MCP
// server whose ask-gemini tool runs `gemini [-m MODEL] -p PROMPT` (text
// output) and returns its stdout. The driver is the MCP client
// (../lib/mcp.mjs): one tools/call per turn, progress notifications and the
// tool result handed on as they came (profile "native"). See ../README.md.

import { binScript, callerOptions } from '../lib/harness.mjs';
import { runMcpDriver } from '../lib/mcp.mjs';

const PKG = 'gemini-mcp-tool';

await runMcpDriver({
  name: 'gemini-mcp-tool',
  pkg: PKG,
  agent: 'gemini',
  // One-shot calls: no session to continue, none to resume, no permission
  // question. interrupt: the MCP client's cancellation of the call.
  supports: ['interrupt'],
  script: binScript(PKG, 'dist/index.js'),
  // The server picks its backend by date (the Antigravity CLI after the
  // Gemini CLI's retirement) unless GEMINI_MCP_BACKEND names it; it finds
  // `gemini` on PATH (GEMINI_CLI_PATH is read on Windows only).
  env: () => ({ GEMINI_MCP_BACKEND: 'gemini' }),
  tool: 'ask-gemini',
  args: (cmd, prompt) => {
    const a = { prompt };
    if (cmd.model) a.model = cmd.model;
    return Object.assign(a, callerOptions(cmd));
  },
});
