// Unified events (docs/protocols/unified.md) as a driver in the unified
// profile writes them: what an application built on a library would show
// its user, made from what the library handed the driver and nothing else.
// Each event gets the type, an id of its own, the session id (once known)
// and a timestamp; sessionStarted goes out before the first event.

import { write } from './harness.mjs';

export class UnifiedEvents {
  #n = 0;
  #started = false;

  // agent is the CLI (claude, codex, gemini); cwd the session's directory.
  constructor(agent, cwd) {
    this.agent = agent;
    this.cwd = cwd;
    this.sessionId = '';
  }

  // emit writes one event of type with fields.
  emit(type, fields = {}) {
    if (!this.#started) {
      this.#started = true;
      this.#write('sessionStarted', { agentType: this.agent, config: { agentType: this.agent, workingDirectory: this.cwd } });
    }
    this.#write(type, fields);
  }

  #write(type, fields) {
    this.#n++;
    write({ type, id: `ev-${this.#n}`, sessionId: this.sessionId, timestamp: new Date().toISOString(), ...fields });
  }

  // text hands on text: role "assistant" for the answer, null for the
  // library's notices and the model's reasoning.
  text(content, role = 'assistant') {
    if (content) this.emit('textChunk', { content, isPartial: false, role });
  }

  // sessionEnded closes the stream: reason completed, failed or cancelled.
  sessionEnded(reason, error, finalUsage) {
    const fields = { reason };
    if (error) fields.error = error;
    if (finalUsage) fields.finalUsage = finalUsage;
    this.emit('sessionEnded', fields);
  }
}
