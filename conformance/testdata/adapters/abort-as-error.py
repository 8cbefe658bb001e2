#!/usr/bin/env python3
"""abort-as-error.py: a BUGGY test adapter (profile native, agents codex,
gemini and claude, supports interrupt and max_turns). See README.md in this directory.

Planted bug: the reason of a turn is read from the CLI's exit status, as a
shell reads it: death by SIGINT, SIGTERM or SIGKILL, or exit 130 or 143, is
"cancelled"; any other failure is "failed". But the CLIs end an interrupted
turn otherwise: Codex exits 1 on SIGINT, Gemini exits 0 without a result,
and Claude in print mode writes an error result (terminal_reason
aborted_tools) and exits 0. So the user's own stop is reported as a failure
(turn_end reason "failed"), and a turn limit as a failure like any other.

How the real thing looks: UIs that show "Codex exited with code 1" in red
after the user pressed Stop, because they map exit statuses, not what the
stream says, onto "cancelled" and "error".

Everything else follows conformance/HARNESS.md: hello first, the CLI's JSON
lines handed on re-serialised (json.dumps), one turn_end per turn (with a
reason), end last, exit 0 after close. Interrupt: SIGINT, SIGTERM 2 s later,
SIGKILL 2 s after that, to the CLI's process group (it runs in a session of
its own), always waiting for the CLI. Claude runs in print
mode; a `send` resumes the session in a new process.
"""

import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402

STOPPED = {-signal.SIGINT, -signal.SIGTERM, -signal.SIGKILL, 130, 143}


class AbortAsError(h.Adapter):
    def __init__(self):
        super().__init__("abort-as-error", ["codex", "gemini", "claude"], ["interrupt", "max_turns"], turn_class=h.GroupTurn)

    def done(self, turn):
        for t in turn.timers:
            t.cancel()
        ok, error = self.outcome(turn)
        code = turn.proc.returncode
        # The bug: the exit status decides whether the turn was a stop.
        reason = "completed" if ok else "cancelled" if code in STOPPED else "failed"
        fields = {"ok": ok, "session_id": self.session.id, "reason": reason}
        if not ok:
            fields["error"] = error
        h.record("turn_end", **fields)
        self.turn = None
        if self.closing:
            return True
        if self.pending:
            self.turn = self.new_turn(self.pending.pop(0))
        return False


if __name__ == "__main__":
    sys.exit(AbortAsError().run())
