#!/usr/bin/env python3
"""ignores-cancel.py: a BUGGY test adapter (profile native, agents codex,
gemini and claude, supports interrupt). See README.md in this directory.

Planted bug: cancellation is acknowledged and ignored. On `interrupt` the
adapter does not touch the CLI at all: it writes turn_end ok:false error
"cancelled" at once, as if it had cancelled the turn, while the CLI goes on
working (its further output is still handed on, and a next `send` starts a
new process beside it). Only `close` stops the CLI: SIGKILL to its process
group (it runs in a session of its own), a wait for it, then the end record.

How the real thing looks: an MCP server (or JSON-RPC tool host) that answers
notifications/cancelled by marking the request done and replying, without
cancelling the task that does the work; the Python SDK's
cancel scope is never entered, so the subprocess runs on until the session
is torn down and the process is killed.

Everything else follows conformance/HARNESS.md: hello first, the CLI's JSON
lines handed on re-serialised (json.dumps), one turn_end per turn, end last,
exit 0 after close. Claude runs in print mode, `claude -p --output-format
stream-json --verbose PROMPT` with stdin closed; a `send` resumes the session
in a new process (codex exec resume ID, gemini --resume ID, claude
--resume=ID).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402


class IgnoresCancel(h.Adapter):
    def __init__(self):
        super().__init__("ignores-cancel", ["codex", "gemini", "claude"], ["interrupt"], refusal="unknown agent %r", turn_class=h.GroupTurn)
        self.abandoned = []  # turns reported "cancelled" whose CLI still runs

    def interrupt(self):
        # The bug: claim the cancellation and leave the CLI alone. The
        # turn counts as over (a next send starts a new process at
        # once); the abandoned CLI works on, its output still handed on.
        if self.turn is not None:
            h.record("turn_end", ok=False, error="cancelled", session_id=self.session.id)
            self.abandoned.append(self.turn)
            self.turn = None
            if self.pending:
                self.turn = self.new_turn(self.pending.pop(0))

    def close(self):
        self.closing, self.pending = True, []
        # Only now is any CLI stopped: SIGKILL, and a wait for it.
        for t in self.abandoned + ([self.turn] if self.turn else []):
            t.kill()
        return self.turn is None  # else the running turn's "done" (after its stdout ends) reports it

    def done(self, turn):
        if turn in self.abandoned:
            self.abandoned.remove(turn)  # its turn_end was written long ago
            return False
        return super().done(turn)

    def outcome(self, turn):
        ok, error = turn.finish()
        return ok, error if not self.closing else "closed during the turn: " + error


if __name__ == "__main__":
    sys.exit(IgnoresCancel().run())
