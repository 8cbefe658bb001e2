#!/usr/bin/env python3
"""single-turn.py: a CORRECT but minimal test adapter (profile native, agent
codex, supports nothing: no multi_turn, no interrupt, no resume). See
README.md in this directory.

It runs one turn, `codex exec --json --skip-git-repo-check -s MODE PROMPT`
with stdin closed, hands on the CLI's events as they come (re-serialised
with json.dumps), reports the turn (ok iff codex exits 0 after
turn.completed) and, on `close`, writes end and exits 0. `close` while the
turn runs means the caller is gone: it stops the CLI (SIGINT, SIGTERM 2 s
later, SIGKILL 2 s after that), waits for it and reports the turn ok:false.

It declares "supports": [], so a runner must not send it `send` or
`interrupt` (HARNESS.md: checks of what it does not claim are SKIP). If it
gets one anyway it says "unexpected command" on stderr, kills the CLI if one
runs, and exits 3 without an end record: sending it was the runner's fault.

How real adapters look: the many one-shot wrappers (a GitHub Action step,
a Makefile target, a script around `codex exec --json`) that run one prompt
and have no notion of a conversation or of cancelling it.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402


class Turn(h.Turn):
    terminal_event = "turn.completed"


class SingleTurn(h.Adapter):
    def __init__(self):
        super().__init__("single-turn", ["codex"], [], turn_class=Turn)

    def start(self, cmd):
        if self.session is not None:
            h.log("start: this adapter runs one turn; a second start is ignored")
        elif cmd.get("agent") != "codex":
            h.refuse(self.refusal % (cmd.get("agent"),))
        elif cmd.get("resume"):
            h.refuse("%s does not resume sessions (it declares no \"resume\")" % self.name)
        else:
            super().start(cmd)

    def send(self, cmd):
        self.unexpected("send")

    def interrupt(self):
        self.unexpected("interrupt")

    def unexpected(self, op):
        # This adapter claims neither send nor interrupt.
        h.log("unexpected command %r: this adapter supports a single turn and nothing else (hello supports [])" % op)
        if self.turn is not None and self.turn.proc.poll() is None:
            self.turn.proc.kill()
            self.turn.proc.wait()
        sys.stdout.flush()
        os._exit(3)

    def unknown(self, op):
        h.log("unknown op %r; ignored" % op)


if __name__ == "__main__":
    sys.exit(SingleTurn().run())
