"""An answer the server cut off at the token cap is not a verdict: every verdict reader (the verify
and entail stages, the offline judge's claim check) reads it as ``unparseable``.

On vLLM a cut-off ``{"label":\\t\\n"no`` was read as ``no``. The judge here is scripted; the cut is
what the providers report (OpenAI ``finish_reason: "length"``, Gemini ``MAX_TOKENS``), carried
by :attr:`murgat.judges.base.RawAnswer.truncated`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from murgat.commands.score.stages import verify
from murgat.core.schema import AtomicFact
from murgat.judges.base import RawAnswer
from murgat.judges.embedded_check import check_claim
from murgat.judges.scripted import ScriptedJudge
from murgat.judges.types import JudgeRequest, Usage
from murgat.judging.context import ItemContext
from murgat.judging.entail import ask_entailment
from murgat.judging.pool import CallPool
from murgat.judging.sentences import sentences_of
from murgat.media.streams import probe
from murgat.settings.score_resolved import JudgeSpec, ScoreConfig


class CutOff(ScriptedJudge):
    """Answers ``text`` marked as stopped at the cap."""

    def __init__(self, text: str, **kw: Any) -> None:
        super().__init__(lambda req: text, **kw)

    async def _call(self, req: JudgeRequest) -> RawAnswer:
        self.requests.append(req)
        return RawAnswer(text=self.answer(req), usage=Usage(input_tokens=5, output_tokens=6), truncated=True)


def _ctx(media: Path) -> tuple[ItemContext, ScoreConfig]:
    js = JudgeSpec(spec="scripted")
    cfg = ScoreConfig(judge_verify=js, judge_decompose=js, judge_entail=js)
    info = probe(media)
    return ItemContext(media=media, durations=info.durations(), config=cfg, _info=info), cfg


def test_verify_and_entail_read_a_cut_answer_as_unparseable(friday: Path) -> None:
    ctx, cfg = _ctx(friday)
    (sent,) = sentences_of("A woman stands at a desk (visual, 0:01).", ctx.durations, 1.0)
    for cut in ('{"label":\t\n"no', "No", "yes"):
        judge = CutOff(cut)
        verdict, _ = asyncio.run(verify(CallPool(), judge, sent, cfg, ctx))
        assert verdict == "unparseable", (cut, verdict)
        fact = AtomicFact(index=0, sentence_index=0, text=sent.text, citations=sent.citations)
        verdict, call = asyncio.run(ask_entailment(CallPool(), judge, fact, frozenset({0}), ctx))
        assert verdict == "unparseable" and call.error and "token" in call.error, (cut, verdict, call.error)


def test_the_claim_check_reads_a_cut_answer_as_unparseable(example_media: Path) -> None:
    v = check_claim("Bicycles pass the camera (visual, 0:02).", example_media / "bikes.mp4", CutOff("Label: no"))
    assert v.label == "unparseable"
