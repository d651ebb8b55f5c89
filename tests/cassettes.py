"""What many command tests share: a replay cassette that answers every score stage "yes" (one fact
per sentence), and the JSONL writer of their inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: verify "yes", one fact "The woman speaks.", entail "yes": a score run that judges every item
YES_CASSETTE: list[dict[str, Any]] = [
    {"match": {"task": "verify"}, "output": {"text": "yes"}},
    {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["The woman speaks."]})}},
    {"match": {"task": "entail"}, "output": {"text": "yes"}},
]


def write_jsonl(p: Path, rows: list[dict[str, Any]]) -> Path:
    """``rows`` as one JSON object per line (the input files and cassettes of the tests)."""
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p
