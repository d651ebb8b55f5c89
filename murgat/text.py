"""Response preprocessing and citation-aware sentence splitting.

The splitter is rule-based on purpose: scores must not change when a tokenizer model is
upgraded, and the rules that matter here are specific to cited reasoning — a citation
group written *after* the full stop belongs to the sentence before it, and a ``.`` inside
``(visual, 1:05.5)`` is not a sentence end.
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass

from murgat.citations import find_groups
from murgat.schema import Sentence

_THINK_BLOCK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
_ANSWER_LINE = re.compile(
    r"^[ \t>*#_-]*(?:the\s+)?(?:final\s+answer|correct\s+answer|answer)\s*(?:\*\*|__)?\s*(?:is\s*)?[:：]",
    re.IGNORECASE | re.MULTILINE,
)
_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
_BULLET = re.compile(r"^[ \t]*(?:[-*•+‣▪]|\d{1,3}[.)]|\(\d{1,3}\)|[a-hA-H][.)](?=\s)|#{1,6})[ \t]+")
_ABBREVIATIONS = frozenset(
    """e.g i.e etc cf vs approx appx ca dr mr mrs ms prof st jr sr fig figs no nos vol
    sec secs min mins hr hrs approx. incl esp resp al mt ft lt col gen sgt capt""".split()
)
_CLOSERS = "\"'”’»)]"
_TERMINALS = ".!?…"


@dataclass(frozen=True)
class Preprocessed:
    """A response split into what is scored and what is not."""

    original: str
    thinking: str
    reasoning: str
    answer: str
    option: str | None


def strip_thinking(text: str) -> tuple[str, str]:
    """Remove ``<think>…</think>`` blocks, also an unclosed opening or an orphan close.

    Qwen-style chat templates put ``<think>`` in the prompt, so only ``</think>`` appears
    in the output; everything before it is then thinking. A ``<think>`` never closed (a
    truncated generation) hides everything after it.
    """
    thinking: list[str] = []

    def _keep(m: re.Match[str]) -> str:
        thinking.append(m.group(0))
        return ""

    text = _THINK_BLOCK.sub(_keep, text)
    close = list(_THINK_CLOSE.finditer(text))
    if close:
        last = close[-1]
        thinking.append(text[: last.end()])
        text = text[last.end() :]
    opened = _THINK_OPEN.search(text)
    if opened:
        thinking.append(text[opened.start() :])
        text = text[: opened.start()]
    return text.strip(), "\n".join(thinking)


def split_answer(text: str) -> tuple[str, str]:
    """``(reasoning, answer)``: the answer part starts at the last ``Answer:`` line.

    Without such a line a trailing ``\\boxed{}`` is the answer; otherwise the answer part
    is empty and the whole text is reasoning.
    """
    matches = list(_ANSWER_LINE.finditer(text))
    if matches:
        m = matches[-1]
        return text[: m.start()].rstrip(), text[m.start() :].strip()
    boxes = list(_BOXED.finditer(text))
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


def extract_option(text: str, n_options: int = 10) -> str | None:
    """The option letter a response chose, or ``None`` when no rule finds one.

    Rules in order: ``\\boxed{X}``; a letter opening the answer (``B``, ``(B)``, ``B.``);
    ``answer is B`` / ``option B``; the last parenthesised letter; the last bare capital
    letter that is not the article "A" in front of a word.
    """
    if not text:
        return None
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[: max(1, min(n_options, 26))]
    cls = f"[{letters}]"
    boxes = _BOXED.findall(text)
    if boxes:
        inner = boxes[-1].strip()
        m = re.match(rf"^\(?({cls})\)?(?:[.):\s]|$)", inner)
        if m:
            return m.group(1)
    body = _ANSWER_LINE.sub("", text, count=1).strip() if _ANSWER_LINE.match(text.strip()) else text.strip()
    body = re.sub(r"^[*_\s]+", "", body)
    m = re.match(rf"^(?:option\s+)?\(?({cls})\)?(?:[.):,\s*]|$)", body, re.IGNORECASE)
    if m and m.group(1).upper() in letters and (m.group(1) != "A" or not re.match(r"^A\s+[a-z]", body)):
        return m.group(1).upper()
    said = list(re.finditer(rf"(?:answer\s+is|answer\s*[:：]|option|choice)\s*[:：]?\s*\**\(?({cls})\)?(?![a-z])",
                            text, re.IGNORECASE))
    if said:
        return said[-1].group(1).upper()
    paren = re.findall(rf"\(({cls})\)", text)
    if paren:
        return paren[-1]
    for cand in reversed(list(re.finditer(rf"(?<![A-Za-z]){cls}(?![A-Za-z])", text))):
        after = text[cand.end() : cand.end() + 3]
        if cand.group(0) == "A" and re.match(r"\s[a-z]", after):
            continue
        return cand.group(0)
    return None


def preprocess(response: str, n_options: int = 10) -> Preprocessed:
    """Strip thinking, split reasoning from the final answer, read the option letter."""
    visible, thinking = strip_thinking(response)
    reasoning, answer = split_answer(visible)
    option = extract_option(answer, n_options) if answer else None
    return Preprocessed(response, thinking, reasoning, answer, option)


def _is_abbreviation(text: str, dot: int) -> bool:
    j = dot
    while j > 0 and (text[j - 1].isalpha() or text[j - 1] == "."):
        j -= 1
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


def _groups_within(groups: list, starts: list[int], a: int, b: int) -> list:
    lo = bisect.bisect_left(starts, a)
    out = []
    for g in groups[lo:]:
        if g.span[0] >= b:
            break
        if g.span[1] <= b:
            out.append(g)
    return out


def _boundaries(text: str, spans: list[tuple[int, int]]) -> list[int]:
    """Character offsets at which a new sentence starts (excluding 0)."""
    cuts: list[int] = []
    i, n = 0, len(text)
    while i < n:
        span = _protected(spans, i)
        if span:
            i = span[1]
            continue
        ch = text[i]
        if ch == "\n":
            j = i
            while j < n and text[j] in " \t\r\n":
                j += 1
            blank = text.count("\n", i, j) >= 2
            prev = text[:i].rstrip()
            nxt = text[j:]
            soft = (
                not blank
                and prev
                and prev[-1] not in _TERMINALS + ":" + _CLOSERS
                and nxt[:1].islower()
                and not _BULLET.match(nxt)
            )
            if not soft and j < n:
                cuts.append(j)
            i = j
            continue
        if ch in _TERMINALS:
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
                if i < n and text[i] not in "\n":
                    cuts.append(_skip_space(text, i))
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
            continue
        i += 1
    return sorted(set(c for c in cuts if 0 < c < n))


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def split_sentences(text: str) -> list[Sentence]:
    """Sentences of ``text`` with their citations; character spans index into ``text``.

    Markdown bullets and step numbers are dropped from the sentence text (they are layout,
    not claims); a line or fragment that holds only citation groups joins the sentence
    before it.
    """
    groups = find_groups(text)
    spans = [g.span for g in groups]
    starts = [g.span[0] for g in groups]
    cuts = [0, *_boundaries(text, spans), len(text)]
    raw: list[tuple[int, int]] = []
    for a, b in itertools.pairwise(cuts):
        seg = text[a:b]
        m = _BULLET.match(seg)
        if m:
            a += m.end()
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            raw.append((a, b))
    merged: list[list[int]] = []
    for a, b in raw:
        inside = _groups_within(groups, starts, a, b)
        rest = text[a:b]
        for g in sorted(inside, key=lambda g: -g.span[0]):
            rest = rest[: g.span[0] - a] + rest[g.span[1] - a :]
        if merged and inside and not rest.strip(" \t.;,\n"):
            merged[-1][1] = b
            continue
        if not re.search(r"\w", rest) and not inside:
            continue
        merged.append([a, b])
    out: list[Sentence] = []
    for idx, (a, b) in enumerate(merged):
        cites = [c for g in _groups_within(groups, starts, a, b) for c in g.citations]
        out.append(Sentence(index=idx, text=text[a:b], span=(a, b), citations=cites))
    return out
