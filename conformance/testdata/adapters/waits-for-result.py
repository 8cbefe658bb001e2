#!/usr/bin/env python3
"""waits-for-result.py: a BUGGY test adapter (profile native, agents gemini and
codex, supports nothing). See README.md in this directory.

Planted bug: a turn ends only with the CLI's terminal event. The adapter hands
on every line and reports the turn when the terminal event (Gemini `result`,
Codex `turn.completed` or `turn.failed`) arrives, then waits for the CLI's
exit; the end of the CLI's stdout and its exit without that event are never
noticed, so such a turn never ends: no turn_end, and `close` waits for it too.

How the real thing looks: an SDK whose turn is a promise resolved by the
readline 'line' handler when it sees the result event, with no 'close' or
'exit' handler that settles it (or a loop `for line in stdout: if result:
break` that then waits on a condition only the result sets). Against Gemini
CLI on a pipe it hangs for ever: the CLI can exit 0 having lost the end of
its stdout, result included (it calls process.exit without draining it).

Everything else follows conformance/HARNESS.md: hello first, the CLI's lines
re-serialised (json.dumps), end last, exit 0 after close. It declares no
interrupt; `close` during a turn whose CLI still runs stops it (SIGINT, then
SIGTERM and SIGKILL), and the turn ends when its terminal event comes, or
never.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402


class Turn(h.Turn):
    def pump(self):
        reported = False
        for raw in self.proc.stdout:
            obj = h.parse(raw)
            if obj is None:
                continue
            self.event(obj)
            if self.terminal and not reported:
                reported = True
                self.proc.wait()
                h.EVENTS.put(("done", self))
        # The bug: the end of stdout without a terminal event is not an
        # end; nothing reports the turn.
        self.proc.wait()


if __name__ == "__main__":
    sys.exit(h.Adapter("waits-for-result", ["gemini", "codex"], [], turn_class=Turn).run())
