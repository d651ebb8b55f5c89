"""The one answer reader and the one rule for "is this answer correct?", used by every command.

**Reading the answer** (:func:`read_answer`). ``<think>…</think>`` is removed first
(:func:`strip_thinking`). Then every place where a response states its answer is a candidate:

- an ``Answer:`` marker anywhere — its own line, the end of a line (``… (audio, 0:00-0:02).
  Answer: B``), ``**Answer:** (B)``, ``Final answer: B) blue``, full-width ``：`` —, an
  ``<answer>…</answer>`` tag, or ``\\boxed{B}`` (the *final-answer* candidates);
- a phrase ``the answer is B`` / ``the correct option is (B)``.

The last final-answer candidate wins (a model that corrects itself ends with its correction); a
phrase counts when no final-answer candidate reads, or after the last one that does not. When
the response states nothing of the kind, a response that is only a letter (``B``, ``(C).``) or
only one option's text is read as that. What a candidate says is read in this order: a letter
opening it (``B``, ``(B)``, ``B.``, ``option B``; not the article in "A man …" nor the pronoun
in "I think …"), ``option B`` / ``answer is B`` inside it, the last ``(B)``, the one option whose
full text it names (``Answer: unwrap it``; two options named is not an answer), the last lone
capital letter within the options. The NExT-GQA authors' scripts read the letter after the last
``Answer:`` wherever it stands; for such responses this reader gives the same letter.

An answer that cannot be read has ``letter=None`` and a ``reason``; it is **unknown**, never
wrong: :func:`grade` gives ``correct=None`` with ``answer_problem`` saying why, and run-level
accuracy (:mod:`murgat.core.metric`) counts such an item as not correct — as the benchmarks' official
scorers do — while reporting ``n_answer_unknown`` and the accuracy over the answers that were read.

**The gold answer** of a multiple-choice item is written three ways in the datasets murgat reads:

- a **letter** — ``"B"``, ``"(B)"``, ``"b"``, ``"B."``;
- the **text of an option** — ``"blue"`` when the options are ``["red", "blue"]``
  (NExT-GQA's csv, many JSON exports); compared after trimming and case-folding;
- a **0-based index** — the JSON number ``1`` (read as the string ``"1"``), or ``"#1"``.

Order of the tests, so an answer is never read two ways: a single letter within the options
first, then an exact option text (so an option whose text is ``"1"`` wins over index 1), then
an index. A gold answer that is none of these (free-form text, a letter past the options) has
no gold option: the item is left out of accuracy, and :func:`gold_problem` says why, so a
command can report it instead of dropping it silently.

Every pattern here repeats only over classes that cannot overlap, or is bounded, so reading a
response costs time linear in its length (a word followed by 50,000 spaces once took a minute).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# ---------------------------------------------------------------- thinking

_THINK_BLOCK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)


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

    if "<" not in text:
        return text.strip(), ""
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


# ---------------------------------------------------------------- reading the answer

#: final-answer candidates and answer phrases; each branch starts with a literal word and its
#: optional parts cannot read the same characters two ways
_CANDIDATE_RE = re.compile(
    r"(?P<marker>\banswer\b(?:[ \t]*(?:\*\*|__))?[ \t]*[:：])"
    r"|(?P<tag><answer>)"
    r"|(?P<boxed>\\boxed\{)"
    r"|(?P<phrase>\b(?:answer|option|choice)[ \t]+(?:is|would[ \t]+be|should[ \t]+be)\b(?:[ \t]*:)?)",
    re.IGNORECASE,
)
#: where a candidate may start: a class-led pattern the regex engine scans for quickly
_CANDIDATE_START_RE = re.compile(r"[aoc<\\](?:nswer|ption|hoice|answer>|boxed\{)", re.IGNORECASE)
_TAG_CLOSE_RE = re.compile(r"</answer>", re.IGNORECASE)
_LEAD_RE = re.compile(r"(?:(?:option|choice)[ \t]+)?[(\[]?([A-Za-z])[)\]]?(?=[.):,;\s*\]]|$)", re.IGNORECASE)
_SAID_RE = re.compile(r"(?:answer[ \t]+is|answer[ \t]*[:：]|option|choice)[ \t]*(?:[:：][ \t]*)?\**\(?([A-Z])\)?(?![a-z])",
                      re.IGNORECASE)
_STRIP_LEAD = " \t\r\n*_`\"'"
#: the longest answer statement read after a phrase ("the answer is …") or inside \boxed{} / <answer>
_CLAUSE_CHARS = 300
#: a response this short, on one line, with no answer marker may be the answer itself ("B", "(C) blue")
_BARE_CHARS = 80


@dataclass(frozen=True)
class AnswerReading:
    """What :func:`read_answer` found.

    ``letter`` is the chosen option (``None`` when no rule reads one, and ``reason`` says why);
    ``span`` is where the answer statement stands in the visible text (thinking removed and the
    text stripped, as :func:`strip_thinking` returns it): from its marker to the end of what
    was read; ``rule`` names the candidate that won (``answer_marker``, ``answer_tag``,
    ``boxed``, ``answer_phrase``, ``bare``).
    """

    letter: str | None
    reason: str | None = None
    span: tuple[int, int] | None = None
    rule: str | None = None

    @property
    def read(self) -> bool:
        return self.letter is not None


@dataclass(frozen=True)
class _Candidate:
    start: int
    end: int
    kind: str
    letter: str | None
    why: str | None
    final: bool


def _letters(options: Sequence[str] | None, n_options: int | None) -> str:
    n = n_options if n_options else (len(options) if options else 10)
    return LETTERS[: max(1, min(n, 26))]


def _article_or_pronoun(letter: str, after: str) -> bool:
    """"A man …" and "I think …" are words, not options."""
    return letter.upper() in "AI" and re.match(r"\s+[a-z]", after[:3]) is not None


def _lead_letter(s: str, letters: str) -> tuple[str | None, str | None]:
    """The letter opening ``s`` (``B``, ``(B)``, ``B.``, ``option B``), or why there is none."""
    m = _LEAD_RE.match(s[:64])
    if m is None:
        return None, None
    letter = m.group(1)
    if _article_or_pronoun(letter, s[m.end(1):]):
        return None, None
    up = letter.upper()
    if up not in letters:
        if letter.isupper() or (m.group(0) != letter):  # "F", "(f)": a letter meant as an option
            return None, f"names '{up}', not one of the {len(letters)} options (A-{letters[-1]})"
        return None, None
    return up, None


def _named_options(s: str, options: Sequence[str] | None, letters: str) -> tuple[str | None, str | None]:
    """The one option whose full text ``s`` names; two or more named is no answer."""
    if not options:
        return None, None
    low = s.casefold()
    found: list[tuple[int, int, int]] = []  # (start, end, option index)
    for i, opt in enumerate(options[: len(letters)]):
        o = str(opt).strip().casefold()
        if not o:
            continue
        k = low.find(o)
        while k >= 0:
            a, b = k, k + len(o)
            if (a == 0 or not low[a - 1].isalnum()) and (b == len(low) or not low[b].isalnum()):
                found.append((a, b, i))
                break
            k = low.find(o, k + 1)
    # an option named only inside a longer option's text ("dog" in "black dog") is not named
    kept = {i for a, b, i in found if not any(a2 <= a and b <= b2 and (b2 - a2) > (b - a) for a2, b2, _ in found)}
    if len(kept) == 1:
        return LETTERS[kept.pop()], None
    if len(kept) > 1:
        return None, f"names several options ({', '.join(LETTERS[i] for i in sorted(kept))})"
    return None, None


def _read_statement(s: str, letters: str, options: Sequence[str] | None, *, full: bool) -> tuple[str | None, str | None]:
    """The option a statement names; ``full`` adds the looser rules kept for ``Answer:`` lines."""
    s = s.lstrip(_STRIP_LEAD)
    letter, why = _lead_letter(s, letters)
    if letter:
        return letter, None
    cls = f"[{letters}]"
    if full:
        said = [m for m in _SAID_RE.finditer(s) if m.group(1).upper() in letters]
        if said:
            return said[-1].group(1).upper(), None
        paren = re.findall(rf"\(({cls})\)", s)
        if paren:
            return paren[-1], None
    named, several = _named_options(s, options, letters)
    if named:
        return named, None
    if several:
        return None, several
    if full:
        for cand in reversed(list(re.finditer(rf"(?<![A-Za-z]){cls}(?![A-Za-z])", s))):
            if _article_or_pronoun(cand.group(0), s[cand.end():]):
                continue
            return cand.group(0), None
    snippet = " ".join(s.split())[:40]
    return None, why or (f"'{snippet}' names no option" if snippet else "it is empty")


def read_statement(statement: str, letters: str = LETTERS[:10], options: Sequence[str] | None = None) -> str | None:
    """The option an answer statement names (the text after ``Answer:``), by the rules of an
    ``Answer:`` line (module docstring); ``letters`` are the options' letters."""
    return _read_statement(statement, letters, options, full=True)[0]


def _boxed_end(text: str, i: int) -> int | None:
    """Index of the ``}`` closing a ``\\boxed{`` whose content starts at ``i`` (one level of nested
    braces, as LaTeX answers use), or ``None`` when it does not close within :data:`_CLAUSE_CHARS`."""
    depth = 0
    for j in range(i, min(len(text), i + _CLAUSE_CHARS)):
        c = text[j]
        if c == "{":
            depth += 1
            if depth > 1:
                return None
        elif c == "}":
            if depth == 0:
                return j
            depth -= 1
    return None


def _clause_end(text: str, i: int) -> int:
    """End of the clause after an answer phrase: the next line break or sentence end, bounded."""
    stop = min(len(text), i + _CLAUSE_CHARS)
    for j in range(i, stop):
        c = text[j]
        if c == "\n" or (c in ".!?" and (j + 1 >= len(text) or text[j + 1].isspace())):
            return j
    return stop


def _read_candidate(text: str, m: re.Match[str], letters: str, options: Sequence[str] | None,
                    closes: list[int]) -> _Candidate | None:
    """Read one candidate; ``None`` when it turns out not to be one (an unclosed ``\\boxed{``)."""
    kind = m.lastgroup or ""
    if kind == "marker":
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        # an answer on its own line reads to the end of the text (the answer may follow on the next
        # lines), as it always did; a marker inside a line reads the rest of that line
        before = " ".join(text[line_start: m.start()].strip(" \t>*#_-").lower().split())
        own_line = before in ("", "the", "final", "the final", "correct", "the correct")
        end = len(text) if own_line or line_end < 0 else line_end
        letter, why = _read_statement(text[m.end():end], letters, options, full=True)
        return _Candidate(m.start(), end, "answer_marker", letter, why, True)
    if kind == "tag":
        k = bisect.bisect_left(closes, m.end())
        if k >= len(closes) or closes[k] - m.end() > _CLAUSE_CHARS:
            return _Candidate(m.start(), m.end(), "answer_tag", None, "is not closed", True)
        letter, why = _read_statement(text[m.end():closes[k]], letters, options, full=False)
        return _Candidate(m.start(), closes[k] + len("</answer>"), "answer_tag", letter, why, True)
    if kind == "boxed":
        close = _boxed_end(text, m.end())
        if close is None:
            return None
        letter, why = _read_statement(text[m.end():close].strip(), letters, options, full=False)
        return _Candidate(m.start(), close + 1, "boxed", letter, why, True)
    end = _clause_end(text, m.end())
    letter, why = _read_statement(text[m.end():end], letters, options, full=False)
    return _Candidate(m.start(), end, "answer_phrase", letter, why, False)


def read_visible_answer(text: str, options: Sequence[str] | None = None, *,
                        n_options: int | None = None) -> AnswerReading:
    """:func:`read_answer` on a text whose thinking is already removed (spans index ``text``).

    Candidates are found in one pass and read from the last one backwards, stopping at the first
    final-answer candidate: only the statements that can decide are read (each at most once).
    """
    letters = _letters(options, n_options)
    if not text.strip():
        return AnswerReading(None, "the response is empty")
    matches = [m for k in _CANDIDATE_START_RE.finditer(text) if (m := _CANDIDATE_RE.match(text, k.start()))]
    closes = [c.start() for c in _TAG_CLOSE_RE.finditer(text)] if "<" in text else []
    last: _Candidate | None = None
    phrase: _Candidate | None = None  # the last readable phrase after the last final candidate
    unread_phrase: _Candidate | None = None
    for m in reversed(matches):
        is_final = m.lastgroup != "phrase"
        if not is_final and phrase is not None:
            continue  # an earlier phrase can no longer decide
        c = _read_candidate(text, m, letters, options, closes)
        if c is None:
            continue
        if c.final:
            last = c
            break
        if c.letter is not None:
            phrase = c
        elif unread_phrase is None:
            unread_phrase = c
    if last is not None and last.letter is not None:
        return AnswerReading(last.letter, None, (last.start, last.end), last.kind)
    if phrase is not None:
        return AnswerReading(phrase.letter, None, (phrase.start, phrase.end), phrase.kind)
    if last is not None:
        where = {"answer_marker": "the final 'Answer:'", "answer_tag": "the <answer> tag", "boxed": "\\boxed{}"}[last.kind]
        return AnswerReading(None, f"{where} {last.why}", (last.start, last.end), last.kind)
    stripped = text.strip()
    if len(stripped) <= _BARE_CHARS and "\n" not in stripped:
        letter, _ = _lead_letter(stripped.lstrip(_STRIP_LEAD), letters)
        if letter:
            return AnswerReading(letter, None, (0, len(text)), "bare")
        folded = stripped.rstrip(" .!").casefold()
        for i, opt in enumerate((options or [])[: len(letters)]):
            if folded and str(opt).strip().casefold() == folded:
                return AnswerReading(LETTERS[i], None, (0, len(text)), "bare")
    if unread_phrase is not None:
        return AnswerReading(None, f"the answer phrase {unread_phrase.why}", (unread_phrase.start, unread_phrase.end),
                             unread_phrase.kind)
    return AnswerReading(None, "no final answer found (no 'Answer:', <answer> tag, \\boxed{} or 'the answer is')")


def read_answer(text: str, options: Sequence[str] | None = None, *, n_options: int | None = None) -> AnswerReading:
    """The option a response chose, read the one way every command reads it (module docstring).

    ``options`` are the item's options (their number bounds the letters, their texts may be
    named); ``n_options`` overrides their number (default: the options', else 10). Thinking
    is removed first; ``span`` indexes the visible text :func:`strip_thinking` returns.
    """
    visible, thinking = strip_thinking(text)
    if not visible and thinking:
        return AnswerReading(None, "the response holds only thinking (<think> never closed, or nothing after it)")
    return read_visible_answer(visible, options, n_options=n_options)


# ---------------------------------------------------------------- the gold answer and "correct"


def _letter(text: str, n_options: int) -> str | None:
    t = text.strip().strip("()[]").strip().rstrip(".):").strip()
    if len(t) == 1 and t.upper() in LETTERS:
        idx = LETTERS.index(t.upper())
        if n_options == 0 or idx < n_options:
            return t.upper()
    return None


def gold_option(gold: str | int | None, options: Sequence[str] | None) -> str | None:
    """The gold option letter of an item, or ``None`` when the gold answer names no option."""
    if gold is None or isinstance(gold, bool):
        return None
    opts = list(options or [])
    if isinstance(gold, int):
        return LETTERS[gold] if 0 <= gold < min(len(opts) or len(LETTERS), len(LETTERS)) else None
    g = str(gold).strip()
    if not g:
        return None
    letter = _letter(g, len(opts))
    if letter is not None:
        return letter
    folded = g.casefold()
    for i, opt in enumerate(opts[: len(LETTERS)]):
        if str(opt).strip().casefold() == folded:
            return LETTERS[i]
    digits = g[1:] if g.startswith("#") else g
    if digits.isascii() and digits.isdigit():
        idx = int(digits)
        if 0 <= idx < min(len(opts) or len(LETTERS), len(LETTERS)):
            return LETTERS[idx]
    return None


def gold_problem(gold: str | int | None, options: Sequence[str] | None) -> str | None:
    """Why an item with a gold answer cannot count towards accuracy (``None`` when it can or has none)."""
    if gold is None or (isinstance(gold, str) and not gold.strip()):
        return None
    if gold_option(gold, options) is not None:
        return None
    if not options:
        return f"gold answer {str(gold)[:40]!r} is not an option letter and the item has no options"
    return f"gold answer {str(gold)[:40]!r} is neither a letter, an option's text nor an index of the {len(options)} options"


def is_correct(predicted_option: str | None, gold: str | int | None, options: Sequence[str] | None) -> bool | None:
    """``grade(predicted_option, gold, options).correct``: ``True``/``False`` when the item has a gold
    option and an answer was read; ``None`` when it has no gold option or no answer was read (an
    unread answer is unknown, never wrong — :func:`grade` also says why).

    Records written before every command used :func:`grade` have ``correct: false`` for an unread
    answer; the run summaries (:func:`murgat.core.metric.state_of`) count a record with no predicted
    option as an unknown answer either way, so accuracy is the same figure for old and new records.
    """
    return grade(predicted_option, gold, options).correct


@dataclass(frozen=True)
class Grade:
    """``correct`` and, when the item has a gold option but its answer could not be read,
    ``answer_problem`` (then ``correct`` is ``None``): the two fields every record carries."""

    correct: bool | None
    answer_problem: str | None = None


def grade(reading: AnswerReading | str | None, gold: str | int | None, options: Sequence[str] | None) -> Grade:
    """Whether the answer is right, and why not known when it cannot be said (see :class:`Grade`).

    ``reading`` is an :class:`AnswerReading` or a letter (``None``: nothing was read).
    """
    if gold_option(gold, options) is None:
        return Grade(None)
    if isinstance(reading, AnswerReading):
        letter, reason = reading.letter, reading.reason
    else:
        letter, reason = reading, None
    if letter is None:
        return Grade(None, reason or "no answer could be read")
    return Grade(letter.strip().upper() == gold_option(gold, options))
