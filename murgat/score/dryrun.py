"""``score --dry-run``: the calls a run would make, priced, with nothing sent."""

from __future__ import annotations

import json
from typing import Any

from murgat.judges.base import Judge, JudgeStats, Materialize, estimate_tokens
from murgat.judges.pricing import price_for
from murgat.judges.types import JudgeOutput, JudgeRequest
from murgat.rules import rule_decompose


class DryRunJudge:
    """Counts the calls a run would make and prices them, answering synthetically.

    Answers are chosen for an upper bound: every sentence verifiable, decomposition by the
    rules, joint entailment "yes" and single-citation entailment "no" (so ``alce`` asks
    every leave-one-out question).
    """

    def __init__(self, inner: Judge) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.needs_evidence_text = inner.needs_evidence_text
        self.calls = 0
        self.est_tokens = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def stats(self) -> JudgeStats:
        return self.inner.stats

    def key(self, req: JudgeRequest) -> str:
        return self.inner.key(req)

    def refusal(self, *tasks: str) -> str | None:
        return self.inner.refusal(*tasks)

    async def generate(self, req: JudgeRequest, materialize: Materialize | None = None) -> JudgeOutput:
        if self.inner.cache is not None and self.inner.cache.get(self.inner.key(req)) is not None:
            self.inner.stats.cache_hits += 1
        else:
            self.calls += 1
            if materialize is not None:
                req = await materialize()
            self.est_tokens += estimate_tokens(req)
        if req.task == "decompose":
            text = json.dumps({"facts": rule_decompose(req.inputs.get("sentence", ""))})
        elif req.task == "entail":
            text = "yes" if len(req.inputs.get("evidence", [])) > 1 else "no"
        elif req.task == "decontextualize":
            text = req.inputs.get("text", "")
        else:
            text = "yes"
        return JudgeOutput(text=text, model=self.model, provider=self.provider)

    def cost(self) -> float:
        pin, pout = price_for(self.provider, self.model, self.inner.options)
        return (self.est_tokens * pin + self.calls * 30 * pout) / 1e6

    async def aclose(self) -> None:
        await self.inner.aclose()


def estimate(judges: list[Any], n_items: int) -> dict[str, Any]:
    """The dry run's document: an upper bound on the calls, their tokens and cost, the cache hits."""
    total_calls = sum(j.calls for j in judges)
    return {"items": n_items, "judge_calls_upper_bound": total_calls, "calls_per_item": total_calls / max(1, n_items),
            "est_input_tokens": sum(j.est_tokens for j in judges), "est_cost_usd": sum(j.cost() for j in judges),
            "cache_hits": sum(j.inner.stats.cache_hits for j in judges)}
