"""Human label schema (JSONL, one line per response per annotator) and importers.

Example line::

    {"id": "friday-mood", "annotator": "ann1",
     "sentences": [
       {"index": 0, "text": "A woman in a hat talks to the operators (visual, 0:01).", "verifiable": true,
        "facts": [{"text": "A woman wears a hat.", "citations": ["visual, 0:01"],
                   "supported": true, "necessary": [true]}]},
       {"index": 3, "text": "So he is angry.", "verifiable": false}
     ],
     "ratings": {"grounding": 4}}

Step faithfulness (``murgat calibrate --task faithfulness``) uses per-response counts and,
optionally, per-step labels (indices are murgat's sentence steps)::

    {"id": "friday-mood", "annotator": "ann1", "n_perception": 3, "n_unfaithful": 1,
     "steps": [{"index": 0, "type": "perception", "faithful": true},
               {"index": 2, "type": "reasoning"}]}

Counts missing from a line are derived from its ``steps``. ``ratings`` may hold response-level
scores given directly (``coverage``, ``precision``, ``recall``, ``f1``, ``murgat_s`` in [0, 1]):
they are used as that annotator's figures instead of the ones computed from sentence labels.

``supported``: the fact's cited segments jointly entail it. ``necessary``: one flag per
citation of the fact, in order — removing that citation breaks the entailment (or it
supports the fact on its own). Several annotators label the same id on separate lines.
``sample``: the design that drew the item (``murgat.human_eval.sampling.SampleDesign``; the page of
``murgat annotate --sample N`` writes it into every line it exports).

``response_sha256`` (a line), ``text_sha256`` (a sentence, a fact, a step): the digests of the
text that was labelled (:func:`response_digest`, :func:`text_digest`), written by the page of
``murgat annotate``. They bind a label to *text*, not only to an id: labels made on another run
whose items carry the same ids (another model's responses) are set aside by ``murgat calibrate``
(:func:`bind_labels`) instead of being compared with text nobody labelled. Files without them
(older pages, other tools) are read, with a warning that they could not be checked.

Importers: this schema (:func:`load_labels`), and FaithScore's ``annotation.jsonl``
(:func:`load_faithscore`), whose polarity needs care — see that function.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from murgat.human_eval.sampling import SampleDesign


class FactLabel(BaseModel):
    text: str
    citations: list[str] = Field(default_factory=list, description="citation entries as written, e.g. 'visual, 0:12'")
    supported: bool | None = None
    necessary: list[bool | None] | None = None
    text_sha256: str | None = Field(default=None, description="digest of the fact text shown when it was labelled")

    @model_validator(mode="after")
    def _lengths(self) -> FactLabel:
        if self.necessary is not None and len(self.necessary) != len(self.citations):
            raise ValueError(f"'necessary' has {len(self.necessary)} flags for {len(self.citations)} citations")
        return self


class SentenceLabel(BaseModel):
    index: int = Field(ge=0)
    text: str | None = None
    verifiable: bool | None = None
    facts: list[FactLabel] = Field(default_factory=list)
    text_sha256: str | None = Field(default=None, description="digest of the run's sentence text when it was labelled")


class StepHumanLabel(BaseModel):
    """One reasoning step as an annotator saw it."""

    index: int = Field(ge=0)
    text: str | None = None
    type: Literal["perception", "reasoning"] | None = None
    faithful: bool | None = Field(default=None, description="perception steps only")
    text_sha256: str | None = Field(default=None, description="digest of the run's step text when it was labelled")


class ResponseLabel(BaseModel):
    id: str
    annotator: str = "annotator"
    sentences: list[SentenceLabel] = Field(default_factory=list)
    ratings: dict[str, float] = Field(default_factory=dict)
    steps: list[StepHumanLabel] = Field(default_factory=list)
    n_perception: int | None = Field(default=None, ge=0, description="perception steps in the chain")
    n_unfaithful: int | None = Field(default=None, ge=0, description="unfaithful perception steps")
    system: str | None = Field(default=None, description="the model that wrote the response, for system rankings")
    source: str | None = None
    response_sha256: str | None = Field(
        default=None, description="digest of the labelled response (its sentences or steps, response_digest): "
        "murgat calibrate sets the line aside when the run's response with this id is another text")
    sample: SampleDesign | None = Field(
        default=None, description="how the labelled items were drawn (murgat annotate --sample); "
        "murgat calibrate computes corrected estimates only from a recorded random sample")

    @model_validator(mode="after")
    def _unique_sentences(self) -> ResponseLabel:
        idx = [s.index for s in self.sentences]
        if len(idx) != len(set(idx)):
            raise ValueError("sentence indices repeat")
        sidx = [s.index for s in self.steps]
        if len(sidx) != len(set(sidx)):
            raise ValueError("step indices repeat")
        if self.steps and self.n_perception is None:
            self.n_perception = sum(1 for s in self.steps if s.type == "perception")
        if self.steps and self.n_unfaithful is None:
            self.n_unfaithful = sum(1 for s in self.steps if s.type == "perception" and s.faithful is False)
        if self.n_perception is not None and self.n_unfaithful is not None and self.n_unfaithful > self.n_perception:
            raise ValueError("n_unfaithful is larger than n_perception")
        for k, v in self.ratings.items():
            if k in ("coverage", "precision", "recall", "f1", "murgat_s") and not 0.0 <= v <= 1.0:
                raise ValueError(f"rating {k!r} must be in [0, 1]")
        return self


class LabelError(ValueError):
    """A label file that cannot be read; the message names the line and field."""


def _jsonl_lines(p: Path) -> list[str]:
    """Lines split at ``\n`` only: universal line splitting would also split inside strings at U+2028/U+2029/U+0085."""
    return [ln.rstrip("\r") for ln in p.read_text(encoding="utf-8").split("\n")]


def load_labels(path: str | Path) -> list[ResponseLabel]:
    p = Path(path)
    if not p.exists():
        raise LabelError(f"{p}: label file does not exist")
    out: list[ResponseLabel] = []
    seen: set[tuple[str, str]] = set()
    for lineno, line in enumerate(_jsonl_lines(p), 1):
        if not line.strip():
            continue
        try:
            rec = ResponseLabel.model_validate(json.loads(line))
        except RecursionError as exc:
            raise LabelError(f"{p}: line {lineno}: JSON nested too deeply") from exc
        except json.JSONDecodeError as exc:
            raise LabelError(f"{p}: line {lineno}: not valid JSON ({exc.msg})") from exc
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(x) for x in err["loc"])
            raise LabelError(f"{p}: line {lineno}: field '{loc}': {err['msg']}") from exc
        if (rec.id, rec.annotator) in seen:
            raise LabelError(f"{p}: line {lineno}: id {rec.id!r} labelled twice by {rec.annotator!r}")
        seen.add((rec.id, rec.annotator))
        out.append(rec)
    return out


def by_id(labels: list[ResponseLabel]) -> dict[str, list[ResponseLabel]]:
    d: dict[str, list[ResponseLabel]] = defaultdict(list)
    for lab in labels:
        d[lab.id].append(lab)
    return dict(d)


Polarity = Literal["data", "readme"]


def load_faithscore(path: str | Path, polarity: Polarity = "data") -> list[ResponseLabel]:
    """FaithScore's human labels (LVLM answers about COCO images) in murgat's schema.

    "stage 1" labels sub-sentences, "stage 2" labels atomic facts. The repository README
    says 1 = analytical (stage 1) and 1 = hallucinated (stage 2). The file's contents say
    the opposite, and ``polarity="data"`` (default) follows the contents:

    * stage 1: analytical clauses ("which is typical of their natural habitat", "giving
      the scene a warm atmosphere") carry 0 and descriptive ones 1;
    * stage 2: 81% of facts carry 1 (1114 of 1380), including "There is a sky." and
      "There are giraffes." for an answer about giraffes in a field, while "There are
      three giraffes." carries 0 — 1 reads as *supported*, matching the paper's reported
      ~0.8-0.9 faithfulness of such models.

    ``polarity="readme"`` applies the README's reading instead. Stage-1 clauses become
    sentences (verifiable = descriptive); stage-2 facts are attached to a pseudo-sentence
    at index 0 because the file does not link facts to clauses; the image id is kept in
    ``source``.
    """
    p = Path(path)
    out: list[ResponseLabel] = []
    for lineno, line in enumerate(_jsonl_lines(p), 1):
        if not line.strip():
            continue
        try:
            rec: dict[str, Any] = json.loads(line)
            s1, s2 = rec["stage 1"], rec["stage 2"]
        except (json.JSONDecodeError, KeyError, TypeError, RecursionError) as exc:
            raise LabelError(f"{p}: line {lineno}: not a FaithScore record ({type(exc).__name__}: {exc})") from exc
        descriptive = 1 if polarity == "data" else 0
        supported = 1 if polarity == "data" else 0
        sentences = [SentenceLabel(index=i, text=text.strip(), verifiable=(int(v) == descriptive))
                     for i, (text, v) in enumerate(s1.items())]
        facts = [FactLabel(text=t.strip(), supported=(int(v) == supported)) for t, v in s2.items()]
        if sentences:
            sentences[0].facts = facts
        else:
            sentences = [SentenceLabel(index=0, facts=facts)]
        out.append(ResponseLabel(id=f"faithscore-{lineno:04d}", annotator="faithscore", sentences=sentences,
                                 source=f"COCO_val2014_{rec.get('id')}.jpg"))
    return out


def text_digest(text: str) -> str:
    """SHA-256 of one labelled text (a sentence, a fact, a step), as the page records it."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def response_digest(texts: Sequence[str]) -> str:
    """SHA-256 of a response as its units (sentences, or steps) in order: JSON, so that no split of
    the same characters into other units gives the same digest."""
    return text_digest(json.dumps(list(texts), ensure_ascii=False))


class Binding(BaseModel):
    """What :func:`bind_labels` found: which labels were checked against the run's text, which were set aside."""

    n_lines: int = 0
    n_checked: int = Field(default=0, description="label lines whose response digest matched the run's response")
    n_unchecked: int = Field(default=0, description="label lines with no digest (older files): read, not checked")
    set_aside: list[str] = Field(default_factory=list, description="one sentence per label (or unit) set aside")


def _bind_units(lab: ResponseLabel, units: Mapping[int, str], where: str, aside: list[str]) -> ResponseLabel:
    """``lab`` without the sentences or steps whose digest is not the run's unit at that index, and
    without facts whose text is not the text their digest was made of (an edited line)."""
    sentences = []
    for s in lab.sentences:
        if s.text_sha256 is not None and (s.index not in units or text_digest(units[s.index]) != s.text_sha256):
            aside.append(f"{where}: sentence {s.index} was labelled on another text than the run's; set aside")
            continue
        facts = [f for f in s.facts if f.text_sha256 is None or text_digest(f.text) == f.text_sha256]
        if len(facts) != len(s.facts):
            aside.append(f"{where}: {len(s.facts) - len(facts)} fact labels of sentence {s.index} carry a text "
                         "other than the one labelled (edited); set aside")
        sentences.append(s.model_copy(update={"facts": facts}))
    steps = []
    for st in lab.steps:
        if st.text_sha256 is not None and (st.index not in units or text_digest(units[st.index]) != st.text_sha256):
            aside.append(f"{where}: step {st.index} was labelled on another text than the run's; set aside")
            continue
        steps.append(st)
    return lab.model_copy(update={"sentences": sentences, "steps": steps})


def bind_labels(labels: Sequence[ResponseLabel], units_of: Mapping[str, Mapping[int, str]]
                ) -> tuple[list[ResponseLabel], Binding]:
    """The labels that are labels of this run's text, and what was set aside and why.

    ``units_of``: id → {index: text} of the run's sentences (score runs) or steps (faithfulness).
    A line whose ``response_sha256`` is not the digest of the run's response with its id was made on
    other text (another run whose items have the same ids): the whole line is set aside. A line
    without digests is kept and counted unchecked; a line whose id the run lacks is left to the
    caller (it matches nothing). Nothing is refused silently: every set-aside label has its sentence.
    """
    kept: list[ResponseLabel] = []
    b = Binding(n_lines=len(labels))
    for lab in labels:
        units = units_of.get(lab.id)
        if units is None:
            kept.append(lab)
            continue
        if lab.response_sha256 is None:
            b.n_unchecked += 1
            kept.append(lab)
            continue
        where = f"id {lab.id!r} ({lab.annotator})"
        if response_digest([units[k] for k in sorted(units)]) != lab.response_sha256:
            b.set_aside.append(f"{where}: labelled on another response text than this run's (another run with the "
                               "same ids?); the line is set aside")
            continue
        b.n_checked += 1
        kept.append(_bind_units(lab, units, where, b.set_aside))
    return kept, b
