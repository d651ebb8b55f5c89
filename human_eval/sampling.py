"""The labelling sample as part of the method: drawn at random, recorded, and checkable later.

A corrected estimate (``murgat.human_eval.ppi``) is valid only when the labelled items are a random
sample of the items the judge scored: labels chosen by hand ("the interesting ones", "the
first 50") can carry any bias at all. So the sample is drawn here, by a rule anyone can redo:

* ``uniform``: every item's rank is the SHA-256 of ``"<seed>|<item id>"``; the n lowest are the
  sample. For a fixed seed this is one permutation of the items, and over seeds every subset of
  size n is equally likely (SHA-256 as a random function);
* ``video``: the same rank over the *videos* (``"<seed>|video|<video>"``); the n lowest videos
  are drawn and every item of each goes in — a cluster sample, analysed clustered by video;
* ``stratified``: the items are split by the value of one field (the strata), the n labels split
  over the strata (in proportion to their sizes, at least two each, or as given: the allocation
  ``murgat calibrate --plan`` prints), and within each stratum its n_h lowest-ranked items are
  drawn — the uniform rule stratum by stratum. The design records every stratum's size, share
  (its weight N_h/N) and count, which the stratified estimator
  (``murgat.human_eval.stratified``) weights by.

The rule needs no random-number library, so it gives the same sample on any machine and any
numpy version, and ``calibrate`` can redraw it from the run and the recorded design and confirm
that the labels are the sample (:func:`check_labels`). The design is written into the
annotation page and into every exported label line (``ResponseLabel.sample``).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

Method = Literal["uniform", "video", "stratified"]


class StratumDraw(BaseModel):
    """One stratum of a stratified design: its size, its weight and how many of it were drawn."""

    population: int = Field(ge=0, description="items of this stratum in the population (N_h)")
    weight: float = Field(ge=0, le=1, description="its share of the population, N_h / N")
    requested: int = Field(ge=0, description="items allocated to it (n_h)")
    drawn: int = Field(ge=0, description="items drawn from it")


class SampleDesign(BaseModel):
    """How the labelled items were drawn; enough to draw them again and compare."""

    method: Method = Field(description="'uniform' (items) or 'video' (whole videos)")
    seed: str = Field(description="the seed as text: only its characters enter the rank, so no reader (a browser's "
                      "JSON numbers are doubles) can round it; a number in an older file is read as its digits")

    @field_validator("seed", mode="before")
    @classmethod
    def _seed_text(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if isinstance(value, str):
            return check_seed(value)
        raise ValueError(f"a sample's seed is text (or a whole number), not {value!r:.40}")

    n_requested: int = Field(ge=1, description="items (uniform) or videos (video) asked for")
    population_size: int = Field(ge=0, description="items the sample was drawn from")
    population_digest: str = Field(description="SHA-256 of the sorted ids of those items")
    n_videos: int | None = Field(default=None, description="videos in the population (video design)")
    sample_size: int = Field(ge=0, description="items drawn")
    sample_videos: int | None = Field(default=None, description="videos drawn (video design)")
    sample_digest: str = Field(description="SHA-256 of the sorted ids of the items drawn")
    run: str | None = Field(default=None, description="the run folder the sample was drawn from (for people)")
    strata_field: str | None = Field(default=None, description="the item field whose values are the strata "
                                     "(stratified design)")
    allocation: Literal["proportional", "given"] | None = Field(
        default=None, description="how the sample was split over the strata: in proportion to their sizes, or as given "
        "(e.g. the Neyman allocation of murgat calibrate --plan)")
    strata: dict[str, StratumDraw] | None = Field(default=None, description="each stratum (by its label): size, "
                                                  "weight, count (stratified design)")


def _digest(ids: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(sorted(ids)).encode("utf-8", "surrogatepass")).hexdigest()


def check_seed(seed: str) -> str:
    """``seed`` if it can name a sample (1–100 characters, none of them space or ``|``, the rank's
    separator), else ``ValueError`` saying why."""
    if not 1 <= len(seed) <= 100 or any(ch.isspace() or ch == "|" for ch in seed):
        raise ValueError(f"a sample seed is 1 to 100 characters without spaces or '|' (got {seed!r})")
    return seed


def _rank(seed: str, key: str) -> str:
    return hashlib.sha256(f"{seed}|{key}".encode("utf-8", "surrogatepass")).hexdigest()


def new_seed() -> str:
    """A seed for a sample nobody chose (recorded in the design, so the draw can be redone)."""
    return str(secrets.randbelow(2**31))


def draw_sample(ids: Sequence[str], n: int, *, seed: int | str, videos: Mapping[str, str] | None = None,
                run: str | None = None) -> tuple[list[str], SampleDesign]:
    """The sample (ids, sorted) and its design: ``n`` items at random, or with ``videos`` (id →
    video) ``n`` videos at random and all their items. ``n`` larger than the population takes it all.
    An integer seed is its decimal digits (the same draw as before seeds were text)."""
    seed = check_seed(str(seed))
    if n < 1:
        raise ValueError(f"a sample needs n ≥ 1 (got {n})")
    pop = sorted(set(ids))
    if len(pop) != len(ids):
        raise ValueError("item ids repeat: a sample is drawn from distinct items")
    if videos is None:
        chosen = sorted(sorted(pop, key=lambda i: _rank(seed, i))[:n])
        design = SampleDesign(method="uniform", seed=str(seed), n_requested=n, population_size=len(pop),
                              population_digest=_digest(pop), sample_size=len(chosen), sample_digest=_digest(chosen),
                              run=run)
        return chosen, design
    missing = [i for i in pop if i not in videos]
    if missing:
        raise ValueError(f"{len(missing)} items have no video (first: {missing[0]!r}): a video sample needs each one's")
    vids = sorted({videos[i] for i in pop})
    picked = set(sorted(vids, key=lambda v: _rank(seed, f"video|{v}"))[:n])
    chosen = sorted(i for i in pop if videos[i] in picked)
    design = SampleDesign(method="video", seed=str(seed), n_requested=n, population_size=len(pop),
                          population_digest=_digest(pop), n_videos=len(vids), sample_size=len(chosen),
                          sample_videos=len(picked), sample_digest=_digest(chosen), run=run)
    return chosen, design


def draw_stratified(ids: Sequence[str], strata: Mapping[str, str], n: int | Mapping[str, int], *, seed: int | str,
                    field: str, run: str | None = None) -> tuple[list[str], SampleDesign]:
    """A stratified sample (ids, sorted) and its design: ``strata`` gives each item's stratum (a
    label), ``n`` is the total (split in proportion to the strata's sizes, at least two each) or
    the count of each stratum (every stratum named, none over its size)."""
    from murgat.human_eval.stratified import allocate

    seed = check_seed(str(seed))
    pop = sorted(set(ids))
    if len(pop) != len(ids):
        raise ValueError("item ids repeat: a sample is drawn from distinct items")
    members: dict[str, list[str]] = {}
    for i in pop:
        if i not in strata:
            raise ValueError(f"item {i!r} has no stratum: a stratified sample needs each item's")
        members.setdefault(strata[i], []).append(i)
    sizes = {h: len(v) for h, v in sorted(members.items())}
    counts = allocate(n, sizes) if isinstance(n, int) else _given(n, sizes)
    chosen: list[str] = []
    for h, items in members.items():
        chosen += sorted(items, key=lambda i: _rank(seed, i))[:counts[h]]
    chosen.sort()
    total = len(pop)
    design = SampleDesign(method="stratified", seed=seed, n_requested=sum(counts.values()), population_size=total,
                          population_digest=_digest(pop), sample_size=len(chosen), sample_digest=_digest(chosen),
                          run=run, strata_field=field, allocation="proportional" if isinstance(n, int) else "given",
                          strata={h: StratumDraw(population=sizes[h], weight=sizes[h] / total, requested=counts[h],
                                                 drawn=min(counts[h], sizes[h])) for h in sizes})
    return chosen, design


def _given(counts: Mapping[str, int], sizes: Mapping[str, int]) -> dict[str, int]:
    """A given allocation checked against the strata: each one named, none unknown, none over its size."""
    unknown = sorted(set(counts) - set(sizes))
    missing = sorted(set(sizes) - set(counts))
    if unknown or missing:
        raise ValueError(f"the allocation must name every stratum once: unknown {unknown[:5]}, missing {missing[:5]}; "
                         f"the strata are {sorted(sizes)[:20]}")
    over = {h: c for h, c in counts.items() if c > sizes[h] or c < 0}
    if over:
        h = next(iter(over))
        raise ValueError(f"stratum {h!r} has {sizes[h]} items; {counts[h]} cannot be drawn from it")
    if not sum(counts.values()):
        raise ValueError("the allocation draws no item")
    return dict(counts)


class SampleCheck(BaseModel):
    """What :func:`check_labels` found: ``ok`` when the labels are a recorded random sample of the run."""

    ok: bool
    design: SampleDesign | None = None
    problems: list[str] = Field(default_factory=list, description="why the labels are not a checked random sample")
    notes: list[str] = Field(default_factory=list, description="what holds but should be known (e.g. unlabelled draws)")
    n_sampled_unlabelled: int = 0


def _redraw(design: SampleDesign, pop: Sequence[str], videos: Mapping[str, str] | None,
            strata: Mapping[str, str] | None) -> tuple[list[str], SampleDesign]:
    """The sample ``design`` draws from ``pop`` again (``ValueError`` when it cannot be drawn). A
    stratified one is redrawn with its recorded counts, so a changed stratum is seen as such."""
    if design.method != "stratified":
        return draw_sample(pop, design.n_requested, seed=design.seed,
                           videos=videos if design.method == "video" else None)
    if strata is None or design.strata is None or design.strata_field is None:
        raise ValueError("a stratified design needs each item's stratum and the recorded strata")
    return draw_stratified(pop, strata, {h: s.requested for h, s in design.strata.items()}, seed=design.seed,
                           field=design.strata_field)


def check_labels(designs: Sequence[SampleDesign | None], labelled_ids: Iterable[str], population: Sequence[str],
                 videos: Mapping[str, str] | None = None, strata: Mapping[str, str] | None = None) -> SampleCheck:
    """Are these labels the sample a recorded design draws from ``population`` (the run's items)?

    ``designs``: the ``sample`` of every label line. Problems (any one refuses a corrected
    estimate unless the user assumes randomness): a line without a design, lines with different
    designs, a run whose items are no longer the ones sampled, a redraw that gives another sample,
    a labelled item outside the sample. Sampled items nobody labelled are a note: the estimate
    then assumes they are missing at random. ``strata`` (item → stratum label, of the design's
    field) is needed to redraw a stratified design; a stratum whose items changed is a problem.
    """
    problems: list[str] = []
    labelled = set(labelled_ids)
    missing = sum(1 for d in designs if d is None)
    if not designs or missing == len(designs):
        return SampleCheck(ok=False, problems=["the labels record no sampling design: they were not drawn by "
                                               "murgat annotate --sample (or the design was removed)"])
    if missing:
        problems.append(f"{missing} of {len(designs)} label lines record no sampling design")
    distinct = {d.model_dump_json(exclude={"run"}) for d in designs if d is not None}  # where it was run from: for people
    if len(distinct) > 1:
        return SampleCheck(ok=False, problems=[*problems, f"the label lines record {len(distinct)} different "
                                                          "sampling designs; label one sample at a time"])
    design = next(d for d in designs if d is not None)
    pop = sorted(set(population))
    if _digest(pop) != design.population_digest:
        problems.append(f"the run's items are not the ones the sample was drawn from ({len(pop)} items now, "
                        f"{design.population_size} then): the draw cannot be checked")
        return SampleCheck(ok=False, design=design, problems=problems)
    try:
        drawn, again = _redraw(design, pop, videos, strata)
    except ValueError as exc:
        return SampleCheck(ok=False, design=design, problems=[*problems, f"the sample cannot be redrawn: {exc}"])
    if design.method == "stratified" and again.strata != design.strata:
        problems.append(f"the run's strata by {design.strata_field!r} are not the recorded ones (an item's "
                        f"{design.strata_field} changed?): the strata weights cannot be trusted")
        return SampleCheck(ok=False, design=design, problems=problems)
    if again.sample_digest != design.sample_digest:
        problems.append("redrawing the recorded design gives another sample: the labels were not drawn by it")
        return SampleCheck(ok=False, design=design, problems=problems)
    outside = sorted(labelled - set(drawn))
    if outside:
        problems.append(f"{len(outside)} labelled items are not in the recorded sample (first: {outside[0]!r})")
    notes = []
    unlabelled = len(set(drawn) - labelled)
    if unlabelled:
        notes.append(f"{unlabelled} of the {len(drawn)} sampled items have no label: the estimate assumes they "
                     "are missing at random (label them to remove the assumption)")
    return SampleCheck(ok=not problems, design=design, problems=problems, notes=notes, n_sampled_unlabelled=unlabelled)
