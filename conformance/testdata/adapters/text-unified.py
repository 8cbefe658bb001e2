#!/usr/bin/env python3
"""text-unified.py: text-mode.py in the unified profile (agents gemini and
claude, supports interrupt). See README.md in this directory.

It runs the CLIs as text-mode.py does (`gemini -p PROMPT`, text output;
`claude -p --output-format json PROMPT`) and hands each turn's answer on as
unified events: sessionStarted before the first, the answer as one
textChunk, turnCompleted after it (no usage: neither output names one the
adapter reads), sessionEnded before `end`.

How real adapters look: MCP servers and chat bridges that run the CLI in
its one-shot output mode and hand the caller the answer as one message of
a unified event model.

With an argument it is one of two buggy variants:

- `notice`: the answer goes out as a textChunk of role null, the role of
  the CLI's notices (a UI that shows what the CLI printed as a status line):
  the caller gets the text, but not as the assistant's answer.
- `drop`: no textChunk at all (a wrapper that reads the answer from a
  field the output does not have): the answer is lost.
"""

import datetime
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _harness as h  # noqa: E402

_spec = importlib.util.spec_from_file_location("text_mode", os.path.join(HERE, "text-mode.py"))
text_mode = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(text_mode)

MODE = sys.argv[1] if len(sys.argv) > 1 else ""


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Events:
    """The session's unified events: ids and the session id."""

    def __init__(self, agent, cwd):
        self.agent, self.cwd, self.n, self.started = agent, cwd, 0, False

    def emit(self, type_, **fields):
        if not self.started:
            self.started = True
            self.emit("sessionStarted", agentType=self.agent, config={"agentType": self.agent, "workingDirectory": self.cwd})
        self.n += 1
        ev = {"type": type_, "id": "ev-%d" % self.n, "sessionId": "", "timestamp": now()}
        ev.update(fields)
        h.write(ev)


class Turn(text_mode.Turn):
    def answer(self, text):
        ev = self.session.events
        if MODE == "notice":
            ev.emit("textChunk", content=text, isPartial=False, role=None)
        elif MODE != "drop" and text:
            ev.emit("textChunk", content=text, isPartial=False, role="assistant")
        ev.emit("turnCompleted")


class TextUnified(h.Adapter):
    def __init__(self):
        super().__init__("text-unified" + ("-" + MODE if MODE else ""), ["gemini", "claude"], ["interrupt"], profile="unified",
                         sigint=True, turn_class=Turn)
        self.last = ("completed", "")

    def open(self, cmd):
        s = super().open(cmd)
        s.events = Events(s.agent, s.cwd)
        return s

    def outcome(self, turn):
        ok, error = turn.finish()
        if not ok:
            self.last = ("cancelled" if turn.interrupted else "failed", error)
        return ok, error

    def end(self):
        if self.session is None:
            return
        reason, error = self.last
        fields = {"reason": reason}
        if error:
            fields["error"] = error
        self.session.events.emit("sessionEnded", **fields)


if __name__ == "__main__":
    if MODE not in ("", "notice", "drop"):
        sys.stderr.write("text-unified.py: unknown mode %r (notice, drop)\n" % MODE)
        sys.exit(2)
    sys.exit(TextUnified().run())
