#!/usr/bin/env python3
"""lost-tail.py: a BUGGY test adapter (profile native, agents codex, gemini and
claude, supports nothing). See README.md in this directory.

Planted bug: the tail of the CLI's output is lost and the turn still counts
as a success. It hands on every line the CLI wrote except the last one, and
for Codex it also drops the last `item.completed` agent_message when that is
one of the last two lines; the turn_end is ok:true whenever the CLI exits 0.
So the terminal event (Codex turn.completed with its usage, Claude and
Gemini result) never reaches the caller, nor, for Codex, the final answer.

How the real thing looks: a Go SDK that reads the CLI's stdout with a
bufio.Scanner in one goroutine while another calls cmd.Wait(), which closes
the stdout pipe as soon as the process exits; the scanner's last Read fails
with "file already closed", Scan returns false, Scanner.Err() is never
checked, and the turn is judged by the exit status alone. Which lines are
lost depends on the race; this adapter loses them deterministically (the
lines still buffered in the pipe when the process exited are the last ones).

Everything else follows conformance/HARNESS.md: hello first, the lines it
does hand on re-serialised (json.dumps), one turn_end per turn, end last,
exit 0 after close. It declares no interrupt: an `interrupt` is logged and
ignored; `close` during a turn stops the CLI (SIGTERM, SIGKILL 2 s later)
and reports the turn ok:false. Claude runs in print mode, `claude -p
--output-format stream-json --verbose PROMPT` with stdin closed; a `send`
resumes the session in a new process (codex exec resume ID, gemini --resume
ID, claude --resume=ID).
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402


class Turn(h.Turn):
    finished_before_close = True

    def pump(self):
        held = []  # the last lines read, not handed on yet
        for raw in self.proc.stdout:
            obj = h.parse(raw)
            if obj is not None:
                self.observe(obj)
            held.append(obj)
            if len(held) > 2:
                self.hand_on(held.pop(0))
        self.proc.wait()
        # The bug: the last line is lost, and for Codex the final answer too
        # when it is among the last two lines.
        for obj in held[:-1]:
            if self.session.agent == "codex" and is_agent_message(obj):
                continue
            self.hand_on(obj)
        h.EVENTS.put(("done", self))

    def hand_on(self, obj):
        if obj is not None:
            h.write(obj)

    def observe(self, obj):
        # Only the session id matters: the outcome is the exit status.
        sid = h.observe(self.session.agent, obj)[0]
        if sid is not None:
            self.session.id = sid

    def finish(self):
        # The bug, again: the exit status alone decides.
        code, agent = self.proc.returncode, self.session.agent
        if code == 0:
            return True, ""
        if code is not None and code < 0:
            return False, "%s was killed by signal %d" % (agent, -code)
        return False, "%s exited with code %s" % (agent, code)


def is_agent_message(obj):
    item = obj.get("item") if obj else None
    return obj is not None and obj.get("type") == "item.completed" and isinstance(item, dict) and item.get("type") == "agent_message"


class LostTail(h.Adapter):
    turn_class = Turn

    def __init__(self):
        super().__init__("lost-tail", ["codex", "gemini", "claude"], [], refusal="unknown agent %r")

    def interrupt(self):
        h.log("interrupt: not supported (no \"interrupt\" in supports); ignored")

    def stop(self, turn):
        """SIGTERM, then SIGKILL if the CLI has not exited 2 s later."""
        turn.finished_before_close = False
        turn.proc.terminate()
        try:
            turn.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            turn.proc.kill()
            turn.proc.wait()

    def outcome(self, turn):
        ok, error = turn.finish()
        if self.closing and not turn.finished_before_close:
            return False, "closed during the turn" + (": " + error if error else "")
        return ok, error


if __name__ == "__main__":
    sys.exit(LostTail().run())
