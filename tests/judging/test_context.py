"""The item context applies the run's evidence limits: in the plan, the evidence it builds and the one
request it is fitted to; and the limits enter a cache key only where they changed what is sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

from murgat.core.schema import AtomicFact, JudgeCall
from murgat.judges.cache import ResponseCache
from murgat.judges.scripted import ScriptedJudge
from murgat.judges.types import AudioPart, VideoPart
from murgat.judging.context import ItemContext
from murgat.judging.entail import ask_entailment
from murgat.judging.pool import CallPool
from murgat.judging.sentences import sentences_of
from murgat.media.limits import EvidenceLimits
from murgat.media.streams import probe
from murgat.settings.score_resolved import JudgeSpec, ScoreConfig


def _cfg(limits: EvidenceLimits | None = None) -> ScoreConfig:
    js = JudgeSpec(spec="scripted")
    return ScoreConfig(judge_verify=js, judge_decompose=js, judge_entail=js,
                       evidence_limits=limits or EvidenceLimits())


def _ask(media: Path, text: str, judge: ScriptedJudge, cfg: ScoreConfig) -> tuple[str, JudgeCall]:
    info = probe(media)
    (sent,) = sentences_of(text, info.durations(), 1.0)
    ctx = ItemContext(media=media, durations=info.durations(), config=cfg, _info=info)
    fact = AtomicFact(index=0, sentence_index=0, text=text, citations=sent.citations)
    return asyncio.run(ask_entailment(CallPool(), judge, fact, frozenset(range(len(sent.citations))), ctx))


def test_a_request_over_the_image_cap_is_thinned_noted_and_keyed_apart(friday: Path, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    judge = ScriptedJudge(lambda req: "yes", cache=cache)
    text = "Operators sit at a switchboard (visual, 0:00-0:06)."
    _, thin = _ask(friday, text, judge, _cfg(EvidenceLimits(max_images=3)))
    (thin_req,) = judge.requests
    assert [len(p.frames) for p in thin_req.parts if isinstance(p, VideoPart)] == [3]
    kinds = [n["kind"] for n in thin.evidence_notes]
    assert kinds == ["images_capped", "images_capped"], thin.evidence_notes  # the segment's note, the request's
    assert "3 images per request" in thin.evidence_notes[-1]["text"]
    # asked again under the same limit: the same fit, found in the cache, with the same notes (kept with the answer)
    _, again = _ask(friday, text, judge, _cfg(EvidenceLimits(max_images=3)))
    assert len(judge.requests) == 1 and again.cached and again.evidence_notes == thin.evidence_notes
    # without the cap the whole evidence is another question (7 frames), keyed apart from the thinned one
    _, whole = _ask(friday, text, judge, _cfg())
    assert len(judge.requests) == 2 and whole.evidence_notes == []
    full_req = judge.requests[1]
    assert [len(p.frames) for p in full_req.parts if isinstance(p, VideoPart)] == [7]
    assert judge.key(full_req) != judge.key(thin_req)
    cache.close()


def test_limits_that_change_nothing_leave_the_key_as_before(friday: Path) -> None:
    """A short file's request keys as it did before limits existed when the limits do not bite: 42
    frames at 640x480 would pass OpenAI's 50 MB by a raw-RGB bound (38.7 MB of pixels, 51.6 MB as
    base64) but are about 2 MB as JPEG, so nothing is thinned and nothing in the key changes."""
    judge = ScriptedJudge(lambda req: "yes")
    text = ("Operators sit at a switchboard (visual, 0:00-0:06; visual, 0:00-0:05; visual, 0:01-0:06; "
            "visual, 0:00-0:04; visual, 0:02-0:06; visual, 0:00-0:03; visual, 0:01-0:05; visual, 0:03-0:06).")
    _ask(friday, text, judge, _cfg())
    _ask(friday, text, judge, _cfg(EvidenceLimits(max_images=500, max_request_bytes=50_000_000)))
    a, b = judge.requests
    assert sum(len(p.frames) for p in a.parts if isinstance(p, VideoPart)) == 42
    assert a.key_hint == b.key_hint and judge.key(a) == judge.key(b) and b.evidence_notes == []


def test_a_long_audio_citation_is_sampled_and_the_plan_says_so_in_the_key(long_tone: Path) -> None:
    judge = ScriptedJudge(lambda req: "yes")
    text = "A tone sounds throughout (audio, 0:00-11:00)."
    _, call = _ask(long_tone, text, judge, _cfg())
    (req,) = judge.requests
    audio = [p for p in req.parts if isinstance(p, AudioPart)]
    assert sum(len(p.samples) for p in audio) == 300 * 16000  # 5:00 of the 11:00, as excerpts
    assert [n["kind"] for n in call.evidence_notes] == ["audio_sampled"]
    assert call.evidence_notes[0]["text"].startswith("11:00 of audio cited; 5:00 sent")
    _ask(long_tone, text, judge, _cfg(EvidenceLimits(max_audio_s=60)))
    assert judge.key(judge.requests[0]) != judge.key(judge.requests[1])  # other excerpts: another question


def test_a_request_that_cannot_fit_is_not_sent_and_says_why(friday: Path) -> None:
    """Two visual segments and room for one image: refused with the reason, never asked (a judge that
    never saw the evidence cannot say no), recorded as over the limit rather than a judge error."""
    judge = ScriptedJudge(lambda req: "yes")
    verdict, call = _ask(friday, "Operators sit at a switchboard (visual, 0:00-0:03; visual, 0:03-0:06).", judge,
                         _cfg(EvidenceLimits(max_images=1)))
    assert judge.requests == [] and verdict == "error"
    assert call.error is not None and call.error.startswith("over limit: ") and "not sent" in call.error
    assert call.evidence_notes[-1]["kind"] == "refused"
