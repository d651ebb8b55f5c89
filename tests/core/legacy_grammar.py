"""The citation grammar as it was before the scanner (a regular expression that could read each
" and " of a label two ways: exponential time on ``(a and a and … a !)``), kept verbatim as the
oracle of the differential test in ``test_citations.py``: on every group it reads, the scanner
must read the same citations. Call it only on short inputs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from murgat.core.boxes import KEYWORD_UNITS, Box, BoxConvention, BoxError, make_box
from murgat.core.schema import Citation
from murgat.media.timefmt import fmt_time as format_time

VISUAL_WORDS = frozenset(
    {"visual", "visuals", "video", "vision", "frame", "frames", "image", "images", "picture"}
)
AUDIO_WORDS = frozenset(
    {"audio", "sound", "sounds", "speech", "voice", "audio track", "soundtrack"}
)

# Times are ASCII digits only: Python's \d also matches Arabic-Indic, full-width and other
# Unicode digits, which models do not use for timestamps and int() would silently accept.
# The leading field is unbounded so that ``99999:59:59`` is read (and refused as past a week)
# rather than left as prose; parse_time refuses tokens over 32 characters.
_NUM_TIME = r"[0-9]+(?::[0-9]{1,2}){1,2}(?:\.[0-9]+)?"
_SEC_TIME = r"[0-9]+(?:\.[0-9]+)?\s?(?:s|sec|secs|seconds)\b"
#: longer than any media murgat is meant for (a week); larger values are typos or attacks
MAX_TIME_S = 7 * 24 * 3600.0
_TIME = rf"(?:{_NUM_TIME}|{_SEC_TIME})"
_DASH = r"\s*(?:-|–|—|‒|−|~|to|until|through)\s*"
_SPEC = rf"{_TIME}(?:{_DASH}{_TIME})?"
_BOX_KW = r"\bbox(?:1000|px)?\b"
_ENTRY_RE = re.compile(
    rf"^\s*(?P<label>[A-Za-z][A-Za-z ]*?(?:\s*(?:&|/|\+|,|\band\b)\s*[A-Za-z][A-Za-z ]*?)*)?"
    rf"\s*[,:]?\s*(?:at\s+)?(?P<times>{_SPEC}(?:\s*(?:,|and|&)\s*{_SPEC})*)"
    rf"(?:\s*,?\s*(?P<boxes>{_BOX_KW}[^;]*?))?\s*\.?\s*$",
    re.IGNORECASE,
)
#: longest group content read as citations; a longer group that starts like one is an
#: invalid citation (never silently prose, never parsed at unbounded cost)
MAX_GROUP_CHARS = 400
#: most boxes one citation may carry (each becomes two images for a judge)
MAX_BOXES = 8
_BOX_SPLIT_RE = re.compile(rf"\s*(?:,|\bor\b|\band\b)?\s*(?={_BOX_KW})", re.IGNORECASE)
_BOX_SPEC_RE = re.compile(r"^(?P<kw>box(?:1000|px)?)\s*[=:]?\s*(?P<nums>.*?)\s*$", re.IGNORECASE | re.DOTALL)
_BOX_NUM_RE = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_HEAD_RE = re.compile(
    rf"^\s*(?:(?P<label>[A-Za-z]+(?:\s[A-Za-z]+)?)\s*[,:]?\s*)?(?:at\s+)?{_TIME}", re.IGNORECASE)
_SPEC_RE = re.compile(rf"(?P<a>{_TIME})(?:{_DASH}(?P<b>{_TIME}))?", re.IGNORECASE)
# Unbounded but linear: the content class excludes every bracket, so a scan stops at the next one.
_GROUP_RE = re.compile(r"\((?P<p>[^()\[\]\n]+)\)|\[(?P<b>[^()\[\]\n]+)\]")
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
    if problem is None and value > MAX_TIME_S:
        return 0.0, f"time '{token.strip()}' is past a week, beyond any media length"
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


def _box_specs(text: str) -> list[tuple[str, str, list[str]]]:
    """``(raw spec, keyword, number tokens)`` for each box written in an entry's box tail."""
    out = []
    for piece in _BOX_SPLIT_RE.split(text):
        piece = piece.strip()
        if not piece:
            continue
        m = _BOX_SPEC_RE.match(piece)
        if m is None:  # cannot happen after the split; kept as a readable failure
            out.append((piece, "box", [piece]))
            continue
        toks = [t for t in re.split(r"\s*,\s*|\s+", m.group("nums")) if t]
        out.append((piece, m.group("kw").lower(), toks))
    return out


def box_specs_key(raw_entry: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The boxes of an entry as written (keyword and numbers), independent of the run's reading."""
    m = _ENTRY_RE.match(raw_entry)
    if m is None or not m.group("boxes"):
        return ()
    key = []
    for _, kw, toks in _box_specs(m.group("boxes")):
        nums = tuple(str(float(t)) if _BOX_NUM_RE.fullmatch(t) else t.lower() for t in toks)
        key.append((kw, nums))
    return tuple(key)


def read_boxes(text: str, convention: BoxConvention | None = None) -> tuple[list[Box], str | None]:
    """The boxes of an entry's box tail, normalised, or a reason why they cannot be used."""
    conv = convention or BoxConvention()
    specs = _box_specs(text)
    if len(specs) > MAX_BOXES:
        return [], f"{len(specs)} boxes (at most {MAX_BOXES} per citation)"
    boxes: list[Box] = []
    for raw, kw, toks in specs:
        bad = [t for t in toks if not _BOX_NUM_RE.fullmatch(t)]
        if bad or len(toks) != 4:
            what = f"'{bad[0][:20]}' is not a number" if bad else f"{len(toks)} numbers"
            return [], f"box '{raw[:60]}' is not four numbers ({what})"
        units = KEYWORD_UNITS[kw] or conv.units
        try:
            boxes.append(make_box([float(t) for t in toks], units, conv.order, conv.frame_size, raw=raw))
        except BoxError as exc:
            return [], f"box '{raw[:60]}': {exc.reason}"
    return boxes, None


def _parse_group(content: str, content_offset: int, group_span: tuple[int, int],
                 convention: BoxConvention | None = None) -> CitationGroup | None:
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
        boxes: list[Box] = []
        box_problem = None
        if m.group("boxes"):
            boxes, box_problem = read_boxes(m.group("boxes"), convention)
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
                if m.group("boxes"):
                    if mod == "audio":
                        reasons.append("a box on audio (only visual citations can name a region)")
                    elif box_problem:
                        reasons.append(box_problem)
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
                        boxes=boxes if mod == "visual" and not reasons else [],
                    )
                )
    return CitationGroup(span=group_span, citations=tuple(citations))


def _overlong_group(content: str, content_offset: int, group_span: tuple[int, int]) -> CitationGroup | None:
    """A group too long to read: one invalid citation when it starts like one, else prose."""
    m = _HEAD_RE.match(content[:80])
    if m is None:
        return None
    label = (m.group("label") or "").strip()
    if label and normalise_modality(label) is None and label.lower() not in _FILLERS:
        return None
    lead = len(content) - len(content.lstrip())
    raw = content.strip()
    return CitationGroup(span=group_span, citations=(Citation(
        modality=normalise_modality(label) if label else None, raw=raw[:60] + "…",
        span=(content_offset + lead, content_offset + lead + len(raw)), group_span=group_span, valid=False,
        reason=f"citation group of {len(content):,} characters (at most {MAX_GROUP_CHARS} are read)"),))


def find_groups(text: str, boxes: BoxConvention | None = None) -> list[CitationGroup]:
    """All citation groups in ``text``, in order of appearance (``boxes``: how to read boxes).

    Which brackets are groups does not depend on ``boxes``, only what their boxes mean.
    """
    groups: list[CitationGroup] = []
    for m in _GROUP_RE.finditer(text):
        key = "p" if m.group("p") is not None else "b"
        content = m.group(key)
        span = (m.start(), m.end())
        if len(content) > MAX_GROUP_CHARS:
            g = _overlong_group(content, m.start(key), span)
        else:
            g = _parse_group(content, m.start(key), span, boxes)
        if g is not None:
            groups.append(g)
    return groups


def parse_citations(text: str, boxes: BoxConvention | None = None) -> list[Citation]:
    """Every citation in ``text``, flattened across groups, in written order (the old grammar)."""
    return [c for g in find_groups(text, boxes) for c in g.citations]
