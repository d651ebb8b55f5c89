"""``murgat validate`` and ``murgat citations``: check responses before paying for any judge call.

``validate`` loads every item (or the ``--ids`` asked for), splits its reasoning into
sentences, parses the citations and, where the media can be found and probed, checks each
citation against the length of the stream it names. It reports per item: problems (invalid
citations, missing media, an empty or oversize response) and warnings — time-like text that is
not read as a citation (``<t>3.0</t>``, ``at 1:05``; see :func:`murgat.core.citations.find_time_like`),
each with the nearest accepted spelling. ``--strict`` fails on either. Nothing here calls a judge.

``citations`` shows how one text is read (:func:`murgat.commands.citations.cli.citations_doc`): its sentences, their
citations and time-like text, and the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from murgat.core.citations import check_durations
from murgat.core.inputs import MAX_RESPONSE_CHARS, MediaOutsideRoot, load_items, resolve_media, response_problem
from murgat.core.schema import Citation, Item, Sentence
from murgat.core.text import preprocess, scored_sentences
from murgat.media.errors import MediaError
from murgat.media.streams import probe


class CitationProblem(BaseModel):
    sentence: int
    raw: str
    reason: str


class TimeLikeWarning(BaseModel):
    """Time-like text of a sentence that is not read as a citation."""

    sentence: int
    text: str
    nearest: str | None = None
    reason: str


class ItemReport(BaseModel):
    """What ``validate`` found for one item."""

    id: str
    media: str | None = None
    media_error: str | None = None
    input_error: str | None = Field(default=None, description="why the item was not read (e.g. an oversize response)")
    durations: dict[str, float | None] = Field(default_factory=dict)
    n_sentences: int = 0
    n_cited_sentences: int = 0
    n_citations: int = 0
    n_invalid: int = 0
    problems: list[CitationProblem] = Field(default_factory=list)
    time_like: list[TimeLikeWarning] = Field(default_factory=list, description="warnings: time-like text not read")
    empty_response: bool = False
    option: str | None = None
    answer_problem: str | None = Field(default=None, description="why no option could be read from the answer")

    @property
    def ok(self) -> bool:
        """No problem (warnings allowed)."""
        return not (self.media_error or self.input_error or self.problems or self.empty_response)

    @property
    def clean(self) -> bool:
        """No problem and no warning: what ``--strict`` asks for."""
        return self.ok and not self.time_like


def checked_sentences(item: Item, durations: dict[str, float | None] | None) -> list[Sentence]:
    """Sentences of the item's reasoning with citations checked against ``durations``."""
    sents = scored_sentences(item.response, item.options)  # the one reading score and the program check use
    if durations is None:
        return sents
    return [s.model_copy(update={"citations": check_durations(s.citations, durations)}) for s in sents]


def validate_item(item: Item, media_root: str | Path | None, input_path: str | Path | None,
                  allow_outside_root: bool = False, max_response_chars: int = MAX_RESPONSE_CHARS) -> ItemReport:
    rep = ItemReport(id=item.id)
    problem = item.input_problem or response_problem(item.response, max_response_chars)
    if problem is not None:
        rep.input_error = problem
        return rep
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
    pre = preprocess(item.response, len(item.options or []) or 10, item.options)
    rep.option = pre.option
    rep.answer_problem = pre.reading.reason if pre.option is None and item.response.strip() else None
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
        rep.time_like.extend(TimeLikeWarning(sentence=s.index, text=t.text, nearest=t.nearest, reason=t.reason)
                             for t in s.time_like)
    return rep


def validate_selection(path: str | Path, media_root: str | Path | None = None, allow_outside_root: bool = False,
                       ids: str | Sequence[str] | None = None,
                       max_response_chars: int = MAX_RESPONSE_CHARS) -> tuple[list[ItemReport], list[str]]:
    """Reports for the items of ``path`` (only ``ids`` when given: ``"a,b"`` or a list), and the asked-for
    ids that are not in the file (said, not dropped silently). Selecting nothing is a ``ValueError``.
    A response over ``max_response_chars`` (the run commands' ``--max-response-chars``) is an
    ``input_error``, as those commands would refuse it."""
    from murgat.core.datasets import dataset_path, is_dataset_spec, load_responses
    from murgat.engine.guards import select_items

    if is_dataset_spec(str(path)):  # worldsense:FILE and friends: read as score reads them
        items = load_responses(str(path), max_response_chars=max_response_chars)
        path = dataset_path(str(path))
    else:
        items = load_items(path, max_response_chars=max_response_chars)
    wanted = ",".join(ids) if ids is not None and not isinstance(ids, str) else ids
    picked = select_items(items, wanted, None)
    missing: list[str] = []
    if wanted is not None:
        have = {it.id for it in items}
        missing = [i.strip() for i in wanted.split(",") if i.strip() and i.strip() not in have]
    return [validate_item(it, media_root, path, allow_outside_root, max_response_chars) for it in picked], missing


def validate_file(path: str | Path, media_root: str | Path | None = None, allow_outside_root: bool = False,
                  ids: str | Sequence[str] | None = None) -> list[ItemReport]:
    """Reports for the items of ``path`` (see :func:`validate_selection`)."""
    return validate_selection(path, media_root, allow_outside_root, ids)[0]


def exit_status(reports: Sequence[ItemReport], strict: bool) -> int:
    """``validate``'s exit status: 1 with ``--strict`` when an item has a problem or a warning."""
    return 1 if strict and any(not r.clean for r in reports) else 0


def report_lines(r: ItemReport) -> list[str]:
    """The problems and warnings of one item as the table prints them."""
    out = [r.media_error] if r.media_error else []
    out += [r.input_error] if r.input_error else []
    out += ["empty response"] if r.empty_response else []
    out += [f"s{p.sentence} '{p.raw}': {p.reason}" for p in r.problems]
    out += [f"warning s{w.sentence} '{w.text}' is not a citation ({w.reason})"
            + (f"; nearest accepted spelling: {w.nearest}" if w.nearest else "") for w in r.time_like]
    return out
