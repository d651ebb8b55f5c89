"""Settings that carry their fingerprint (``murgat.engine.fingerprint``): what a field's declaration
says is what a folder's fingerprint holds."""

from __future__ import annotations

import typing
from typing import Any

import pytest

from murgat.commands.score.command import score_config, score_fingerprint
from murgat.engine.fingerprint import Late, deciding_fields, derive, fingerprint
from murgat.settings.score import SCORE_NAMES, ScoreSettings
from murgat.settings.score_resolved import ScoreConfig

BASE = {"input": "in.jsonl", "judge": "embedded", "out": "o"}


def _other(name: str, value: Any, annotation: Any) -> Any:
    """A valid value of the field other than ``value``."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    literal = next((a for a in args if typing.get_origin(a) is typing.Literal), annotation)
    if typing.get_origin(literal) is typing.Literal:
        return next(c for c in typing.get_args(literal) if c != value)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value + 1 if name not in ("attributed_threshold", "max_undetermined") else 0.25
    if isinstance(value, list):
        return ["temperature_hint=1"]
    if name == "box_frame_size":
        return "320x240"
    if name == "effort":
        return "low"
    if value is None and (int in args or float in args):
        return 0.25 if name == "max_undetermined" else 2
    return f"{value or 'x'}-other"


SKIP = {"input", "out", "cache", "dry_run", "record", "gold", "print_json", "quiet", "run_on", "ray_address", "ids"}


@pytest.mark.parametrize("name", [n for n in ScoreSettings.model_fields if n not in SKIP])
def test_a_score_setting_is_in_the_fingerprint_exactly_when_it_is_marked(name: str) -> None:
    """Changing a field marked as deciding the work refuses a resumed folder; changing any other
    (the bootstrap, the request limits, where items run) does not."""
    s = ScoreSettings(**BASE)
    info = ScoreSettings.model_fields[name]
    changed = ScoreSettings(**{**BASE, name: _other(name, getattr(s, name), info.annotation)})
    before, after = score_fingerprint(s, score_config(s)), score_fingerprint(changed, score_config(changed))
    assert (before != after) == (name in deciding_fields(ScoreSettings)), name


def test_legacy_names_place_settings_where_old_folders_have_them() -> None:
    s = ScoreSettings(**BASE, pad=0.5, decompose_context=2, end_tolerance=0.25, bootstrap=300)
    fp = score_fingerprint(s, score_config(s))
    assert fp["evidence"]["pad_s"] == 0.5 and fp["decompose_context_sentences"] == 2
    assert fp["end_tolerance_s"] == fp["evidence"]["end_tolerance_s"] == 0.25
    assert "bootstrap_resamples" not in fp and "pad" not in fp  # the bootstrap never decides the work
    cfg = derive(ScoreConfig, s, SCORE_NAMES, extra={"judge_verify": {"spec": "j"}, "judge_decompose": {"spec": "j"},
                                                     "judge_entail": {"spec": "j"}})
    assert (cfg.bootstrap_resamples, cfg.evidence.pad_s, cfg.decompose_context_sentences) == (300, 0.5, 2)


def test_a_late_setting_enters_only_when_it_is_not_at_its_default() -> None:
    s = ScoreSettings(**BASE)
    assert "max_citations_per_fact" not in fingerprint(s, SCORE_NAMES)
    assert fingerprint(ScoreSettings(**BASE, max_citations_per_fact=4), SCORE_NAMES)["max_citations_per_fact"] == 4
    assert isinstance(SCORE_NAMES["max_citations_per_fact"], Late)
