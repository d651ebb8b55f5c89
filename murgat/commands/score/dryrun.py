"""``score --dry-run``: the calls a run would make, priced, with nothing sent.

A model murgat has no price for is priced as unknown, never as $0.00: its judge's cost is
``None`` ("price unknown"), the run's total leaves it out and says it is a lower bound
(``est_cost_is_lower_bound``), and ``-J price_in=…,price_out=…`` (USD per million tokens) gives
the price. The estimate is a table on stdout unless ``--json``.
"""

from __future__ import annotations

import json
from typing import Any

from murgat.core.rules import rule_decompose
from murgat.judges.base import Judge, JudgeStats, Materialize, estimate_tokens
from murgat.judges.pricing import list_price
from murgat.judges.types import JudgeOutput, JudgeRequest


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
        #: requests already counted: an identical request is one paid call (the pool sends it once while the first
        #: is in flight, and the response cache answers it after), however the two happen to be scheduled
        self._counted: set[str] = set()

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
        key = self.inner.key(req)
        if key in self._counted or (self.inner.cache is not None and self.inner.cache.get(key) is not None):
            self.inner.stats.cache_hits += 1
        else:
            self._counted.add(key)
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

    def price(self) -> tuple[float, float] | None:
        """USD per million (input, output) tokens, or ``None`` when the model's price is unknown."""
        return list_price(self.provider, self.model, self.inner.options)

    def cost(self) -> float | None:
        """Estimated USD of the calls counted (30 answer tokens each), ``None`` when the price is unknown."""
        price = self.price()
        if price is None:
            return None
        pin, pout = price
        return (self.est_tokens * pin + self.calls * 30 * pout) / 1e6

    async def aclose(self) -> None:
        await self.inner.aclose()


def estimate(judges: list[Any], n_items: int) -> dict[str, Any]:
    """The dry run's document: an upper bound on the calls, their tokens and cost, the cache hits,
    and each judge's part of them. ``est_cost_usd`` sums the judges whose price is known (a lower
    bound when another's is not: ``price_unknown`` names them), and is ``None`` when no judge that
    would be called has a known price."""
    rows = []
    for j in judges:
        price = j.price()
        rows.append({"judge": j.name, "calls": j.calls, "est_input_tokens": j.est_tokens,
                     "cache_hits": j.inner.stats.cache_hits,
                     "price_usd_per_mtok": None if price is None else {"input": price[0], "output": price[1]},
                     "est_cost_usd": j.cost()})
    called = [r for r in rows if r["calls"]]
    unknown = [r["judge"] for r in called if r["est_cost_usd"] is None]
    known = [r["est_cost_usd"] for r in called if r["est_cost_usd"] is not None]
    total_calls = sum(j.calls for j in judges)
    return {"items": n_items, "judge_calls_upper_bound": total_calls,
            "calls_per_item": round(total_calls / max(1, n_items), 2),
            "est_input_tokens": sum(j.est_tokens for j in judges),
            "est_cost_usd": sum(known) if known or not unknown else None,
            "est_cost_is_lower_bound": bool(unknown and known), "price_unknown": unknown,
            "cache_hits": sum(j.inner.stats.cache_hits for j in judges), "judges": rows}


def estimate_table(doc: dict[str, Any]) -> Any:
    """The dry run's estimate for people: one row per judge, then the total."""
    from rich.table import Table

    def usd(v: float | None) -> str:
        return "price unknown" if v is None else f"${v:,.4f}"

    t = Table(title=f"dry run: {doc['items']:,} item(s), nothing sent")
    for col in ("judge", "calls (upper bound)", "est. input tokens", "cache hits", "est. cost"):
        t.add_column(col)
    for r in doc["judges"]:
        t.add_row(r["judge"], f"{r['calls']:,}", f"{r['est_input_tokens']:,}", f"{r['cache_hits']:,}",
                  usd(r["est_cost_usd"]) if r["calls"] else "-")
    total = usd(doc["est_cost_usd"])
    if doc["est_cost_is_lower_bound"]:
        total = f"at least {total} (price unknown: {', '.join(doc['price_unknown'])})"
    t.add_row("total", f"{doc['judge_calls_upper_bound']:,} ({doc['calls_per_item']:g} per item)",
              f"{doc['est_input_tokens']:,}", f"{doc['cache_hits']:,}", total)
    return t
