#!/usr/bin/env python3
"""chunk-decode.py: a BUGGY test adapter (profile native, agents codex,
gemini and claude, no capabilities). See README.md in this directory.

Planted bug: each read of the CLI's stdout is decoded by itself. The
adapter reads the pipe with os.read (whatever the pipe holds, up to 64 KiB),
decodes every read with bytes.decode("utf-8", "replace") and cuts lines at
"\\n" in the decoded text. Lines that span reads come out whole, but a
multibyte UTF-8 character whose bytes span two reads is decoded as two
halves, each U+FFFD: the text the caller gets is corrupted, while the JSON
still parses and the turn looks fine.

How the real thing looks: `text += (await proc.stdout.read(4096)).decode(
errors="replace")` in asyncio wrappers, instead of reading lines
(StreamReader.readline) or an incremental decoder
(codecs.getincrementaldecoder), which keep the bytes of an unfinished
character for the next read.

Everything else follows conformance/HARNESS.md: hello first, the CLI's JSON
lines handed on re-serialised (json.dumps), one turn_end per turn, end last,
exit 0 after close. Claude runs in print mode; a `send` resumes the session
in a new process.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402


class ChunkTurn(h.Turn):
    def read(self, out):
        buf = ""
        fd = out.fileno()
        while True:
            data = os.read(fd, 65536)
            if not data:
                break
            buf += data.decode("utf-8", "replace")  # the bug: a character split across reads becomes U+FFFD
            while "\n" in buf:
                line, buf = buf.split("\n", 1)
                self.text_line(line)
        if buf.strip():
            self.text_line(buf)

    def text_line(self, line):
        line = line.rstrip("\r")
        if not line.strip():
            return
        try:
            obj = json.loads(line)
        except ValueError:
            h.log("skipping a line that is not JSON: %r" % line[:120])
            return
        if isinstance(obj, dict):
            self.event(obj)


if __name__ == "__main__":
    sys.exit(h.Adapter("chunk-decode", ["codex", "gemini", "claude"], [], turn_class=ChunkTurn).run())
