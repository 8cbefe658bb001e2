#!/usr/bin/env python3
"""ladder-limit.py: a CORRECT test adapter with a line limit (profile native,
agent codex, supports interrupt). See README.md in this directory.

It hands on the events of `codex exec --json` as they come (re-serialised
with json.dumps), but reads stdout with a limit of 1 MiB (1,048,576 bytes)
per line, as the Python Claude Agent SDK does with max_buffer_size (default
1 MiB: "JSON message exceeded maximum buffer size"). A line longer than
that is not read: the adapter stops the CLI (SIGTERM, a wait of up to 2 s,
then SIGKILL), reports turn_end ok:false with the error

    CLI output line exceeded the 1048576-byte limit (line of N bytes or more)

(N is how much of the line it read before giving up) and goes on: the
session ends normally with its end record after close. A limit is allowed
(docs/protocols/unified.md#lines): what is not allowed is losing the line silently,
and this adapter says what it lost and why, naming the size.

Harness protocol (conformance/HARNESS.md): hello first, one turn_end per
turn, end last, exit 0 after close. Stdin of the CLI is closed. A `send`
resumes the thread in a new process (codex exec ... resume ID PROMPT).
Interrupt: SIGINT, SIGTERM 2 s later, SIGKILL 2 s after that; the turn is
reported when the CLI has exited. `close` during a turn stops it the same
way.
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402

LIMIT = 1048576  # bytes per line, without its newline


class Turn(h.Turn):
    terminal_event = "turn.completed"
    overflow = 0  # how much of a line over the limit was read

    def read(self, out):
        while True:
            raw = out.readline(LIMIT + 1)  # at most the limit and a newline
            if not raw:
                break
            if not raw.endswith(b"\n") and len(raw) > LIMIT:
                # The limit: the line goes on past LIMIT bytes. Stop reading
                # and stop the CLI.
                self.overflow = len(raw)
                h.log("a stdout line exceeded %d bytes; stopping codex" % LIMIT)
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                break
            obj = h.parse(raw)
            if obj is not None:
                self.event(obj)

    def finish(self):
        if self.overflow:
            return False, "CLI output line exceeded the %d-byte limit (line of %d bytes or more)" % (LIMIT, self.overflow)
        return super().finish()


if __name__ == "__main__":
    sys.exit(h.Adapter("ladder-limit", ["codex"], ["interrupt"], sigint=True, turn_class=Turn).run())
