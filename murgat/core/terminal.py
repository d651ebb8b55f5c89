"""Text from records made safe to show in a terminal.

Ids, media names, ``--by`` values, answers and error messages come from input files that murgat did not
write. Printed raw, an ESC or CSI sequence in them recolours or clears the screen, an OSC sequence sets the
window title (or, in some terminals, a clipboard or a link), and a carriage return hides what came before it
on the line. Every place that shows such text to people passes it through :func:`for_terminal` first; the
JSON outputs (``--json``, ``results.jsonl``) keep the exact text.

No rich here: the warning lines that use it are printed before any table is drawn, and importing rich
for them would slow down every command's start.
"""

from __future__ import annotations

import re

#: what is never shown as itself: C0 controls (newline and tab too: inside one field they would break the
#: line or the table's columns), DEL, the C1 controls (U+0080–U+009F: some terminals read U+009B as CSI),
#: the line and paragraph separators, and the bidirectional overrides and isolates (they reorder what is
#: shown, so an id could read as another). Other format characters (the zero-width joiner of emoji
#: sequences, soft hyphens) cannot move the cursor and are left as they are.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _visible(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: object) -> str:
    r"""``text`` (any value, shown as ``str``) with every control character written as a visible escape:
    ESC is ``\x1b``, a newline ``\x0a``, U+202E ``\u202e``. A backslash is left as it is (media names with
    Windows paths stay readable), so the shown text is for reading, not for parsing back: the exact text
    is in the JSON output."""
    s = text if isinstance(text, str) else str(text)
    return s if s.isprintable() else _UNSAFE.sub(_visible, s)

