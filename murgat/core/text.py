"""Response preprocessing and citation-aware sentence splitting.

The splitter is rule-based on purpose: scores must not change when a tokenizer model is
upgraded, and the rules that matter here are specific to cited reasoning — a citation
group written *after* the full stop belongs to the sentence before it, and a ``.`` inside
``(visual, 1:05.5)`` is not a sentence end.

Everything here runs in time linear in the text: the splitter jumps from one possible sentence
end to the next (never copying the text before or after a position), finds the groups inside a
sentence by bisection, and looks back at most :data:`_ABBREVIATION_SCAN` characters for an
abbreviation.
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass, field

from murgat.core.answers import AnswerReading, read_visible_answer, strip_thinking
from murgat.core.citations import CitationGroup, find_time_like, scan
from murgat.core.schema import Citation, Sentence, TimeLike

__all__ = ["Preprocessed", "canonical_text", "preprocess", "scored_citations", "scored_sentences", "split_answer",
           "split_sentences", "strip_thinking"]

# An ``Answer:`` line: the old rule for where the answer part starts, kept so that responses
# whose answer stands on its own line split exactly as before. Every optional part is a
# literal or spaces between literals, so a long run of spaces is read once.
_ANSWER_LINE = re.compile(
    r"^[ \t>*#_-]*(?:the[ \t]+)?(?:(?:final|correct)[ \t]+)?answer(?:[ \t]*(?:\*\*|__))?[ \t]*(?:is[ \t]*)?[:：]",
    re.IGNORECASE | re.MULTILINE,
)
_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
_BULLET = re.compile(r"[ \t]*(?:[-*•+‣▪]|\d{1,3}[.)]|\(\d{1,3}\)|[a-hA-H][.)](?=\s)|#{1,6})[ \t]+")
_ABBREVIATIONS = frozenset(
    """e.g i.e etc cf vs approx appx ca dr mr mrs ms prof st jr sr fig figs no nos vol
    sec secs min mins hr hrs approx. incl esp resp al mt ft lt col gen sgt capt""".split()
)
#: how far back an abbreviation is looked for (longer runs of letters and dots are not abbreviations)
_ABBREVIATION_SCAN = 64
_CLOSERS = "\"'”’»)]"
_TERMINALS = ".!?…"
_EVENT = re.compile(r"[\n.!?…]")
_WORD = re.compile(r"\w")
_NOT_FILLER = re.compile(r"[^ \t.;,\n]")
_SPACE_RUN = re.compile(r"\s+")


@dataclass(frozen=True)
class Preprocessed:
    """A response split into what is scored and what is not.

    ``reading`` is how :func:`murgat.core.answers.read_answer` read the answer (``option`` is its
    letter; ``reading.reason`` says why when it is ``None``).
    """

    original: str
    thinking: str
    reasoning: str
    answer: str
    option: str | None
    reading: AnswerReading = field(default_factory=lambda: AnswerReading(None, "not read"))


def split_answer(text: str, reading: AnswerReading | None = None) -> tuple[str, str]:
    """``(reasoning, answer)``: the answer part starts at the last ``Answer:`` line.

    Without such a line, an ``Answer:`` that ends the last line (``… (audio, 0:00-0:02).
    Answer: B``) starts it, when it follows a sentence end and no other sentence follows it;
    else a trailing ``\\boxed{}`` is the
    answer; otherwise the answer part is empty and the whole text is reasoning. ``reading`` (the
    answer :func:`~murgat.core.answers.read_visible_answer` read in ``text``) is read when not given.
    """
    last_line = None
    for m in _ANSWER_LINE.finditer(text):
        last_line = m
    if last_line is not None:
        return text[: last_line.start()].rstrip(), text[last_line.start() :].strip()
    reading = reading if reading is not None else read_visible_answer(text)
    if (reading.rule == "answer_marker" and reading.span is not None and "\n" not in text[reading.span[0]:].strip()
            and not _MORE_AFTER.search(text, reading.span[0])):
        cut = _answer_start(text, reading.span[0])
        if cut is not None:
            return text[:cut].rstrip(), text[cut:].strip()
    boxes = list(_BOXED.finditer(text)) if "\\boxed{" in text else []
    if boxes:
        b = boxes[-1]
        line_start = text.rfind("\n", 0, b.start()) + 1
        line_end = text.find("\n", b.end())
        line_end = len(text) if line_end < 0 else line_end
        line = text[line_start:line_end]
        if len(line.strip()) <= len(b.group(0)) + 40:
            return text[:line_start].rstrip(), line.strip()
        return text.strip(), b.group(0)
    return text.strip(), ""


#: a sentence end followed by more text: an answer statement with more after it is not the answer part
_MORE_AFTER = re.compile(r"[.!?…][\"'”’»)\]]*[ \t]+\S")
_MARKER_PREFIX = re.compile(r"[ \t*_#>]*(?:(?:the[ \t]+)?(?:final|correct)[ \t]+)?[ \t*_#>]*\Z", re.IGNORECASE)


def _answer_start(text: str, marker: int) -> int | None:
    """Where an ``Answer:`` inside the last line starts its statement (with a ``Final``/``**``
    before it), when a sentence end precedes it; ``None`` when it stands inside a sentence
    ("… the answer: yes …" stays reasoning). Looks back a bounded 40 characters."""
    lo = max(0, marker - 40)
    m = _MARKER_PREFIX.search(text, lo, marker)
    cut = m.start() if m else marker
    before = text[:cut].rstrip(" \t")
    if not before or before[-1] in _TERMINALS + _CLOSERS + "\n" or (cut > 0 and text[cut - 1] == "\n"):
        return cut
    return None


def preprocess(response: str, n_options: int = 10, options: list[str] | None = None) -> Preprocessed:
    """Strip thinking, read the answer (:func:`murgat.core.answers.read_answer`) and split the
    reasoning from the final answer.

    ``options`` (the item's) let an answer name an option by its text; ``n_options`` bounds the
    letters when they are not given.
    """
    visible, thinking = strip_thinking(response)
    if not visible and thinking:
        reading = AnswerReading(None, "the response holds only thinking (<think> never closed, or nothing after it)")
    else:
        reading = read_visible_answer(visible, options, n_options=len(options) if options else n_options)
    reasoning, answer = split_answer(visible, reading)
    return Preprocessed(response, thinking, reasoning, answer, reading.letter, reading)


#: a run of spaces and tabs (and other blanks that are not line breaks)
_BLANK_RUN = re.compile(r"[^\S\n]+")


def canonical_text(text: str, *, one_line: bool = False) -> str:
    """The one canonical form of a text that murgat writes for ``score`` to read (a program's
    descriptions and its assembled response): thinking removed (:func:`strip_thinking`), every run
    of blanks one space, each line and the whole text stripped, line breaks kept (they end
    sentences and the ``Answer:`` line); ``one_line``: every line break a space too.

    It is idempotent — removing a thinking block cannot form a new tag, since what
    :func:`strip_thinking` leaves holds no tag, and shrinking a blank run cannot form one either
    (a tag holds no blank) — so a text in canonical form is read by ``score`` exactly as the checks
    that ran on it read it (:func:`scored_citations`).
    """
    visible = strip_thinking(text)[0]
    if one_line:
        return " ".join(visible.split())
    return "\n".join(_BLANK_RUN.sub(" ", ln).strip() for ln in visible.split("\n")).strip()


def scored_sentences(response: str, options: list[str] | None = None) -> list[Sentence]:
    """The sentences ``murgat score`` reads in ``response`` (its reasoning part, thinking removed,
    answer split off), with their citations and time-like text: the one reading every check of a
    response (``validate``, the program runner's forged-citation check) uses."""
    pre = preprocess(response, len(options) if options else 10, options)
    return split_sentences(pre.reasoning)


def scored_citations(response: str, options: list[str] | None = None) -> list[Citation]:
    """Every citation ``murgat score`` reads in ``response`` (:func:`scored_sentences`), in order."""
    return [c for s in scored_sentences(response, options) for c in s.citations]


class _PrevNonSpace:
    """The last non-space character before an offset: a short look back, and for the rare long
    runs of whitespace an index of the runs built once (never a copy of the text before it)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.runs: tuple[list[int], list[int]] | None = None

    def before(self, i: int) -> str:
        t = self.text
        k = i - 1
        stop = max(-1, i - 65)
        while k > stop and t[k].isspace():
            k -= 1
        if k == stop and k >= 0:
            if self.runs is None:
                spans = [m.span() for m in _SPACE_RUN.finditer(t)]
                self.runs = ([a for a, _ in spans], [b for _, b in spans])
            starts, ends = self.runs
            r = bisect.bisect_right(starts, k) - 1
            if r >= 0 and starts[r] <= k < ends[r]:
                k = starts[r] - 1
        return t[k] if k >= 0 else ""


def _is_abbreviation(text: str, dot: int) -> bool:
    j = dot
    stop = max(0, dot - _ABBREVIATION_SCAN)
    while j > stop and (text[j - 1].isalpha() or text[j - 1] == "."):
        j -= 1
    if j == stop and j > 0 and (text[j - 1].isalpha() or text[j - 1] == "."):
        return False  # a run of letters and dots this long is a word, not an abbreviation
    word = text[j:dot].lower().rstrip(".")
    if not word:
        return False
    if word in _ABBREVIATIONS:
        return True
    if len(word) == 1 and text[j].isupper():
        return True  # an initial: "J. Smith"
    return "." in word and all(len(p) <= 2 for p in word.split("."))  # "e.g", "u.s"


def _protected(spans: list[tuple[int, int]], i: int) -> tuple[int, int] | None:
    """The citation span containing offset ``i`` (spans are sorted and disjoint)."""
    k = bisect.bisect_right(spans, (i, float("inf"))) - 1
    if k >= 0 and spans[k][0] <= i < spans[k][1]:
        return spans[k]
    return None


def _groups_within(groups: list[CitationGroup], starts: list[int], a: int, b: int) -> list[CitationGroup]:
    """The groups lying inside ``[a, b)``: bisection to the first, then only those up to ``b``."""
    out = []
    for k in range(bisect.bisect_left(starts, a), bisect.bisect_left(starts, b)):
        g = groups[k]
        if g.span[1] <= b:
            out.append(g)
    return out


def _boundaries(text: str, spans: list[tuple[int, int]]) -> list[int]:
    """Character offsets at which a new sentence starts (excluding 0)."""
    cuts: list[int] = []
    i, n = 0, len(text)
    prev_ns = _PrevNonSpace(text)
    while i < n:
        ev = _EVENT.search(text, i)
        if ev is None:
            break
        i = ev.start()
        span = _protected(spans, i)
        if span:
            i = span[1]
            continue
        if text[i] == "\n":
            i, cut = _newline_cut(text, i, prev_ns)
            if cut is not None:
                cuts.append(cut)
            continue
        j = i
        while j < n and text[j] in _TERMINALS:
            j += 1
        run = text[i:j]
        if run == "." and 0 < i and j < n and text[i - 1].isdigit() and text[j].isdigit():
            i = j
            continue
        if run == "." and _is_abbreviation(text, i):
            i = j
            continue
        while j < n and text[j] in _CLOSERS and not _protected(spans, j):
            j += 1
        k = j
        while k < n and text[k] in " \t":
            k += 1
        if k < n and text[k] == "\n":
            i = k
            continue  # the newline rule decides
        if k >= n:
            i = n
            continue
        if k == j:
            i = j
            continue  # no space after: "3.5", "a.m.", "file.mp4"
        # Citation groups right after the stop belong to this sentence.
        grp = _protected(spans, k)
        if grp and grp[0] == k:
            i, cut = _after_groups(text, spans, k)
            if cut is not None:
                cuts.append(cut)
            continue
        nxt = text[k]
        if nxt.islower() or nxt in ",;:":
            i = k
            continue
        if (run in ("...", "…") or (len(run) > 1 and set(run) == {"."})) and not nxt.isupper():
            i = k
            continue
        cuts.append(k)
        i = k
    return sorted(set(c for c in cuts if 0 < c < n))


def _newline_cut(text: str, i: int, prev_ns: _PrevNonSpace) -> tuple[int, int | None]:
    """At a newline: where scanning goes on (past the whitespace) and the sentence start there, or
    None for a soft wrap (one newline inside a sentence that goes on in lower case, not a bullet)."""
    n = len(text)
    j = i
    while j < n and text[j] in " \t\r\n":
        j += 1
    blank = text.count("\n", i, j) >= 2
    prev = prev_ns.before(i)
    soft = (
        not blank
        and prev
        and prev not in _TERMINALS + ":" + _CLOSERS
        and j < n and text[j].islower()
        and not _BULLET.match(text, j)
    )
    return j, (j if not soft and j < n else None)


def _after_groups(text: str, spans: list[tuple[int, int]], k: int) -> tuple[int, int | None]:
    """Citation groups right after a stop (from ``k``) belong to the sentence before them: where
    scanning goes on after them, and the next sentence's start (None when a newline follows)."""
    n = len(text)
    i = k
    while True:
        g = _protected(spans, i)
        if not g:
            break
        i = g[1]
        while i < n and text[i] in " \t.;,":
            i += 1
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    return i, (_skip_space(text, i) if i < n and text[i] not in "\n" else None)


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def _outside_groups(text: str, a: int, b: int, inside: list[CitationGroup]) -> list[tuple[int, int]]:
    """The pieces of ``[a, b)`` between the groups ``inside`` it (sorted, disjoint)."""
    pieces, pos = [], a
    for g in inside:
        pieces.append((pos, g.span[0]))
        pos = g.span[1]
    pieces.append((pos, b))
    return pieces


def split_sentences(text: str) -> list[Sentence]:
    """Sentences of ``text`` with their citations; character spans index into ``text``.

    Markdown bullets and step numbers are dropped from the sentence text (they are layout,
    not claims); a line or fragment that holds only citation groups joins the sentence
    before it. Time-like text that is not a citation (:func:`murgat.core.citations.find_time_like`)
    is put on the sentence it stands in (``time_like``).
    """
    found = scan(text)
    groups = found.groups
    spans = [g.span for g in groups]
    starts = [g.span[0] for g in groups]
    cuts = [0, *_boundaries(text, spans), len(text)]
    raw: list[tuple[int, int]] = []
    for a, b in itertools.pairwise(cuts):
        m = _BULLET.match(text, a, b)
        if m:
            a = m.end()
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            raw.append((a, b))
    merged: list[list[int]] = []
    for a, b in raw:
        inside = _groups_within(groups, starts, a, b)
        pieces = _outside_groups(text, a, b, inside)
        if merged and inside and not any(_NOT_FILLER.search(text, p, q) for p, q in pieces):
            merged[-1][1] = b
            continue
        if not inside and not any(_WORD.search(text, p, q) for p, q in pieces):
            continue
        merged.append([a, b])
    time_like = find_time_like(text, found)
    tl_starts = [t.span[0] for t in time_like]
    out: list[Sentence] = []
    for idx, (a, b) in enumerate(merged):
        cites = [c for g in _groups_within(groups, starts, a, b) for c in g.citations]
        here: list[TimeLike] = []
        if time_like:
            here = [t for t in time_like[bisect.bisect_left(tl_starts, a): bisect.bisect_left(tl_starts, b)]]
        out.append(Sentence(index=idx, text=text[a:b], span=(a, b), citations=cites, time_like=here))
    return out
