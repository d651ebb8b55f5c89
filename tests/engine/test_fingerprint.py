"""Settings that carry their fingerprint (``murgat.engine.fingerprint``): what a field's declaration
says is what a folder's fingerprint holds."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest

from murgat.commands.score.command import score_config, score_fingerprint
from murgat.engine.fingerprint import Late, deciding_fields, derive, fingerprint, without_transport
from murgat.engine.folder import RunConfigMismatch, RunFolder
from murgat.judges import TRANSPORT_OPTIONS
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


def test_transport_options_leave_every_shape_of_recorded_options() -> None:
    """Parsed options (``options``, ``…_options``) and raw ``KEY=VALUE`` lists (``…_option``) lose the
    options that never change answers; everything else stays, in order."""
    assert {"client", "endpoint_failures", "endpoint_cooldown_s", "delay_s", "api_key"} <= TRANSPORT_OPTIONS
    doc = {"judge_entail": {"spec": "openai:m", "options": {"client": "httpx", "video": "clip"}},
           "model_options": {"endpoint_failures": "5", "base_url": "http://a"}, "options": {"delay_s": "1"},
           "planner_option": ["client=sdk", "video=clip", " endpoint_cooldown_s = 2"], "client": "kept",
           "judge_option": ["extra_body={}"], "evidence": {"fps": 1.0}}
    assert without_transport(doc) == {
        "judge_entail": {"spec": "openai:m", "options": {"video": "clip"}},
        "model_options": {"base_url": "http://a"}, "options": {},
        "planner_option": ["video=clip"], "client": "kept", "judge_option": ["extra_body={}"],
        "evidence": {"fps": 1.0}}


def test_a_folder_that_recorded_a_transport_option_resumes_without_it(tmp_path: Path) -> None:
    """Every command's folder is checked in one place: a fingerprint written with ``-P client=httpx`` (a
    program run) or ``-J delay_s=1`` (faithfulness) matches the same settings without them, and the other way
    round; an answer-changing option still differs."""
    folder = RunFolder(tmp_path)
    with_transport = {"planner_option": ["client=httpx", "video=frames"], "options": {"delay_s": "1", "video": "frames"}}
    (tmp_path / "config.json").write_text(json.dumps({"fingerprint": with_transport, "config": {}}))
    folder.check_config({"planner_option": ["video=frames"], "options": {"video": "frames"}}, {})
    folder.check_config({"planner_option": ["video=frames", "client=sdk"], "options": {"video": "frames"}}, {})
    assert "client" not in (tmp_path / "config.json").read_text()
    with pytest.raises(RunConfigMismatch, match="planner_option"):
        folder.check_config({"planner_option": ["video=clip"], "options": {"video": "frames"}}, {})
