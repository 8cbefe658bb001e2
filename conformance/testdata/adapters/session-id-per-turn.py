#!/usr/bin/env python3
"""session-id-per-turn.py: a BUGGY test adapter (profile native, agent
claude, supports multi_turn and resume). See README.md in this directory.

It pins the Claude session to an id of its own: a fresh UUID at start (or
the session the start asks to resume), passed as `--session-id ID` to
every turn's `claude -p --output-format stream-json --verbose` process,
the first and every later one alike. The bug: --session-id makes a new
session with that id, and Claude Code refuses an id whose session exists
("Error: Session ID ID is already in use.", exit 1, whether or not a
process still runs it): every turn after the first, and a start that
resumes, is refused. Continuing a session takes --resume ID.

How real adapters look: wrappers that keep "the conversation id" on their
side and hand it to the CLI as --session-id on every call, mistaking it for
"use this session".
"""

import os
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402


class Turn(h.Turn):
    terminal_event = "result"

    def argv(self, prompt):
        s = self.session
        return [h.executable("claude"), "-p", "--output-format", "stream-json", "--verbose", "--session-id", s.id, prompt]


class SessionIDPerTurn(h.Adapter):
    def __init__(self):
        super().__init__("session-id-per-turn", ["claude"], ["multi_turn", "resume"], turn_class=Turn)

    def open(self, cmd):
        s = super().open(cmd)
        if not s.id:
            s.id = str(uuid.uuid4())
        return s


if __name__ == "__main__":
    sys.exit(SessionIDPerTurn().run())
