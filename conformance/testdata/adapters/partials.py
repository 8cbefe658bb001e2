#!/usr/bin/env python3
"""partials.py: a test adapter (profile native, agent claude, supports
multi_turn), correct with no argument, BUGGY with `drop` or `double`. See
README.md in this directory.

It runs Claude in print mode with --include-partial-messages and hands on
every CLI event re-serialised but the partial messages (stream_event),
which it shows its caller as its own text deltas instead,
{"type":"text-delta","delta":...}, one per text delta the CLI streamed
(an AI SDK provider's view of the stream).

- no argument: correct. The whole assistant messages still carry each
  block once; the deltas carry it as it streamed.
- `drop`: asks for the partial messages and drops them: no text-delta at
  all, every block reaches the caller only whole (a provider that turns
  the option on for the CLI and never reads a stream_event).
- `double`: the deltas, and then the whole block again as one more
  text-delta when the assistant message comes (a provider that streams the
  deltas and also emits the finished block, so the caller's text shows
  every block twice).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402

MODE = sys.argv[1] if len(sys.argv) > 1 else ""


class Turn(h.Turn):
    terminal_event = "result"

    def argv(self, prompt):
        s = self.session
        args = [h.executable("claude"), "-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"]
        if s.id:
            args.append("--resume=" + s.id)
        return args + [prompt]

    def event(self, obj):
        if obj.get("type") == "stream_event":
            self.observe(obj)
            ev = obj.get("event") or {}
            delta = ev.get("delta") or {}
            if MODE != "drop" and ev.get("type") == "content_block_delta" and delta.get("type") == "text_delta":
                h.write({"type": "text-delta", "delta": delta.get("text", "")})
            return
        super().event(obj)
        if MODE == "double" and obj.get("type") == "assistant":
            for block in (obj.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "text":
                    h.write({"type": "text-delta", "delta": block.get("text", "")})  # the bug: the block again


class Partials(h.Adapter):
    def __init__(self):
        super().__init__("partials" + ("-" + MODE if MODE else ""), ["claude"], ["multi_turn"], turn_class=Turn)


if __name__ == "__main__":
    if MODE not in ("", "drop", "double"):
        h.log("unknown mode %r: drop or double" % MODE)
        sys.exit(2)
    sys.exit(Partials().run())
