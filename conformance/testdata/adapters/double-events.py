#!/usr/bin/env python3
"""double-events.py: a BUGGY test adapter (profile native, agents codex,
gemini and claude, supports multi_turn). See README.md in this directory.

It hands on every CLI event re-serialised, as a native adapter does, but
one kind of event twice. With no argument (or `terminal`) the turn's
terminal event (Claude's and Gemini's result, Codex's turn.completed or
turn.failed); with `tool-result` every tool result (Claude's user message
carrying a tool_result, Codex's item.completed of a command, Gemini's
tool_result). Everything it hands on is what the CLI wrote, so every check
of what arrives passes; only counting finds the copy.

How real adapters look: a turn's end handed on by the stream reader and
again by the code that waits for the process to exit ("result" emitted on
the line and on close); a tool result handed on when it comes and again
when the message that holds it is flushed. The caller shows the answer,
or the tool's output, twice.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402

MODE = sys.argv[1] if len(sys.argv) > 1 else "terminal"


def doubled(agent, obj):
    t = obj.get("type")
    if MODE == "tool-result":
        if agent == "codex":
            item = obj.get("item") or {}
            return t == "item.completed" and item.get("type") == "command_execution"
        if agent == "gemini":
            return t == "tool_result"
        content = (obj.get("message") or {}).get("content")
        return t == "user" and isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    if agent == "codex":
        return t in ("turn.completed", "turn.failed")
    return t == "result"


class Turn(h.Turn):
    def event(self, obj):
        super().event(obj)
        if doubled(self.session.agent, obj):
            h.write(obj)  # the bug: the same event handed on again


class DoubleEvents(h.Adapter):
    def __init__(self):
        super().__init__("double-events", ["codex", "gemini", "claude"], ["multi_turn"], turn_class=Turn)


if __name__ == "__main__":
    if MODE not in ("terminal", "tool-result"):
        h.log("unknown mode %r: terminal or tool-result" % MODE)
        sys.exit(2)
    sys.exit(DoubleEvents().run())
