"""Reading judge answers. An answer that cannot be read is ``unparseable`` — never "no".

Yes/no answers are read from, in order: a JSON object (``label``/``answer``/``verdict``/
``entailed``/``verifiable``); a ``Label:``/``Answer:``/``Verdict:`` line (the last one
wins, so chain-of-thought before it is ignored); the first word of a short answer. Words
that mean "cannot tell" map to ``unknown`` (an abstention). Anything else, including an
answer that says both yes and no, is ``unparseable``.

Only a real label is read: a label word counts when the answer (or the label line) is that
word alone or the word followed by punctuation or another symbol (``No, the audio is silent``,
``Yes.``, ``**No** — …``), never the first word of a phrase: ``No idea.`` and ``No way to tell from
these frames.`` are not ``no`` (the first is an abstention, the second unparseable). A label
line's value is on its own line (``Label:\nno idea`` has no label on the ``Label:`` line). An
answer that opens like JSON but does not parse (a cut-off ``{"label":\t\n"no``) is
unparseable, not read word by word, and an answer the server cut off at the token limit
(``finish_reason: "length"``, :attr:`JudgeOutput.truncated`) is unparseable whatever it says:
:func:`read_verdict` is the reader for a judge's output.

A label followed by words saying that the judge cannot tell (``No, I cannot tell from these
frames.``) is an abstention written after a label word, not a decision: unparseable. ``0`` and
``1`` are labels only as a whole answer or before a bracket or a dash (``1 (supported)``): a
score (``0.7``), a list marker (``1. No, …``) or a fraction (``1/2``) is not ``yes``/``no``; nor
is a word before a slash (``True/False: False``, ``Y/N``), which names the choices.

Every pattern here runs in time linear in the answer: a label line is matched within its own
line (``[^\\w\\n]*``, not ``\\W*``, which also crossed newlines and made an answer of 40,000
newlines take 75 s), and JSON nested past any sense is "no JSON", never a ``RecursionError``.
"""

from __future__ import annotations

import re
from typing import Any

from murgat.core.jsonl import loads_line
from murgat.core.schema import Verdict
from murgat.judges.types import JudgeOutput

_YES = {"yes", "y", "true", "entailed", "entails", "supported", "verifiable", "correct", "1"}
_NO = {"no", "n", "false", "not entailed", "not_entailed", "unsupported", "not supported", "contradicted",
       "not verifiable", "unverifiable", "incorrect", "0", "refuted"}
_UNKNOWN = {"unknown", "unsure", "uncertain", "cannot tell", "can't tell", "cannot determine", "undetermined",
            "not sure", "abstain", "n/a", "insufficient", "insufficient evidence", "unclear", "cannot be determined",
            "no idea", "don't know", "do not know", "i don't know", "i do not know", "no way to tell", "impossible to tell",
            "can't be determined", "cannot say", "can't say", "not determinable"}
# the value must start on the label's own line: ``[ \t]*``, not ``\s*`` (which crossed the newline
# and read "Label:\nno idea" as the label "no idea" → "no")
# and nothing before or after the label word may cross a line end either (``[^\w\n]``, not ``\W``):
# from every line start ``\W*`` ran over all the newlines after it, quadratic in the answer
_LABEL_LINE = re.compile(
    r"^[^\w\n]*(?:final[ \t]+)?(?:label|answer|verdict|judg(?:e)?ment|decision|entailment|verifiable)[^\w\n]*[:=]"
    r"[ \t]*(\S.*)$",
    re.IGNORECASE | re.MULTILINE,
)
#: what may follow a label word for it to be a label and not the first word of a phrase: the end,
#: or (after spaces or not) anything but a letter or digit — ``No, …``, ``Yes.``, ``yes <…>`` are
#: labels; ``No idea``, ``No way to tell``, ``Yesterday`` are not
_AFTER_LABEL = r"(?:$|\s*[^\w\s/]|\s*_)"
#: what may follow ``0``/``1`` for it to be a label: the end, a bracket, or a spaced dash (``1 (supported)``,
#: ``0 - not supported``); never ``.``, ``/`` or ``,`` (``0.7``, ``1. No, …``, ``1/2``, ``1, 2``)
_AFTER_DIGIT = r"(?:$|\s*[(\[]|\s+[-\u2013\u2014])"
_DIGITS = {"0": "no", "1": "yes"}
#: words after a yes/no label, in its first sentence, that say the judge cannot tell after all
_CANNOT_TELL = re.compile(
    r"\b(?:can ?not|can't|cannot|unable to|impossible to|no way to)\s+(?:tell|determine|say|judge|be determined|be sure)\b"
    r"|\b(?:not sure|unsure|don't know|do not know)\b")
#: how deep a JSON answer's ``{"label": {"label": …}}`` is followed
_JSON_DEPTH = 8
#: why a truncated answer is not read (the server stopped it at the token cap)
TRUNCATED = "answer cut off at the token limit (finish_reason: length)"
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


_VOCAB_RES: list[tuple[re.Pattern[str], str]] = []


def _vocab_res() -> list[tuple[re.Pattern[str], str]]:
    """One compiled pattern per vocabulary, longest phrase first (built once, not per answer)."""
    if not _VOCAB_RES:
        for vocab, verdict in ((_UNKNOWN, "unknown"), (_NO, "no"), (_YES, "yes")):
            alts = "|".join(re.escape(p) for p in sorted(vocab - _DIGITS.keys(), key=len, reverse=True))
            _VOCAB_RES.append((re.compile(rf"^(?:{alts}){_AFTER_LABEL}"), verdict))
        for digit, verdict in _DIGITS.items():
            _VOCAB_RES.append((re.compile(rf"^{digit}{_AFTER_DIGIT}"), verdict))
    return _VOCAB_RES


def _word_verdict(text: str) -> Verdict | None:
    t = text.strip().strip("*_`\"'.!:; ").lower()
    t = re.sub(r"\s+", " ", t)
    for pattern, verdict in _vocab_res():
        m = pattern.match(t)
        if m:
            # the rest of the label's sentence ("No, I cannot tell"; not "No. I cannot tell who speaks")
            rest = "" if re.search(r"[.!?;]\s*$", m.group(0)) else re.split(r"[.!?;]", t[m.end():], maxsplit=1)[0]
            if verdict != "unknown" and _CANNOT_TELL.search(rest):
                return None  # "No, I cannot tell": an abstention written after a label word
            return verdict  # type: ignore[return-value]
    return None


def extract_json(text: str) -> Any:
    """The first JSON value in ``text`` (fenced block, whole text, or first ``{…}``/``[…]``)."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for cand in candidates:
        cand = cand.strip()
        try:
            return loads_line(cand)  # JSON nested past Python's stack is a ValueError, not a RecursionError
        except ValueError:
            pass
        for opener, closer in (("{", "}"), ("[", "]")):
            i, j = cand.find(opener), cand.rfind(closer)
            if 0 <= i < j:
                try:
                    return loads_line(cand[i : j + 1])
                except ValueError:
                    continue
    raise ValueError("no JSON value found in the answer")


_JSON_KEYS = ("label", "answer", "verdict", "entailed", "entailment", "verifiable", "supported", "decision")


def _from_json(obj: Any) -> Verdict | None:
    for _ in range(_JSON_DEPTH):  # a loop, not recursion: {"label": {"label": …}} cannot exhaust the stack
        if isinstance(obj, bool):
            return "yes" if obj else "no"
        if isinstance(obj, int) and obj in (0, 1):
            return "yes" if obj else "no"
        if isinstance(obj, str):
            return _word_verdict(obj)
        if not isinstance(obj, dict):
            return None
        key = next((k for k in _JSON_KEYS if k in obj), None)
        if key is None:
            return None
        obj = obj[key]
    return None


def read_verdict(out: JudgeOutput) -> tuple[Verdict, str | None]:
    """The verdict of a judge's output: :func:`parse_verdict` of its text, and ``unparseable`` when
    the server cut the answer off at the token limit (a cut ``{"label": "no`` is not a ``no``)."""
    return parse_verdict(out.text, truncated=out.truncated)


def parse_verdict(text: str | None, *, truncated: bool = False) -> tuple[Verdict, str | None]:
    """``(verdict, problem)``: problem explains an ``unparseable`` verdict. ``truncated``: the
    answer was cut off at the token limit, so whatever it says is not a finished label."""
    if text is None:
        return "error", "no answer text"
    stripped = text.strip()
    if not stripped:
        return "unparseable", "empty answer"
    if truncated:
        return "unparseable", f"{TRUNCATED}: {stripped[:80]!r}"
    if stripped[:1] in "{[" or "```" in stripped:
        try:
            v = _from_json(extract_json(stripped))
            if v is not None:
                return v, None
        except ValueError:
            if stripped[:1] == "{":
                return "unparseable", f"answer opens like JSON but is not valid JSON: {stripped[:80]!r}"
    lines = _LABEL_LINE.findall(stripped)
    if lines:
        v = _word_verdict(lines[-1])
        if v is not None:
            return v, None
        return "unparseable", f"label line not understood: {lines[-1][:80]!r}"
    rows = [ln.strip() for ln in stripped.split("\n") if ln.strip()]
    first_line = rows[0]
    if re.search(r"\byes\b", first_line, re.I) and re.search(r"\bno\b", first_line, re.I):
        return "unparseable", f"answer says both yes and no: {first_line[:80]!r}"
    v = _word_verdict(first_line)
    if v is not None:
        return v, None
    last = rows[-1]
    v = _word_verdict(last)
    if v is not None and len(last.split()) <= 4:
        return v, None
    return "unparseable", f"no yes/no/unknown label in: {stripped[:80]!r}"


def parse_json_answer(text: str | None) -> tuple[Any, str | None]:
    """``(value, problem)`` for answers requested as JSON."""
    if text is None:
        return None, "no answer text"
    try:
        return extract_json(text), None
    except ValueError as exc:
        return None, str(exc)


#: judge answers kept in records (``results.jsonl``, and so ``report.html``) are cut to this many
#: characters: a 10 MB reason once made 320 MB of results for 2 items. The cache keeps the whole answer.
MAX_KEPT_ANSWER_CHARS = 20_000


def shared_answer_note(what: str, index: int) -> str:
    """What a record keeps instead of a copy of an answer that covers several of its parts (a
    chain labelled in one request, a response decomposed in one request): where the one kept copy is."""
    return f"(one answer for all; kept on {what} {index})"


def clip_answer(text: str | None, limit: int = MAX_KEPT_ANSWER_CHARS) -> str | None:
    """``text`` as kept in a record: whole when short, else its start and its end (where a verdict
    after a long reasoning is) around a note saying how much was cut."""
    if text is None or len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half:,} characters cut: answers are kept up to {limit:,}] …\n{text[-half:]}"
