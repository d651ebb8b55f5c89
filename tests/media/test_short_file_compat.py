"""Short files: evidence, digests and cache keys exactly as before long-media evidence existed.

``short_evidence_before.json`` was written by the code before the change (commit c23eead) with
the recipe in :func:`snapshot`; every value in it is platform-independent (SHA-256 of file
bytes, cache keys, probe and frame timestamps, labels, sample counts), so the comparison holds on
any machine. Existing media caches and judge response caches keep answering only if all of these
stay equal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from murgat.core.citations import check_durations, parse_citations
from murgat.judges.cache import request_key
from murgat.judges.evidence import evidence_parts
from murgat.judges.types import JudgeRequest, TextPart
from murgat.media.cache import file_digest, make_key
from murgat.media.evidence import EvidenceConfig, build_evidence, describe, plan_segments
from murgat.media.streams import probe
from tests.conftest import real_media

BEFORE = json.loads((Path(__file__).parent / "short_evidence_before.json").read_text())
TEXT = "(visual, 0:00-0:02; audio, 0:01-0:03; visual, 0:04; audio, 0:05; visual, 0:00-0:06)"


def snapshot(path: Path) -> dict[str, Any]:
    info = probe(path)
    d = file_digest(path)
    cites = check_durations(parse_citations(TEXT), info.durations())
    plans = plan_segments(path, cites)
    ev = build_evidence(path, cites)
    parts = evidence_parts(ev, False)
    return {
        "digest": d,
        "audio_key": make_key("audio", d, sr=16000, stream=info.audio_stream),
        "plans": [[p.citation_index, p.modality, p.cited_start, p.cited_end, p.start, p.end, p.available, p.label]
                  for p in plans],
        "describe": describe(ev),
        "parts": [[type(x).__name__, getattr(x, "label", ""), getattr(x, "text", None), getattr(x, "start", None),
                   getattr(x, "end", None)] for x in parts],
        "hint_key": request_key("openai", "m", JudgeRequest(parts=[TextPart("claim")], key_hint="HINT")),
    }


@pytest.mark.parametrize("name", ["friday.mp4", "nasa_13013.mp4"])
def test_short_file_evidence_and_keys_are_unchanged(name: str) -> None:
    now = json.loads(json.dumps(snapshot(real_media(name))))  # tuples → lists, as stored
    assert now == BEFORE[name]


def test_evidence_config_dump_is_unchanged() -> None:
    """It enters every judge cache key and run fingerprint as it is: limits live elsewhere."""
    assert EvidenceConfig().model_dump() == BEFORE["config_dump"]


def test_short_plans_carry_no_sampling_key(friday: Path) -> None:
    info = probe(friday)
    plans = plan_segments(friday, check_durations(parse_citations(TEXT), info.durations()))
    assert [p.sampling_key() for p in plans] == [None] * len(plans)
    assert all(p.note is None and not p.excerpts for p in plans)
