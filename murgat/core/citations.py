"""Citation grammar: find, parse, validate and format ``(modality, time)`` groups.

Real model output is messy, so the parser is permissive about spelling and strict about
meaning. A bracketed group is a citation group when its ``;``-separated entries read as

    entry  := [label] [, or :] [at] times [[,] boxes] [.]
    label  := part (joiner part)*      at most 3 parts of at most 2 ASCII words each;
                                       joiner = & / + , or the word "and"
    times  := spec ((, or & or and) spec)*
    spec   := time [dash time]         dash = - – — ‒ − ~ to until through
    time   := H:MM:SS[.f] | M:SS[.f] | N[.f][ ]s|sec|secs|seconds

plus three spellings models write that carry no ambiguity: a range whose unit is written once
at its end (``3.0-5.0 seconds``, ``3 - 5 s``), and, in an entry that names only visual/audio
labels and holds one spec, bare decimal seconds (``(audio, 3.0-5.0)``, ``(visual, 12.5)``).
Bare integers (``(audio, 3-5)``, ``(visual, 12)``: seconds? minutes? a frame?) are not read.

The grammar is read by a hand-written scanner, one pass over each entry with no backtracking,
so its cost is linear in the text (the regular expression it replaces could read each " and " of
a label two ways and took minutes on ``(a and a and … a !)``). Every reader of citations —
:func:`find_groups`, :func:`parse_citations`, :func:`strip_citations`, :func:`box_specs_key`, the
sentence splitter, the program operations — goes through :func:`find_groups`.

Which groups count. A group whose every entry reads is a citation group (as it always was).
A group of which some entries read, at least one naming ``visual`` or ``audio``, is one too: each
entry that does not read becomes an invalid citation saying why, so ``(audio, 0:00-0:03;
visual)`` keeps its audio citation and reports the second entry. Anything else in brackets —
``(e.g., a red car)``, ``(Option B)``, ``(2019)`` — is prose and is left alone. Invisible
characters inside a group (zero-width spaces and joiners, the BOM, soft hyphens, bidirectional
marks and controls) are ignored, so a stray U+200B or RLM cannot turn a citation into prose.

Problems are data, not exceptions: a group that *looks* like a citation but cannot be used
(unknown modality, end before start, a negative time, ``0:75``, a time past a week, a group
longer than :data:`MAX_GROUP_CHARS`) yields a :class:`Citation` with ``valid=False`` and a
``reason``. Only valid citations supply evidence when scoring.

Time-like text that is *not* read as a citation (``<t>3.0</t>``, ``at 1:05``, ``(audio, 3-5)``,
``(the man at the door, 0:12)``) is not dropped silently either: :func:`find_time_like` reports
each with the nearest accepted spelling; the sentence splitter puts them on their sentences.

A visual entry may end with regions of the frame: ``(visual, 0:12, box 0.10,0.20,0.55,0.80)``,
``box1000=…`` (0-1000) or ``boxpx …`` (pixels); several boxes mean "any of them". They are
read with a :class:`~murgat.core.boxes.BoxConvention` (the run's ``--box-units/--box-order/
--box-frame-size``) and stored normalised (:mod:`murgat.core.boxes`); a box that cannot be read
makes the citation invalid with the reason.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from murgat.core.boxes import KEYWORD_UNITS, Box, BoxConvention, BoxError, make_box
from murgat.core.schema import Citation, Sentence, TimeLike
from murgat.media.timefmt import fmt_time

VISUAL_WORDS = frozenset(
    {"visual", "visuals", "video", "vision", "frame", "frames", "image", "images", "picture"}
)
AUDIO_WORDS = frozenset(
    {"audio", "sound", "sounds", "speech", "voice", "audio track", "soundtrack"}
)

#: longer than any media murgat is meant for (a week); larger values are typos or attacks
MAX_TIME_S = 7 * 24 * 3600.0
#: longest group content read as citations; a longer group that starts like one is an
#: invalid citation (never silently prose, never parsed at unbounded cost)
MAX_GROUP_CHARS = 400
#: most boxes one citation may carry (each becomes two images for a judge)
MAX_BOXES = 8

#: characters ignored inside a group: zero-width space/non-joiner/joiner, word joiner, BOM,
#: soft hyphen, Mongolian vowel separator, LRM/RLM/ALM, bidirectional embeddings, overrides, isolates
INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u200e\u200f\u061c"
                      "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_INVISIBLE_TABLE = dict.fromkeys(map(ord, INVISIBLE))
_DASH_CHARS = frozenset("-–—‒−~")
_DASH_WORDS = frozenset({"to", "until", "through"})
_SIGNS = frozenset("-−")
_UNITS = frozenset({"s", "sec", "secs", "seconds"})
_JOINER_CHARS = frozenset("&/+,")
_LIST_CHARS = frozenset(",&")
_FILLERS = frozenset({"at", "around", "from", "approx", "approximately", "about", "time", "timestamp"})
_DIGITS = frozenset("0123456789")
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

# Unbounded but linear: the content class excludes every bracket, so a scan stops at the next one.
_GROUP_RE = re.compile(r"\((?P<p>[^()\[\]\n]+)\)|\[(?P<b>[^()\[\]\n]+)\]")
# a box keyword: literal prefix, no repetition to backtrack over
_BOX_KW_RE = re.compile(r"\bbox(?:1000|px)?\b", re.IGNORECASE)
_BOX_NUM_RE = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_SIMPLE_LABEL_RE = re.compile(r"[A-Za-z]+(?: [A-Za-z]+)?")
_FIRST_DIGIT_RE = re.compile(r"[0-9]")


@dataclass(frozen=True)
class CitationGroup:
    """A bracketed citation group and the citations it holds, in written order."""

    span: tuple[int, int]
    citations: tuple[Citation, ...]


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found: the citation groups, and the bracketed groups read as prose."""

    groups: list[CitationGroup]
    prose: list[tuple[int, int]] = field(default_factory=list)
    #: for each prose group, why its first entry with a time did not read (``None``: no entry had one)
    prose_reasons: list[str | None] = field(default_factory=list)


def parse_time(token: str) -> tuple[float, str | None]:
    """Seconds for a time token, plus a problem description when the token is malformed.

    ``M:SS`` with ``SS >= 60`` (or ``H:MM:SS`` with ``MM >= 60``) is returned with a reason
    rather than silently normalised, because it usually means the model mixed formats. A bare
    number (``12.5``) is read as seconds; the grammar decides where one may stand.
    """
    tok = token.strip().lower()
    if len(tok) > 32:
        return 0.0, f"time '{token.strip()[:20]}…' is too long to be a timestamp"
    num = tok
    for unit in ("seconds", "secs", "sec", "s"):
        if tok.endswith(unit) and ":" not in tok:
            num = tok[: -len(unit)].rstrip()
            break
    if ":" not in num:
        value = float(num)
        if value > MAX_TIME_S:
            return 0.0, f"time {num} s is beyond any media length"
        return value, None
    parts = num.split(":")
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


# ---------------------------------------------------------------- the scanner


def _word_char(c: str) -> bool:
    """What ``\\b`` calls a word character."""
    return c.isalnum() or c == "_"


def _skip_space(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i].isspace():
        i += 1
    return i


def _letters_end(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _ASCII_LETTERS:
        i += 1
    return i


def _digits_end(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _DIGITS:
        i += 1
    return i


@dataclass(frozen=True)
class _Time:
    """One time as written: ``clock`` (``M:SS``), ``unit`` (``12s``) or ``bare`` (``12.5``)."""

    text: str
    kind: str
    negative: bool
    decimal: bool


def _read_time(s: str, i: int, *, signed: bool = True) -> tuple[_Time | None, int, str | None]:
    """The time starting at ``i`` (``None`` when none does), where it ends, and why it is unreadable.

    One forward pass over digits, ``:`` fields, one fraction and an optional unit: no choice is
    ever revisited.
    """
    n = len(s)
    negative = False
    if signed and i < n and s[i] in _SIGNS and i + 1 < n and s[i + 1] in _DIGITS:
        negative, i = True, i + 1
    if i >= n or s[i] not in _DIGITS:
        return None, i, None
    start = i
    i = _digits_end(s, i)
    fields: list[int] = []
    while i + 1 < n and s[i] == ":" and s[i + 1] in _DIGITS:
        j = _digits_end(s, i + 1)
        fields.append(j - i - 1)
        i = j
    decimal = False
    if i + 1 < n and s[i] == "." and s[i + 1] in _DIGITS:
        i, decimal = _digits_end(s, i + 1), True
    text = s[start:i]
    if fields:
        if len(fields) > 2 or any(f > 2 for f in fields):
            return None, i, f"'{text}' is not a time (M:SS or H:MM:SS)"
        if i < n and (s[i] in _DIGITS or s[i] == ":"):
            return None, i, f"'{s[start:i + 1]}' is not a time"
        return _Time(text, "clock", negative, decimal), i, None
    # seconds with a unit: at most one whitespace character before it, and the unit is a whole word
    k = i + 1 if i < n and s[i].isspace() else i
    m = _letters_end(s, k)
    if m > k and s[k:m].lower() in _UNITS and (m == n or not _word_char(s[m])):
        return _Time(s[start:m], "unit", negative, decimal), m, None
    if i < n and _word_char(s[i]):
        return None, i, f"'{s[start:i + 1]}' is not a time"
    return _Time(text, "bare", negative, decimal), i, None


def _read_dash(s: str, i: int) -> int | None:
    """Where the time after a range dash at ``i`` may start, or ``None`` when no dash stands there."""
    k = _skip_space(s, i)
    if k < len(s) and s[k] in _DASH_CHARS:
        return _skip_space(s, k + 1)
    m = _letters_end(s, k)
    if m > k and s[k:m].lower() in _DASH_WORDS:
        return _skip_space(s, m)
    return None


def _read_list_sep(s: str, i: int) -> tuple[int, str] | None:
    """Where the next spec may start after a list separator at ``i``, and the separator."""
    k = _skip_space(s, i)
    if k < len(s) and s[k] in _LIST_CHARS:
        return _skip_space(s, k + 1), s[k]
    m = _letters_end(s, k)
    if m > k and s[k:m].lower() == "and":
        return _skip_space(s, m), "and"
    return None


def _box_keyword_at(s: str, k: int) -> bool:
    """``\\bbox(?:1000|px)?\\b`` at ``k``."""
    if k > 0 and _word_char(s[k - 1]):
        return False
    m = _BOX_KW_RE.match(s, k)
    return m is not None


@dataclass
class _Entry:
    """One entry read by the scanner."""

    label: str  # as written ("" when none)
    parts: list[str]  # the label's parts as written (empty when no label)
    specs: list[tuple[_Time, _Time | None]]
    boxes: str | None


def _label_tokens(core: str) -> list[tuple[str, int, int]] | None:
    """``core`` as words (``w``), whitespace runs (``s``) and joiner characters (``j``); ``None``
    when it holds anything else."""
    out: list[tuple[str, int, int]] = []
    i, n = 0, len(core)
    while i < n:
        c = core[i]
        if c in _ASCII_LETTERS:
            j = _letters_end(core, i)
            out.append(("w", i, j))
        elif c.isspace():
            j = i + 1
            while j < n and core[j].isspace():
                j += 1
            out.append(("s", i, j))
        elif c in _JOINER_CHARS:
            j = i + 1
            out.append(("j", i, j))
        else:
            return None
        i = j
    return out


def _label_valid(core: str, toks: list[tuple[str, int, int]]) -> bool:
    """Whether ``core`` is ``W (\\s* S \\s* W)*`` with ``W = [A-Za-z][A-Za-z ]*`` and ``S`` a joiner
    character or the word ``and`` — decided without backtracking.

    Between two words stands a gap of whitespace and joiner characters. A gap with one joiner
    character is a separator (any whitespace around it); a gap with none is inside a ``W`` (plain
    spaces only) unless a word ``and`` next to it is used as a separator (then any whitespace).
    Labels with more than two separators are prose anyway, so the at most four ways to read their
    ``and`` words are simply tried.
    """
    words = [k for k, t in enumerate(toks) if t[0] == "w"]
    if not words or toks[0][0] != "w" or toks[-1][0] != "w":
        return False
    gaps: list[tuple[int, bool, bool]] = []  # (joiner characters, exotic whitespace) per gap between words
    for a, b in itertools.pairwise(words):
        between = toks[a + 1:b]
        joiners = sum(1 for t in between if t[0] == "j")
        exotic = any(t[0] == "s" and core[t[1]:t[2]].strip(" ") for t in between)
        gaps.append((joiners, exotic, bool(between)))
    if any(j > 1 for j, _, _ in gaps):
        return False
    ands = [i for i, k in enumerate(words) if core[toks[k][1]:toks[k][2]].lower() == "and" and 0 < i < len(words) - 1]
    for roles in itertools.product((False, True), repeat=len(ands)):
        sep_and = {w for w, r in zip(ands, roles, strict=True) if r}
        if any(w + 1 in sep_and for w in sep_and):
            continue  # two separators need a word between them
        ok = True
        for g, (joiners, exotic, present) in enumerate(gaps):
            left_and, right_and = g in sep_and, (g + 1) in sep_and
            if joiners and (left_and or right_and):
                ok = False  # a joiner next to a separating "and": no word between the two separators
            elif not joiners and exotic and not (left_and or right_and):
                ok = False  # a tab or no-break space inside a label word
            elif not present and (left_and or right_and):
                ok = False  # cannot happen between letter runs; kept for clarity
            if not ok:
                break
        if ok:
            return True
    return False


def _label(region: str) -> tuple[str, list[str]] | str:
    """The label before the first time (as written, and its parts), or why it is not one.

    ``region`` is everything before the first time: ``[label] [, or :] [at]``. An ``at`` before
    the time is not part of the label, except after a separator (``visual, at 0:12``), where it is
    a filler part — the old grammar's two readings, kept.
    """
    core = region.rstrip()
    at = len(core) < len(region) and core[-2:].lower() == "at"
    readings = [core]
    rest = ""
    if at:
        rest = core[:-2].rstrip()
        low = rest.lower()
        after_sep = bool(rest) and (rest[-1] in _JOINER_CHARS or (
            low.endswith("and") and len(low) > 3 and low[-4] not in _ASCII_LETTERS))
        # "the man at 0:12" (also glued on: "visualat 0:12" is visual); after a separator the old
        # grammar read "at" as a filler part of the label when that made a label
        readings = [core, rest] if after_sep else [rest]
    why = ""
    for reading in readings:
        got = _label_core(reading, alone_at=at and not rest)
        if not isinstance(got, str):
            return got
        why = got
    return why


def _label_core(core: str, *, alone_at: bool) -> tuple[str, list[str]] | str:
    if core.endswith((",", ":")):
        core = core[:-1].rstrip()
    core = core.lstrip()
    if not core:
        # "(… ; at 0:15)": a label that is only a filler names no modality (it does not continue the previous one)
        return ("at", ["at"]) if alone_at else ("", [])
    if _SIMPLE_LABEL_RE.fullmatch(core) and " and " not in f" {core.lower()} ":  # the usual: one or two words
        return core, [core]
    toks = _label_tokens(core)
    if toks is None:
        return f"'{core[:40]}' is not a modality label"
    n_sep = sum(1 for t in toks if t[0] == "j" or (t[0] == "w" and core[t[1]:t[2]].lower() == "and"))
    if n_sep <= 2 and not _label_valid(core, toks):
        return f"'{core[:40]}' is not a modality label"
    # the parts, as the old split read them: every joiner and every word "and" separates
    parts: list[str] = []
    cur: list[tuple[int, int]] = []
    for kind, a, b in toks:
        if kind == "j" or (kind == "w" and core[a:b].lower() == "and"):
            parts.append(core[cur[0][0]:cur[-1][1]] if cur else "")
            cur = []
        elif kind == "w":
            cur.append((a, b))
    parts.append(core[cur[0][0]:cur[-1][1]] if cur else "")
    if len(parts) > 3 or any(len(t.split()) > 2 for t in parts):
        return f"'{core[:40]}' reads as prose, not a modality label"
    return core, parts


def _read_entry(s: str) -> _Entry | str:
    """An entry (``s`` holds no invisible characters), or why it does not read as one."""
    n = len(s)
    # the first time: the first digit, or a sign right before one (after space, a separator or nothing)
    d = _FIRST_DIGIT_RE.search(s)
    if d is None:
        return "it names no time"
    i = first = d.start()
    if i > 0 and s[i - 1] in _SIGNS and (i == 1 or s[i - 2].isspace() or s[i - 2] in ",:"):
        first = i - 1
    lab = _label(s[:first])
    if isinstance(lab, str):
        return lab
    label, parts = lab
    specs: list[tuple[_Time, _Time | None]] = []
    i = first
    boxes = None
    while True:
        a, i, why = _read_time(s, i)
        if a is None:
            return why or f"'{s[i:i + 20].strip()}' is not a time"
        b = None
        after = _read_dash(s, i)
        if after is not None:
            b, j, why = _read_time(s, after)
            if b is None:
                return why or f"the range after '{a.text}' has no end time"
            i = j
        specs.append((a, b))
        sep = _read_list_sep(s, i)
        if sep is not None:
            nxt, what = sep
            if nxt < n and (s[nxt] in _DIGITS or (s[nxt] in _SIGNS and nxt + 1 < n and s[nxt + 1] in _DIGITS)):
                i = nxt
                continue
            if what == "," and nxt < n and _box_keyword_at(s, nxt):
                i = nxt
            else:
                return f"'{s[i:i + 30].strip()}' after the times is not a time or a box"
        else:
            i = _skip_space(s, i)
        if i < n and _box_keyword_at(s, i):
            tail = s[i:].rstrip()
            if tail.endswith("."):
                tail = tail[:-1].rstrip()
            boxes = tail
            break
        i = _skip_space(s, i)
        if i < n and s[i] == ".":
            i = _skip_space(s, i + 1)
        if i != n:
            return f"'{s[i:i + 30].strip()}' after the times is not a time or a box"
        break
    return _Entry(label, parts, specs, boxes)


def _box_specs(text: str) -> list[tuple[str, str, list[str]]]:
    """``(raw spec, keyword, number tokens)`` for each box written in an entry's box tail.

    The tail is cut at each box keyword; a separator (``,``, ``or``, ``and``) before the next
    keyword belongs to neither box.
    """
    kws = list(_BOX_KW_RE.finditer(text))
    out = []
    for k, m in enumerate(kws):
        piece = text[m.start(): kws[k + 1].start() if k + 1 < len(kws) else len(text)].rstrip()
        if k + 1 < len(kws):
            if piece.endswith(","):
                piece = piece[:-1].rstrip()
            else:
                low = piece.lower()
                for sep in ("or", "and"):
                    if low.endswith(sep) and not _word_char(piece[-len(sep) - 1]):
                        piece = piece[: -len(sep)].rstrip()
                        break
        kw = m.group(0).lower()
        rest = piece[len(kw):].lstrip()
        if rest[:1] in ("=", ":"):
            rest = rest[1:]
        out.append((piece.strip(), kw, rest.replace(",", " ").split()))
    return out


def box_specs_key(raw_entry: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The boxes of an entry as written (keyword and numbers), independent of the run's reading."""
    entry = _read_entry(raw_entry.translate(_INVISIBLE_TABLE))
    if isinstance(entry, str) or not entry.boxes:
        return ()
    key = []
    for _, kw, toks in _box_specs(entry.boxes):
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


def _value(t: _Time) -> tuple[float, str | None]:
    value, problem = parse_time(t.text)
    if t.negative:
        neg = f"negative time '-{t.text}' (times count from the start of the media)"
        return -value, f"{problem}; {neg}" if problem else neg
    return value, problem


def _bare_problem(entry: _Entry, labels: list[str]) -> str | None:
    """Why the entry's bare numbers cannot be read as seconds (``None`` when they can or there are none)."""
    bare = [(a, b) for a, b in entry.specs if a.kind == "bare" or (b is not None and b.kind == "bare")]
    if not bare:
        return None
    for a, b in bare:
        if a.kind == "bare" and b is not None and b.kind == "unit":
            continue  # "3-5 seconds": the unit written once at the end
        written = a.text + (f"-{b.text}" if b else "")
        if a.kind != "bare" or (b is not None and b.kind != "bare"):
            return f"'{written}' mixes a time with a bare number"
        if len(entry.specs) > 1:
            return f"bare numbers '{written}' in a list are ambiguous (seconds? box coordinates?)"
        if not (a.decimal or (b is not None and b.decimal)):
            return f"bare whole numbers '{written}' are ambiguous (seconds? minutes? frames?)"
        if not labels or any(normalise_modality(lab) is None for lab in labels):
            return f"bare numbers '{written}' are read as seconds only after a visual or audio label"
    return None


def _unreadable(raw: str, span: tuple[int, int], group_span: tuple[int, int], why: str,
                labels: list[str]) -> Citation:
    mods = [m for m in (normalise_modality(w) for w in labels) if m]
    return Citation(modality=mods[0] if len(set(mods)) == 1 else None, raw=raw, span=span, group_span=group_span,
                    valid=False, reason=f"unreadable citation entry '{raw[:60]}': {why}")


def _label_words(entry_parts: list[str]) -> list[str]:
    return [w for w in entry_parts if w and w.lower() not in _FILLERS]


def _entry_words(raw: str) -> list[str]:
    """Modality words named anywhere in an unreadable entry (to say which modality it meant)."""
    return [w for w in re.findall(r"[A-Za-z]+", raw[:80]) if normalise_modality(w)]


def _trimmed(piece: str, clean: str) -> tuple[int, int]:
    """Where an entry's text starts and ends inside its ``piece`` of the group, past spaces and
    invisible characters (``clean`` is the piece without the invisible ones)."""
    if len(clean) == len(piece):  # no invisible character: the usual case
        return len(piece) - len(piece.lstrip()), len(piece.rstrip())
    lead = 0
    while lead < len(piece) and (piece[lead].isspace() or piece[lead] in INVISIBLE):
        lead += 1
    end = len(piece)
    while end > lead and (piece[end - 1].isspace() or piece[end - 1] in INVISIBLE):
        end -= 1
    return lead, end


def _citation_problems(label: str, mod: str | None, problems: list[str], start: float, end: float,
                       has_boxes: bool, box_problem: str | None) -> list[str]:
    """Why one citation of an entry (one modality label, one time spec) is invalid; empty when valid."""
    reasons = list(problems)
    if mod is None:
        reasons.insert(0, f"unknown modality '{label}'")
    if not problems and end < start:
        reasons.append(f"end {format_time(end)} is before start {format_time(start)}")
    if has_boxes:
        if mod == "audio":
            reasons.append("a box on audio (only visual citations can name a region)")
        elif box_problem:
            reasons.append(box_problem)
    return reasons


def _parse_group(content: str, content_offset: int, group_span: tuple[int, int],
                 convention: BoxConvention | None = None) -> CitationGroup | str | None:
    """The group's citations; when it reads as prose, ``None`` or why an entry holding a time did not read."""
    citations: list[Citation] = []
    first_problem: str | None = None
    previous_labels: list[str] = []
    readable_known = False
    n_unreadable = 0
    pos = 0
    for piece in content.split(";"):
        off = content_offset + pos
        pos += len(piece) + 1
        clean = piece.translate(_INVISIBLE_TABLE)
        if not clean.strip():
            continue
        lead, end = _trimmed(piece, clean)
        raw = piece[lead:end]
        span = (off + lead, off + end)
        entry = _read_entry(clean)
        if isinstance(entry, str):
            if first_problem is None and any(c in _DIGITS for c in clean):
                first_problem = entry
            n_unreadable += 1
            citations.append(_unreadable(raw, span, group_span, entry, _entry_words(raw)))
            continue
        words = _label_words(entry.parts)
        labels = words if entry.label else previous_labels
        bare = _bare_problem(entry, labels)
        if bare is not None:
            first_problem = first_problem or bare
            n_unreadable += 1
            citations.append(_unreadable(raw, span, group_span, bare, labels))
            continue
        previous_labels = labels
        boxes: list[Box] = []
        box_problem = None
        if entry.boxes:
            boxes, box_problem = read_boxes(entry.boxes, convention)
        for a, b in entry.specs:
            start, p1 = _value(a)
            end_s, p2 = _value(b) if b else (start, None)
            problems = [p for p in (p1, p2) if p]
            if not labels:
                citations.append(Citation(
                    modality=None, start=start, end=end_s, point=b is None, raw=raw, span=span,
                    group_span=group_span, valid=False, reason="no modality named"))
                continue
            for lab in labels:
                mod = normalise_modality(lab)
                readable_known = readable_known or mod is not None
                reasons = _citation_problems(lab, mod, problems, start, end_s, bool(entry.boxes), box_problem)
                citations.append(Citation(
                    modality=mod or lab.lower(), start=start, end=end_s, point=b is None, raw=raw, span=span,
                    group_span=group_span, valid=not reasons, reason="; ".join(reasons) or None,
                    boxes=boxes if mod == "visual" and not reasons else []))
    if not citations or (n_unreadable and not readable_known):
        return first_problem
    return CitationGroup(span=group_span, citations=tuple(citations))


def _overlong_group(content: str, content_offset: int, group_span: tuple[int, int]) -> CitationGroup | None:
    """A group too long to read: one invalid citation when it starts like one, else prose."""
    head = content[:80].translate(_INVISIBLE_TABLE)
    first = next((i for i, c in enumerate(head) if c in _DIGITS), -1)
    if first < 0:
        return None
    lab = _label(head[:first])
    if isinstance(lab, str):
        return None
    t, _, _ = _read_time(head, first, signed=False)
    if t is None or t.kind == "bare":
        return None
    words = _label_words(lab[1])
    if any(normalise_modality(w) is None for w in words):
        return None
    lead = len(content) - len(content.lstrip())
    raw = content.strip()
    return CitationGroup(span=group_span, citations=(Citation(
        modality=normalise_modality(words[0]) if words else None, raw=raw[:60] + "…",
        span=(content_offset + lead, content_offset + lead + len(raw)), group_span=group_span, valid=False,
        reason=f"citation group of {len(content):,} characters (at most {MAX_GROUP_CHARS} are read)"),))


def scan(text: str, boxes: BoxConvention | None = None) -> Scan:
    """The citation groups of ``text`` and the spans of the bracketed groups read as prose.

    Which brackets are groups does not depend on ``boxes``, only what their boxes mean.
    """
    groups: list[CitationGroup] = []
    prose: list[tuple[int, int]] = []
    reasons: list[str | None] = []
    for m in _GROUP_RE.finditer(text):
        key = "p" if m.group("p") is not None else "b"
        content = m.group(key)
        span = (m.start(), m.end())
        g: CitationGroup | str | None
        if len(content) > MAX_GROUP_CHARS:
            g = _overlong_group(content, m.start(key), span)
        else:
            g = _parse_group(content, m.start(key), span, boxes)
        if isinstance(g, CitationGroup):
            groups.append(g)
        else:
            prose.append(span)
            reasons.append(g)
    return Scan(groups, prose, reasons)


def find_groups(text: str, boxes: BoxConvention | None = None) -> list[CitationGroup]:
    """All citation groups in ``text``, in order of appearance (``boxes``: how to read boxes)."""
    return scan(text, boxes).groups


# ---------------------------------------------------------------- time-like text that is not a citation

# Each branch starts with a literal or a bounded class and repeats only bounded classes, so a
# search costs a bounded amount per position (linear in the text).
_NUM = r"[0-9]{1,6}(?:\.[0-9]{1,6})?"
_UNIT = r"(?:s|sec|secs|seconds)\b"
_TIME_LIKE_RE = re.compile(
    r"(?P<tag><[ \t]{0,3}(?P<tn>t|time|timestamp|ts)[ \t]{0,3}>[^<>\n]{0,60}?<[ \t]{0,3}/[ \t]{0,3}(?P=tn)[ \t]{0,3}>)"
    rf"|(?P<angle><[ \t]{{0,3}}{_NUM}[ \t]?{_UNIT}[ \t]{{0,3}}>)"
    rf"|(?P<marker>\bsec\{{{_NUM}\}})"
    r"|(?P<clock>(?<![0-9:.])[0-9]{1,3}(?::[0-9]{2}){1,2}(?:\.[0-9]{1,6})?(?![0-9]|:[0-9]))"
    rf"|(?P<prep>\b(?:at|from|around|until|till|between|after|before)[ \t]{{1,3}}"
    rf"(?:(?:about|around|approximately)[ \t]{{1,3}})?{_NUM}[ \t]?{_UNIT})"
    rf"|(?P<range>(?<![0-9.])[0-9]{{1,6}}\.[0-9]{{1,6}}[ \t]{{0,3}}(?:-|–|to)[ \t]{{0,3}}{_NUM}[ \t]?{_UNIT})",
    re.IGNORECASE,
)
_MODALITY_WORD_RE = re.compile(
    r"\b(?:" + "|".join(sorted((re.escape(w) for w in VISUAL_WORDS | AUDIO_WORDS), key=len, reverse=True)) + r")\b",
    re.IGNORECASE)
_NUMBER_RE = re.compile(r"[0-9]{1,6}(?::[0-9]{1,2}){0,2}(?:\.[0-9]{1,6})?")
_RANGE_WORD_RE = re.compile(r"\s*(?:-|–|—|~|to|until)\s*", re.IGNORECASE)


def nearest_spelling(text: str) -> str | None:
    """The accepted citation closest to a time-like ``text``: its modality (``visual`` when it names
    none) and its first time or range, e.g. ``<t>3.0</t>`` → ``(visual, 0:03)``."""
    text = text[:120]
    mod_m = _MODALITY_WORD_RE.search(text)
    mod = normalise_modality(mod_m.group(0)) if mod_m else None
    nums = list(_NUMBER_RE.finditer(text))
    if not nums:
        return None
    times: list[float] = []
    for m in nums[:2]:
        try:
            value, problem = parse_time(m.group(0))
        except ValueError:
            return None
        if problem is not None:
            return None
        times.append(value)
    a = times[0]
    is_range = len(nums) > 1 and _RANGE_WORD_RE.fullmatch(text[nums[0].end():nums[1].start()]) is not None
    spec = f"{format_time(a)}-{format_time(times[1])}" if is_range and times[1] >= a else format_time(a)
    return f"({mod or 'visual'}, {spec})"


def _time_like(text: str, span: tuple[int, int], reason: str) -> TimeLike:
    written = text if len(text) <= 80 else text[:79] + "…"
    nearest = nearest_spelling(text)
    if nearest is not None and _MODALITY_WORD_RE.search(text[:120]) is None:
        reason += "; it names no modality (visual or audio)"
    return TimeLike(text=written, span=span, nearest=nearest, reason=reason)


def find_time_like(text: str, found: Scan | None = None) -> list[TimeLike]:
    """Time-like text in ``text`` that is not read as a citation, in order, each with the nearest
    accepted spelling: tags (``<t>3.0</t>``, ``<3.0 seconds>``, ``sec{20}``), times in prose
    (``at 1:05``, ``from 3s``, ``0.0 - 10.5 seconds``) and bracketed groups read as prose that
    hold a time or name a modality next to a number (``(audio, 3-5)``, ``(visual, frame 12)``).

    Text inside citation groups is never reported (an invalid citation says its own reason).
    """
    if not any(c in _DIGITS for c in text):
        return []
    found = found if found is not None else scan(text)
    cited = [g.span for g in found.groups]
    prose = found.prose
    prose_starts = [a for a, _ in prose]
    cited_starts = [a for a, _ in cited]

    def inside(spans: list[tuple[int, int]], starts: list[int], i: int) -> int:
        k = bisect.bisect_right(starts, i) - 1
        return k if k >= 0 and spans[k][0] <= i < spans[k][1] else -1

    out: list[TimeLike] = []
    flagged: set[int] = set()
    for m in _TIME_LIKE_RE.finditer(text):
        if inside(cited, cited_starts, m.start()) >= 0:
            continue
        k = inside(prose, prose_starts, m.start())
        if k >= 0:
            flagged.add(k)
            continue
        kind = m.lastgroup if m.lastgroup != "tn" else "tag"
        what = {"tag": "a time tag", "angle": "a time tag", "marker": "a time marker"}.get(kind or "", "a time in prose")
        out.append(_time_like(m.group(0), (m.start(), m.end()), f"{what}, not a citation group"))
    for k, (a, b) in enumerate(prose):
        inner = text[a + 1:b - 1]
        if k in flagged or (_MODALITY_WORD_RE.search(inner[:MAX_GROUP_CHARS]) and any(c in _DIGITS for c in inner)):
            why = found.prose_reasons[k] if k < len(found.prose_reasons) else None
            out.append(_time_like(text[a:b], (a, b), "a bracketed group with a time that does not read as a citation"
                                  + (f" ({why})" if why else "")))
    out.sort(key=lambda t: t.span)
    return out


# ---------------------------------------------------------------- using the groups


def apply_box_convention(sentences: Sequence[Sentence], text: str, boxes: BoxConvention) -> list[Sentence]:
    """``sentences`` (split from ``text``) with their boxes read under ``boxes``.

    The split reads boxes with the default convention; which brackets are groups does not
    depend on the convention, so each group is swapped for its re-read twin by span.
    """
    if "box" not in text.lower():
        return list(sentences)
    by_span = {g.span: g for g in find_groups(text, boxes)}
    out = []
    for s in sentences:
        cites: list[Citation] = []
        seen: set[tuple[int, int]] = set()
        for c in s.citations:
            if c.group_span not in seen:
                seen.add(c.group_span)
                cites.extend(by_span[c.group_span].citations)
        out.append(s.model_copy(update={"citations": cites}))
    return out


def parse_citations(text: str, boxes: BoxConvention | None = None) -> list[Citation]:
    """Every citation in ``text``, flattened across groups, in written order."""
    return [c for g in find_groups(text, boxes) for c in g.citations]


_SPACE_RUN_RE = re.compile(r"[ \t]+")


@functools.lru_cache(maxsize=16384)
def strip_citations(text: str) -> str:
    """``text`` with its citation groups removed and the spacing around them tidied (memoised: a
    sentence is stripped by several stages).

    Non-citation parentheticals stay, since they are part of what the sentence claims. Spacing
    is tidied in one pass over the runs of spaces (a run before ``.,;:!?`` goes, a longer run
    becomes one space), linear however long a run is.
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

    def tidy(m: re.Match[str]) -> str:
        nxt = joined[m.end(): m.end() + 1]
        if nxt and nxt in ".,;:!?":
            return ""
        return " " if len(m.group(0)) > 1 else m.group(0)

    return _SPACE_RUN_RE.sub(tidy, joined).strip()


def format_time(seconds: float) -> str:
    """``M:SS`` below an hour, ``H:MM:SS`` above, with up to millisecond decimals."""
    return fmt_time(seconds)


def format_citation(c: Citation) -> str:
    """The canonical entry text, e.g. ``audio, 1:20-1:30`` or ``visual, 0:12``."""
    if c.start is None:
        raise ValueError("cannot format a citation without a time")
    mod = c.modality or "unknown"
    boxes = "".join(f", {b.label()}" for b in c.boxes)
    if c.point or c.end is None or c.end == c.start:
        return f"{mod}, {format_time(c.start)}{boxes}"
    return f"{mod}, {format_time(c.start)}-{format_time(c.end)}{boxes}"


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
