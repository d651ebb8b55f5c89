"""A text's citation-aware sentences, its citations read and checked against the media."""

from __future__ import annotations

from murgat.core.boxes import BoxConvention
from murgat.core.citations import apply_box_convention, check_durations
from murgat.core.schema import Sentence
from murgat.core.text import split_sentences


def sentences_of(text: str, durations: dict[str, float | None], tolerance_s: float,
                 boxes: BoxConvention | None = None) -> list[Sentence]:
    """Split, read boxes with the run's convention (``boxes``, native frame filled in) and check
    citations against the media's stream durations."""
    sents = apply_box_convention(split_sentences(text), text, boxes) if boxes is not None else split_sentences(text)
    return [s.model_copy(update={"citations": check_durations(s.citations, durations, tolerance_s)})
            for s in sents]
