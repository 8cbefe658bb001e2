#!/usr/bin/env python3
"""non-streaming.py: a CORRECT but unusual test adapter (profile native,
agent codex, supports interrupt). See README.md in this directory.

It runs `codex exec --json` but writes nothing while the CLI runs: it keeps
every event and hands them all on (re-serialised with json.dumps, in order)
once the process has exited, followed by the turn_end. Nothing is lost; the
caller just sees the turn all at once.

How real adapters look: batch wrappers built on subprocess.run(...,
capture_output=True) or Popen.communicate(), which parse stdout only when
the process is done (a CI step, an evaluation harness, a Go helper calling
cmd.Output()).

Harness protocol (conformance/HARNESS.md): hello first, one turn_end per
turn, end last, exit 0 after close. Stdin of the CLI is closed. A `send`
resumes the thread in a new process (codex exec ... resume ID PROMPT).
Interrupt: SIGINT, then a wait of up to 3 s, then SIGKILL; once the process
has exited it writes the events it has and turn_end ok:false error
"interrupted". `close` during a turn stops it the same way.
"""

import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402


class Turn(h.Turn):
    terminal_event = "turn.completed"
    escalation = ((3, signal.SIGKILL),)

    def __init__(self, session, prompt):
        self.events = []
        super().__init__(session, prompt)

    def event(self, obj):
        self.events.append(obj)  # nothing is written while the CLI runs

    def finish(self):
        """Writes the turn's events; returns (ok, error)."""
        for obj in self.events:
            super().event(obj)
        return super().finish()


if __name__ == "__main__":
    sys.exit(h.Adapter("non-streaming", ["codex"], ["interrupt"], sigint=True, turn_class=Turn).run())
