"""``scripted``: a judge whose answers come from a Python function, for tests and
benchmarks (inspect_ai's mockllm idea). Not reachable from the command line."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from murgat.judges.base import Judge, RawAnswer
from murgat.judges.types import JudgeRequest, Usage


class ScriptedJudge(Judge):
    provider = "scripted"

    def __init__(self, answer: Callable[[JudgeRequest], str], model: str = "script", delay_s: float = 0.0,
                 evidence_text: bool = False, **kw: Any) -> None:
        super().__init__(model, **kw)
        self.answer = answer
        self.delay_s = delay_s
        self.needs_evidence_text = evidence_text  # type: ignore[misc]
        self.requests: list[JudgeRequest] = []

    async def _call(self, req: JudgeRequest) -> RawAnswer:
        self.requests.append(req)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return RawAnswer(text=self.answer(req), usage=Usage(input_tokens=10, output_tokens=2))
