"""Citation grammar: find, parse, validate and format ``(modality, time)`` groups.

Real model output is messy, so the parser is permissive about spelling and strict about
meaning. A bracketed group is treated as a citation group when every ``;``-separated
entry has the shape ``[label] [,:] time[-time][, time…]``; anything else in brackets —
``(e.g., a red car)``, ``(Option B)``, ``(2019)`` — is ordinary prose and is left alone.

Problems are data, not exceptions: a group that *looks* like a citation but cannot be
used (unknown modality, end before start, ``0:75``) yields a :class:`Citation` with
``valid=False`` and a ``reason``. Only valid citations supply evidence when scoring.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from media.timefmt import fmt_time
from murgat.schema import Citation

VISUAL_WORDS = frozenset(
    {"visual", "visuals", "video", "vision", "frame", "frames", "image", "images", "picture"}
)
AUDIO_WORDS = frozenset(
    {"audio", "sound", "sounds", "speech", "voice", "audio track", "soundtrack"}
)

# Times are ASCII digits only: Python's \d also matches Arabic-Indic, full-width and other
# Unicode digits, which models do not use for timestamps and int() would silently accept.
_NUM_TIME = r"[0-9]{1,3}(?::[0-9]{1,2}){1,2}(?:\.[0-9]+)?"
_SEC_TIME = r"[0-9]+(?:\.[0-9]+)?\s?(?:s|sec|secs|seconds)\b"
#: longer than any media murgat is meant for (a week); larger values are typos or attacks
MAX_TIME_S = 7 * 24 * 3600.0
_TIME = rf"(?:{_NUM_TIME}|{_SEC_TIME})"
_DASH = r"\s*(?:-|–|—|‒|−|~|to|until|through)\s*"
_SPEC = rf"{_TIME}(?:{_DASH}{_TIME})?"
_ENTRY_RE = re.compile(
    rf"^\s*(?P<label>[A-Za-z][A-Za-z ]*?(?:\s*(?:&|/|\+|,|\band\b)\s*[A-Za-z][A-Za-z ]*?)*)?"
    rf"\s*[,:]?\s*(?:at\s+)?(?P<times>{_SPEC}(?:\s*(?:,|and|&)\s*{_SPEC})*)\s*\.?\s*$",
    re.IGNORECASE,
)
_SPEC_RE = re.compile(rf"(?P<a>{_TIME})(?:{_DASH}(?P<b>{_TIME}))?", re.IGNORECASE)
_GROUP_RE = re.compile(r"\((?P<p>[^()\[\]\n]{1,400})\)|\[(?P<b>[^()\[\]\n]{1,400})\]")
_FILLERS = frozenset({"at", "around", "from", "approx", "approximately", "about", "time", "timestamp"})
_LABEL_SPLIT_RE = re.compile(r"\s*(?:&|/|\+|,|\band\b)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class CitationGroup:
    """A bracketed citation group and the citations it holds, in written order."""

    span: tuple[int, int]
    citations: tuple[Citation, ...]


def parse_time(token: str) -> tuple[float, str | None]:
    """Seconds for a time token, plus a problem description when the token is malformed.

    ``M:SS`` with ``SS >= 60`` (or ``H:MM:SS`` with ``MM >= 60``) is returned with a reason
    rather than silently normalised, because it usually means the model mixed formats.
    """
    tok = token.strip().lower()
    if len(tok) > 32:
        return 0.0, f"time '{token.strip()[:20]}…' is too long to be a timestamp"
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)\s?(?:s|sec|secs|seconds)", tok)
    if m:
        value = float(m.group(1))
        if value > MAX_TIME_S:
            return 0.0, f"time {m.group(1)} s is beyond any media length"
        return value, None
    parts = tok.split(":")
    frac = Decimal(0)
    if "." in parts[-1]:
        whole, dec = parts[-1].split(".", 1)
        parts[-1] = whole
        frac = Decimal("0." + dec)
    nums = [int(p) for p in parts]
    problem = None
    if len(nums) == 2:
        minutes, secs = nums
        if secs >= 60:
            problem = f"seconds field {secs} >= 60 in '{token.strip()}'"
        value = float(minutes * 60 + secs + frac)
    else:
        hours, minutes, secs = nums
        if minutes >= 60:
            problem = f"minutes field {minutes} >= 60 in '{token.strip()}'"
        elif secs >= 60:
            problem = f"seconds field {secs} >= 60 in '{token.strip()}'"
        value = float(hours * 3600 + minutes * 60 + secs + frac)
    return value, problem


def normalise_modality(label: str) -> str | None:
    """Map a label word to ``visual``/``audio``; ``None`` if it is not a known synonym."""
    word = " ".join(label.lower().split())
    if word in VISUAL_WORDS:
        return "visual"
    if word in AUDIO_WORDS:
        return "audio"
    return None


def _split_entries(content: str, offset: int) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    pos = 0
    for piece in content.split(";"):
        out.append((piece, offset + pos))
        pos += len(piece) + 1
    return out


def _parse_group(content: str, content_offset: int, group_span: tuple[int, int]) -> CitationGroup | None:
    entries = _split_entries(content, content_offset)
    matches = []
    for text, off in entries:
        if not text.strip():
            continue
        m = _ENTRY_RE.match(text)
        if m is None:
            return None
        matches.append((m, text, off))
    if not matches:
        return None
    # A group whose label is long prose ("the man at the door, 0:12") is not a citation.
    for m, _, _ in matches:
        label = m.group("label")
        if label and len(_LABEL_SPLIT_RE.split(label.strip())) > 3:
            return None
        if label and any(len(w.split()) > 2 for w in _LABEL_SPLIT_RE.split(label.strip())):
            return None
    citations: list[Citation] = []
    previous_labels: list[str] = []
    for m, text, off in matches:
        lead = len(text) - len(text.lstrip())
        raw = text.strip()
        span = (off + lead, off + lead + len(raw))
        label = (m.group("label") or "").strip()
        words = [w for w in _LABEL_SPLIT_RE.split(label) if w and w.lower() not in _FILLERS]
        labels = words if label else previous_labels
        previous_labels = labels
        for spec in _SPEC_RE.finditer(m.group("times")):
            a, b = spec.group("a"), spec.group("b")
            start, p1 = parse_time(a)
            end, p2 = parse_time(b) if b else (start, None)
            problems = [p for p in (p1, p2) if p]
            if not labels:
                citations.append(
                    Citation(
                        modality=None, start=start, end=end, point=b is None, raw=raw, span=span,
                        group_span=group_span, valid=False, reason="no modality named",
                    )
                )
                continue
            for lab in labels:
                mod = normalise_modality(lab)
                reasons = list(problems)
                if mod is None:
                    reasons.insert(0, f"unknown modality '{lab}'")
                if not problems and end < start:
                    reasons.append(f"end {format_time(end)} is before start {format_time(start)}")
                citations.append(
                    Citation(
                        modality=mod or lab.lower(),
                        start=start,
                        end=end,
                        point=b is None,
                        raw=raw,
                        span=span,
                        group_span=group_span,
                        valid=not reasons,
                        reason="; ".join(reasons) or None,
                    )
                )
    return CitationGroup(span=group_span, citations=tuple(citations))


def find_groups(text: str) -> list[CitationGroup]:
    """All citation groups in ``text``, in order of appearance."""
    groups: list[CitationGroup] = []
    for m in _GROUP_RE.finditer(text):
        key = "p" if m.group("p") is not None else "b"
        content = m.group(key)
        g = _parse_group(content, m.start(key), (m.start(), m.end()))
        if g is not None:
            groups.append(g)
    return groups


def parse_citations(text: str) -> list[Citation]:
    """Every citation in ``text``, flattened across groups, in written order."""
    return [c for g in find_groups(text) for c in g.citations]


@functools.lru_cache(maxsize=16384)
def strip_citations(text: str) -> str:
    """``text`` with its citation groups removed and the spacing around them tidied (memoised: a
    sentence is stripped by several stages).

    Non-citation parentheticals stay, since they are part of what the sentence claims.
    """
    groups = find_groups(text)
    if not groups:
        return text.strip()
    out: list[str] = []
    pos = 0
    for g in groups:
        out.append(text[pos : g.span[0]].rstrip(" \t"))
        pos = g.span[1]
    out.append(text[pos:])
    joined = "".join(out)
    joined = re.sub(r"[ \t]+([.,;:!?])", r"\1", joined)
    joined = re.sub(r"[ \t]{2,}", " ", joined)
    return joined.strip()


def format_time(seconds: float) -> str:
    """``M:SS`` below an hour, ``H:MM:SS`` above, with up to millisecond decimals."""
    return fmt_time(seconds)


def format_citation(c: Citation) -> str:
    """The canonical entry text, e.g. ``audio, 1:20-1:30`` or ``visual, 0:12``."""
    if c.start is None:
        raise ValueError("cannot format a citation without a time")
    mod = c.modality or "unknown"
    if c.point or c.end is None or c.end == c.start:
        return f"{mod}, {format_time(c.start)}"
    return f"{mod}, {format_time(c.start)}-{format_time(c.end)}"


def format_group(citations: Iterable[Citation]) -> str:
    """A canonical group ``(visual, 0:12; audio, 0:12-0:14)``."""
    return "(" + "; ".join(format_citation(c) for c in citations) + ")"


def make_citation(modality: str, start: float, end: float | None = None) -> Citation:
    """A valid citation built in code (not parsed), e.g. by a program or a test."""
    return Citation(
        modality=modality,
        start=float(start),
        end=float(start if end is None else end),
        point=end is None,
        raw=format_citation(
            Citation(modality=modality, start=start, end=end if end is not None else start,
                     point=end is None, raw="", span=(0, 0), group_span=(0, 0))
        ),
        span=(0, 0),
        group_span=(0, 0),
    )


def check_durations(
    citations: Iterable[Citation],
    durations: Mapping[str, float | None],
    tolerance_s: float = 1.0,
) -> list[Citation]:
    """Copies of ``citations`` marked invalid where they fall outside the media.

    ``durations`` maps a modality to its stream length in seconds; a modality whose value
    is ``None`` or missing means that stream does not exist (an audio citation on a silent
    file). ``tolerance_s`` absorbs whole-second rounding of the media's true end: a
    citation ``0:00-0:07`` on a 6.2 s clip is accepted and later clipped, ``0:09`` is not.
    """
    out: list[Citation] = []
    for c in citations:
        if not c.valid or c.modality not in ("visual", "audio") or c.start is None or c.end is None:
            out.append(c)
            continue
        dur = durations.get(c.modality)
        reason = None
        if dur is None:
            reason = f"the media has no {c.modality} stream"
        elif c.start > dur:
            reason = f"starts at {format_time(c.start)}, past the end of the {c.modality} ({dur:.2f} s)"
        elif c.end > dur + tolerance_s:
            reason = f"ends at {format_time(c.end)}, past the end of the {c.modality} ({dur:.2f} s)"
        out.append(c if reason is None else c.model_copy(update={"valid": False, "reason": reason}))
    return out
