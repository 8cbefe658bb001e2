#!/usr/bin/env python3
"""sigint-only.py: a BUGGY test adapter (profile native, agent claude,
supports interrupt). See README.md in this directory.

Planted bug: the interrupt is one SIGINT, and the turn is reported only
when the CLI has exited: no SIGTERM, no SIGKILL, no time limit. Claude
Code holds a SIGINT that comes before its turn has begun and acts on it
once the turn begins (captured from 2.1.331: sigint-during-startup); a CLI
that is still starting, or stuck in its start-up, does nothing on it, and
the caller's stop hangs until the CLI gets that far, or for ever.

How the real thing looks: wrappers whose abort is `child.kill('SIGINT')`
and a promise that the child's 'exit' event alone settles.

Everything else follows conformance/HARNESS.md: hello first, the CLI's JSON
lines handed on re-serialised (json.dumps), one turn_end per turn, end last,
exit 0 after close (close kills the CLI with SIGKILL). Claude runs in print
mode; a `send` resumes the session in a new process.
"""

import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402


class SigintOnlyTurn(h.Turn):
    # The bug: nothing after the SIGINT.
    escalation = ()


class SigintOnly(h.Adapter):
    def __init__(self):
        super().__init__("sigint-only", ["claude"], ["interrupt"], turn_class=SigintOnlyTurn)

    def stop(self, turn):
        """The caller is gone (close): the CLI is killed outright."""
        turn.interrupted = turn.interrupted or "closed during the turn"
        turn.signal(signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(SigintOnly().run())
