"""``murgat validate``: check a response file before paying for any judge call.

Loads every item, splits its reasoning into sentences, parses the citations and, where
the media can be found and probed, checks each citation against the length of the stream
it names. Nothing here calls a judge.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from media.errors import MediaError
from media.probe import probe
from murgat.citations import check_durations
from murgat.inputs import MediaOutsideRoot, load_items, resolve_media
from murgat.schema import Citation, Item
from murgat.text import preprocess, split_sentences


class CitationProblem(BaseModel):
    sentence: int
    raw: str
    reason: str


class ItemReport(BaseModel):
    """What ``validate`` found for one item."""

    id: str
    media: str | None = None
    media_error: str | None = None
    durations: dict[str, float | None] = Field(default_factory=dict)
    n_sentences: int = 0
    n_cited_sentences: int = 0
    n_citations: int = 0
    n_invalid: int = 0
    problems: list[CitationProblem] = Field(default_factory=list)
    empty_response: bool = False
    option: str | None = None

    @property
    def ok(self) -> bool:
        return not (self.media_error or self.problems or self.empty_response)


def checked_sentences(item: Item, durations: dict[str, float | None] | None) -> list:
    """Sentences of the item's reasoning with citations checked against ``durations``."""
    pre = preprocess(item.response, len(item.options or []) or 10)
    sents = split_sentences(pre.reasoning)
    if durations is None:
        return sents
    return [s.model_copy(update={"citations": check_durations(s.citations, durations)}) for s in sents]


def validate_item(item: Item, media_root: str | Path | None, input_path: str | Path | None,
                  allow_outside_root: bool = False) -> ItemReport:
    rep = ItemReport(id=item.id)
    try:
        path = resolve_media(item, media_root, input_path, allow_outside_root=allow_outside_root)
        outside = None
    except MediaOutsideRoot as exc:
        path, outside = None, str(exc)
    durations: dict[str, float | None] | None = None
    if outside is not None:
        rep.media_error = f"media_outside_root: {outside}"
    elif item.media is None:
        rep.media_error = "item names no media"
    elif path is None:
        rep.media_error = f"media '{item.media}' not found" + (f" under {media_root}" if media_root else "")
    else:
        rep.media = str(path)
        try:
            info = probe(path)
            durations = info.durations()
            rep.durations = durations
        except MediaError as exc:
            rep.media_error = f"{exc.kind}: {exc.reason}"
    if not item.response.strip():
        rep.empty_response = True
    pre = preprocess(item.response, len(item.options or []) or 10)
    rep.option = pre.option
    sents = checked_sentences(item, durations)
    rep.n_sentences = len(sents)
    for s in sents:
        cites: list[Citation] = s.citations
        if cites:
            rep.n_cited_sentences += 1
        rep.n_citations += len(cites)
        for c in cites:
            if not c.valid:
                rep.n_invalid += 1
                rep.problems.append(CitationProblem(sentence=s.index, raw=c.raw, reason=c.reason or "invalid"))
    return rep


def validate_file(path: str | Path, media_root: str | Path | None = None,
                  allow_outside_root: bool = False) -> list[ItemReport]:
    return [validate_item(it, media_root, path, allow_outside_root) for it in load_items(path)]
