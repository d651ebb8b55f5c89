"""No credential given in the settings (``-J api_key=…``, a base URL with ``user:password@``) is in
any file of a run folder, its page, or what ``diff`` prints (:func:`murgat.core.redact.redact`, applied
where the settings are serialised)."""

from __future__ import annotations

from pathlib import Path

from murgat.cli import main
from murgat.core.redact import redact
from tests.cassettes import YES_CASSETTE
from tests.cassettes import write_jsonl as _write

SECRETS = ("SEKRETKEY123", "PASSWD99", "OTHERKEY456", "PW2XYZ")


def _score(tmp: Path, media: Path, out: Path, key: str, password: str) -> int:
    cas = _write(tmp / "c.jsonl", YES_CASSETTE)
    inp = _write(tmp / "in.jsonl", [{"id": "a", "media": "friday.mp4", "question": "What mood is the man in?",
                                     "options": ["happy", "bad humor"], "gold": "B",
                                     "response": "She asks for him (audio, 0:01-0:03).\nAnswer: B"}])
    return main(["score", str(inp), "--judge", f"replay:{cas}", "-J", f"api_key={key}", "-J",
                 f"base_url=http://user:{password}@judge.example/v1", "--media-root", str(media), "--out", str(out),
                 "--quiet", "--json"])


def test_keys_and_url_passwords_are_in_no_run_file_page_or_diff(tmp_path: Path, example_media: Path,
                                                                capsys) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert _score(tmp_path, example_media, a, "SEKRETKEY123", "PASSWD99") == 0
    assert _score(tmp_path, example_media, a, "SEKRETKEY123", "PASSWD99") == 0  # a resume: the same settings
    assert _score(tmp_path, example_media, b, "OTHERKEY456", "PW2XYZ") == 0
    assert main(["view", str(a)]) == 0 and (a / "report.html").exists()
    assert main(["diff", str(a), str(b)]) in (0, 1)
    printed = "".join(capsys.readouterr())
    files = {p: p.read_bytes() for run in (a, b) for p in run.rglob("*") if p.is_file()}
    assert {p.name for p in files} >= {"config.json", "summary.json", "results.jsonl", "report.html"}
    for secret in SECRETS:
        assert secret not in printed
        assert not [p for p, data in files.items() if secret.encode() in data], secret
    assert "user:***@judge.example" in (a / "config.json").read_text()


def test_redaction_keeps_the_shape_of_what_it_hides() -> None:
    cfg = {"judge_option": ["api_key=abc", "timeout=3", "url=https://u:p@h/x"], "token": "t", "fps": 2,
           "base_url": "http://tok@host/v1", "plain": "http://host/v1", "key": "not a secret"}
    assert redact(cfg) == {"judge_option": ["api_key=***", "timeout=3", "url=https://u:***@h/x"], "token": "***",
                           "fps": 2, "base_url": "http://***@host/v1", "plain": "http://host/v1",
                           "key": "not a secret"}


def test_counts_named_after_tokens_are_not_secrets() -> None:
    """``max_tokens`` (an answer cap) and ``tpm`` are settings people compare between runs; only a name whose whole
    part says credential is hidden (``auth_token``, ``x-api-key``, ``OPENAI_API_KEY``)."""
    cfg = {"generate": {"max_tokens": 1024, "tokens_per_minute": 9}, "auth_token": "s", "x-api-key": "k",
           "OPENAI_API_KEY": "k2", "judge_option": ["max_tokens=64", "access_token=zz"]}
    assert redact(cfg) == {"generate": {"max_tokens": 1024, "tokens_per_minute": 9}, "auth_token": "***",
                           "x-api-key": "***", "OPENAI_API_KEY": "***", "judge_option": ["max_tokens=64",
                                                                                          "access_token=***"]}
