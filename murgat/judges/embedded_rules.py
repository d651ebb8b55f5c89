"""The ``embedded`` judge's verdict as a table of small named rules, folded in a fixed order.

Why a table: the v4 verdict was one 106-line function whose order of checks was only visible by
reading all of it, so a fix to one kind of claim silently changed another. Here each rule reads
one thing (the claim's sound words, the counts it asserts, the words heard, the words read on
screen, …) and either decides (returns the answer text, ``Label: …`` then ``Reason: …``) or passes
(returns ``None``) to the next rule. :data:`RULES` is the order; :func:`decide` is the fold, and
:func:`rules_markdown` renders the table for the documentation (the README's list of what the
judge decides is generated from it, so the two cannot drift apart).

A rule never borrows one channel's evidence for another (issue #46): a claim about words
*spoken* is matched against what ASR heard only, a claim about words *shown* ("the sign reads
X", "the caption says X") against what OCR read only, and a claim that names no channel against
both. :func:`channel_of` says which.

The rules share the word accounting of the claim against the evidence (:class:`Accounting`),
computed once per claim on first use.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from murgat.judges.claims import (
    DISPLAY_WORDS,
    STOP,
    Claim,
    Term,
    antonym_heard,
    match_meaning,
    tokenize,
    vocab,
    vocab_of,
)
from murgat.judges.heard import Heard, shown
from murgat.judges.types import EvidenceTextPart


class RuleJudge(Protocol):
    """What the rules ask of the judge that folds them (:class:`murgat.judges.embedded.EmbeddedJudge`): its
    options and the checks it keeps (a protocol, so that the rules import nothing of the judge's module)."""

    @property
    def sure(self) -> float: ...

    def is_sound_claim(self, claim: Claim, audio_cited: bool = True) -> bool: ...

    def _absence(self, *args: Any, **kwargs: Any) -> str | None: ...

    def _count(self, *args: Any, **kwargs: Any) -> str | None: ...

    def _meaning(self, *args: Any, **kwargs: Any) -> str | None: ...

    def _negated_near(self, *args: Any, **kwargs: Any) -> bool: ...

    def _nothing_heard(self, *args: Any, **kwargs: Any) -> str | None: ...

    def _order(self, *args: Any, **kwargs: Any) -> Any: ...

    def _sound(self, *args: Any, **kwargs: Any) -> str | None: ...

    def _substitutions(self, *args: Any, **kwargs: Any) -> Any: ...

    def _sure_subs(self, *args: Any, **kwargs: Any) -> Any: ...

#: verbs that present words as written ("reads", "displays", "is written")
SHOW_VERBS = frozenset("read reads reading shows show showing displays display displaying written printed".split())
_SPEAK_VERBS = frozenset("""say says said saying ask asks asked asking tell tells told mention mentions mentioned speak
speaks spoke talk talks narrate narrates narrated calls call called shout shouts whisper whispers""".split())


def channel_of(claim: Claim) -> str:
    """Which evidence may credit the claim's words: ``"shown"`` (OCR only), ``"spoken"`` (ASR only)
    or ``"any"``.

    Example: "The sign reads crown jewels" → ``"shown"``; "Someone says crown jewels" →
    ``"spoken"``; "The jewels are in the crown" → ``"any"``.
    """
    lower = [w.lower() for w in tokenize(claim.cleaned)]
    verb = next((i for i, w in enumerate(lower) if w in SHOW_VERBS | _SPEAK_VERBS), None)
    head = lower[:verb] if verb is not None else lower
    if set(head) & DISPLAY_WORDS or (verb is not None and lower[verb] in SHOW_VERBS and lower[verb] != "read"
                                     and "words" in lower[verb:verb + 3]):
        return "shown"
    if verb is not None and lower[verb] in SHOW_VERBS:
        return "any"  # "the voice reads out the list": a reading aloud, or a display unnamed
    if claim.speech or verb is not None:
        return "spoken"
    return "any"


@dataclass
class Case:
    """Everything the rules read about one request: the claim, the evidence parts by kind, and
    the judge (for its options and its decision helpers)."""

    judge: RuleJudge
    claim: Claim
    hd: Heard
    labels: str
    has_audio: bool
    has_visual: bool
    tags: list[EvidenceTextPart] = field(default_factory=list)  # sound-tagger parts
    heard: list[str] = field(default_factory=list)  # transcript texts
    seen: list[str] = field(default_factory=list)  # on-screen texts

    @cached_property
    def channel(self) -> str:
        return channel_of(self.claim)

    @cached_property
    def acct(self) -> Accounting:
        return Accounting.of(self)


@dataclass
class Accounting:
    """The claim's terms against the words of the channel it may use: found as spoken/read,
    near (a near miss, a lemma, a synonym), missing, or heard as their opposite; plus the
    substitutions that decide a ``no`` and those the ASR was too unsure of."""

    toks: list[str]
    found: list[tuple[Term, str]]
    near: list[tuple[Term, str]]
    missing: list[Term]
    flipped: list[tuple[Term, str]]
    subs: list[tuple[Term, list[str]]]
    unsure: list[tuple[Term, list[Any]]]
    akin: list[tuple[Term, str, float]]
    detail: str

    @property
    def required(self) -> list[Term]:
        """Missing terms that must be heard (who is spoken to need not be)."""
        return [t for t in self.missing if t.role == "said"]

    @classmethod
    def of(cls, case: Case) -> Accounting:
        c, hd = case.claim, case.hd
        spoken = case.channel != "shown"
        shown_ = case.channel != "spoken"
        norms = hd.norms if spoken else []
        toks = norms + (vocab(case.seen)[0] if shown_ else [])
        words = vocab_of(norms) | (vocab(case.seen)[1] if shown_ else set())
        found: list[tuple[Term, str]] = []
        near: list[tuple[Term, str]] = []
        missing: list[Term] = []
        flipped: list[tuple[Term, str]] = []
        for t in c.terms:
            hit, how = match_meaning(t.norm, words, set(toks))
            opposite = antonym_heard(t.norm, set(toks)) if hit is None else None
            if opposite is not None:
                flipped.append((t, opposite))
            elif hit is None:
                missing.append(t)
            else:
                (found if how == "exact" else near).append((t, hit if how in ("exact", "near") else f"{hit} ({how})"))
        texts = (case.heard if spoken else []) + (case.seen if shown_ else [])
        cand = case.judge._substitutions(c, [t for t in missing if t.role == "said" or t.kind == "number"], toks, texts)
        subs, unsure, akin = case.judge._sure_subs(cand, hd)
        detail = f"{len(found) + len(near)}/{len(c.terms)} content terms heard/read"
        if near:
            detail += " (as " + ", ".join(f"{t.text}≈{h}" for t, h in near) + ")"
        if any(t.role == "addressee" for t in missing):
            detail += "; who is spoken to need not be heard"
        return cls(toks, found, near, missing, flipped, subs, unsure, akin, detail)

    def evidence_negated(self, case: Case) -> bool:
        """Whether the evidence negates the stretch where the claim's words are heard/read: the span
        the claim's words align to (negations left out of the alignment, so "ask what your country
        can do" meets "ask not what your country can do"), and the three words before it ("do not
        ask …"). A "not" of another clause in the window is no negation of this one (rules v5: "ask
        what you can do for your country" is not negated by the "ask not" before it). Without an
        alignment holding a content word, the v4 window around the terms heard decides."""
        span = aligned_span(case.claim.tokens, self.toks)
        if span is None:
            hits = [h.split(" ")[0] for _, h in self.found + self.near] + [h for _, h in self.flipped]
            return case.judge._negated_near(case.claim, self.toks, hits)
        lo, hi = span
        quoted = quoted_negations(case.claim, self.toks)
        return any(w == "not" and i not in quoted for i, w in enumerate(self.toks) if max(0, lo - 3) <= i <= hi)


def aligned_span(claim_toks: list[str], toks: list[str]) -> tuple[int, int] | None:
    """``(first, last)`` indices in ``toks`` of the claim's words as aligned (difflib, negations
    left out of both sides), counting only runs that hold a content word; ``None`` when none does.

    Example: "ask what you can do for your country" in "ask not what your country can do for you,
    ask what you can do for your country" → the second clause."""
    ctoks = [w for w in claim_toks if w != "not"]
    hidx = [i for i, w in enumerate(toks) if w != "not"]
    htoks = [toks[i] for i in hidx]
    blocks = [b for b in difflib.SequenceMatcher(None, ctoks, htoks, autojunk=False).get_matching_blocks()
              if b.size and any(w not in STOP for w in htoks[b.b:b.b + b.size])]
    if not blocks:
        return None
    return hidx[blocks[0].b], hidx[blocks[-1].b + blocks[-1].size - 1]


def quoted_negations(claim: Claim, toks: list[str]) -> set[int]:
    """Indices of the negations in ``toks`` that belong to a heard occurrence of a phrase the claim
    quotes ('after "ask not", …'): the claim names them, so they negate nothing it says.

    Example: 'After "ask not", the speaker says what your country can do' → the "not" of "ask not"."""
    from murgat.judges.claims import NEGATIONS, normalize_word

    out: set[int] = set()
    if claim.negated:
        return out  # the quote is what is said, its negation the claim's own
    for q in claim.quoted:
        phrase = ["not" if w.lower() in NEGATIONS else normalize_word(w) for w in tokenize(q)]
        if "not" not in phrase:
            continue
        n = len(phrase)
        for i in range(len(toks) - n + 1):
            if toks[i:i + n] == phrase:
                out |= {i + k for k, w in enumerate(phrase) if w == "not"}
    return out


Rule = Callable[[Case], "str | None"]


@dataclass(frozen=True)
class RuleRow:
    """One row of the rule table: its name, what it reads, what it decides, and the function."""

    name: str
    reads: str
    decides: str
    fn: Rule


def _unknown(reason: str) -> str:
    return f"Label: unknown\nReason: {reason}"


def rule_sound(case: Case) -> str | None:
    """A claim about a sound (music, an engine, silence, whether anyone talks) is decided from the
    sound tagger and loudness, each named sound on its own.

    Example: "A dog barks while music plays" on a music-only soundtrack → ``no`` (no dog)."""
    if not case.judge.is_sound_claim(case.claim, case.has_audio):
        return None
    return case.judge._sound(case.claim, case.tags, case.has_audio, case.heard, case.labels)


def rule_count(case: Case) -> str | None:
    """A count ("counts down from nine to zero", "says country twice", "says three numbers") is
    decided from the numbers and words heard, in time order.

    Example: "The voice says the word four twice" where "four" is heard once → ``no``."""
    if case.claim.count is None or not case.heard:
        return None
    return case.judge._count(case.claim, case.hd.norms, case.labels)


def rule_no_terms(case: Case) -> str | None:
    """A claim left with no content word after its attribution, time phrases and labels are
    removed has nothing to check.

    Example: "At 0:03, the narrator speaks." (a presence claim is the sound rule's) → ``unknown``."""
    if case.claim.terms:
        return None
    return _unknown("the fact has no content words to check (only attribution, time or labels).")


def rule_no_words(case: Case) -> str | None:
    """No word heard and none read: ``no`` for a report of speech only when the tagger hears no
    speech either; else ``unknown`` naming the blind spot.

    Example: "Someone says hello" on digital silence → ``no``."""
    if case.heard or case.seen:
        return None
    if case.claim.speech and case.has_audio:
        return case.judge._nothing_heard(case.tags, case.labels)
    if case.has_audio and not case.has_visual:
        return _unknown(f"no words are heard in {case.labels}; this judge hears words and sound classes only, and "
                        "the fact names neither.")
    return _unknown(f"nothing in {case.labels} can be read or heard as words, and this judge cannot see the picture.")


def rule_channel(case: Case) -> str | None:
    """Words claimed *shown* need on-screen text, words claimed *spoken* need a transcript: the
    other channel never stands in for the missing one.

    Example: "The sign reads crown jewels" where the words are only heard → ``unknown``."""
    if case.channel == "shown" and not case.seen:
        where = "nothing is read on screen" if case.has_visual else "no picture is cited"
        return _unknown(f"the fact is about words shown, and {where} in {case.labels}; words heard do not count "
                        "as words shown.")
    if case.channel == "spoken" and not case.heard:
        return _unknown(f"the fact is about words spoken, and no words are heard in {case.labels}; text read on "
                        "screen does not count as words spoken.")
    return None


def rule_absence(case: Case) -> str | None:
    """"X is not said" is ``yes`` when X is not heard and ``no`` when it is.

    Example: "The narrator does not mention Houston" → ``yes``."""
    if not case.claim.says_not:
        return None
    a = case.acct
    return case.judge._absence(case.claim, a.found + a.near, case.labels)


def rule_denied_substitution(case: Case) -> str | None:
    """A negated claim whose word is replaced by another in the evidence agrees with it without
    saying what it says.

    Example: "It is not in Texas" where "in Maryland" is heard → ``unknown``."""
    a = case.acct
    if not (a.subs and case.claim.negated and "not" not in a.toks):
        return None
    what = "; ".join(f"{t.text!r} where {case.labels} has {', '.join(repr(x) for x in ws)}" for t, ws in a.subs)
    return _unknown(f"the fact denies {what}; that agrees with the evidence but is not what it says.")


def rule_substitution(case: Case) -> str | None:
    """A claim word absent while another, surely heard word takes its place is ``no``.

    Example: "The narrator says Greenbelt, Virginia" where "Greenbelt, Maryland" is heard → ``no``."""
    a = case.acct
    if not a.subs:
        return None
    what = "; ".join(f"the fact says {t.text!r} where {case.labels} has {', '.join(repr(x) for x in ws)}"
                     for t, ws in a.subs)
    return f"Label: no\nReason: {what}."


def rule_unsure_substitution(case: Case) -> str | None:
    """A substitution the ASR was unsure of may be a mishearing of the claim's word: ``unknown``.

    Example: "A voice says Moscow" where "Houston" is heard at probability 0.3 → ``unknown``."""
    a = case.acct
    if not a.unsure:
        return None
    what = "; ".join(f"the fact says {t.text!r} where {case.labels} has {shown(bad)}" for t, bad in a.unsure)
    return _unknown(f"{what}: heard with an ASR probability under {case.judge.sure:.2f}, which may be a mishearing "
                    "of the fact's word, so it is not ruled out.")


def rule_near_substitution(case: Case) -> str | None:
    """A plain word replaced by one near it in meaning (MiniLM similarity ≥ ``near_meaning``) may be
    a paraphrase: ``unknown``, never ``no`` (and never ``yes`` on that similarity alone).

    Example: "The speaker says the film begins" where "the movie starts" is heard → ``unknown``."""
    a = case.acct
    if not a.akin:
        return None
    what = "; ".join(f"the fact says {t.text!r} where {case.labels} has {w!r} (similarity {sim:.2f})"
                     for t, w, sim in a.akin)
    return _unknown(f"{what}: near in meaning, so it may say the same in other words, which this judge cannot "
                    "decide word by word.")


def polarity_no(case: Case) -> str | None:
    """``no`` when the claim's polarity (its negation, or a word heard as its opposite) differs from
    the evidence's; ``None`` when they agree."""
    a, claim = case.acct, case.claim
    claim_neg = claim.negated != (len(a.flipped) % 2 == 1)
    if a.evidence_negated(case) == claim_neg:
        return None
    if a.flipped:
        opposite = "; ".join(f"{t.text!r} is the opposite of the heard {h!r}" for t, h in a.flipped)
        undo = ", and the negation does not undo it" if claim.negated else ""
        return f"Label: no\nReason: {opposite} ({case.labels}){undo}."
    side = "the fact is negated and the evidence is not" if claim_neg else "the evidence negates what the fact affirms"
    return f"Label: no\nReason: {a.detail}, but {side} ({case.labels})."


def rule_order(case: Case) -> str | None:
    """An order between things said ("X before Y", "right after", "the first number") is decided
    from the ASR word order; a polarity clash still answers ``no``.

    Example: "The voice says two right after four" where three comes between → ``no``."""
    if case.claim.order is None or not case.heard:
        return None
    out = case.judge._order(case.claim, case.hd, case.labels, case.judge.sure)
    if out is None:
        return None
    return polarity_no(case) or out


def rule_all_heard(case: Case) -> str | None:
    """Every term heard or read (in the claim's channel) with the evidence's polarity → ``yes``
    (the part checks that follow may still withhold it).

    Example: "The speaker says my fellow Americans" → ``yes``."""
    a = case.acct
    if a.required:
        return None
    opposite = "; ".join(f"{t.text!r} is the opposite of the heard {h!r}" for t, h in a.flipped)
    extra = f"; {opposite}, and the fact's negation says the same" if a.flipped else ""
    return polarity_no(case) or (f"Label: yes\nReason: {a.detail}: every term of what the fact says is heard or read "
                                 f"in {case.labels}{extra}.")


def _gone(case: Case) -> str:
    req = case.acct.required
    return ", ".join(t.text for t in req) + (" is" if len(req) == 1 else " are")


def rule_quote_missing(case: Case) -> str | None:
    """A quoted word not heard is ``no`` when every word heard there was heard surely, else
    ``unknown`` (the quote may be misheard).

    Example: 'A voice says "Neil's helmet"' where "Mike's helmet" is heard surely → ``no``."""
    if not (case.claim.quoted and case.has_audio):
        return None
    hd, sure, gone, detail = case.hd, case.judge.sure, _gone(case), case.acct.detail
    bad = hd.unsure(sure)
    if bad:
        return _unknown(f"the fact quotes words, and {gone} not heard in {case.labels} ({detail}); but some words "
                        f"there are heard with an ASR probability under {sure:.2f} ({shown(bad)}), so the quote may "
                        "have been misheard.")
    note = "" if hd.least_sure() is None else f"; every word there is heard with probability ≥ {sure:.2f}"
    return f"Label: no\nReason: the fact quotes words, and {gone} not heard in {case.labels} ({detail}{note})."


def rule_meaning(case: Case) -> str | None:
    """A report of speech whose words are not all heard is decided by meaning (MiniLM similarity of
    what is claimed said to what is heard), or left ``unknown``.

    Example: "The narrator says the cleanroom is among the biggest on Earth" → ``yes`` by meaning."""
    if not (case.claim.speech and case.has_audio and case.heard):
        return None
    a = case.acct
    return case.judge._meaning(case.claim, case.heard, case.labels, _gone(case), a.detail,
                               bool(a.found or a.near), lambda: polarity_no(case))


def rule_unheard(case: Case) -> str:
    """Terms neither heard nor read: ``unknown``, naming the blind spot (the picture only when a
    visual segment is cited).

    Example: "A worker stands on an orange lift" (visual) with no text on screen → ``unknown``."""
    gone, detail, labels = _gone(case), case.acct.detail, case.labels
    if case.has_audio and (case.claim.speech or not case.has_visual):
        return _unknown(f"{gone} not heard in {labels} ({detail}); the fact may describe something the words do not "
                        "say, which this judge cannot hear.")
    if case.has_visual and not case.seen:
        return _unknown(f"{gone} not heard, and nothing is read on screen in {labels}; this judge cannot see the "
                        "picture.")
    return _unknown(f"{gone} not heard or read in {labels} ({detail}); it may be visual, which this judge cannot see.")


#: the verdict's rules in the order they are tried; the first that decides gives the answer
RULES: tuple[RuleRow, ...] = (
    RuleRow("sound", "sound-tagger classes and loudness in the cited audio", "sound claims (yes/no/unknown)",
            rule_sound),
    RuleRow("count", "the numbers and words heard, in time order", "counts: from N to M, X twice, N numbers", rule_count),
    RuleRow("no_terms", "the claim", "unknown when nothing is left to check", rule_no_terms),
    RuleRow("no_words", "the transcript, the on-screen text, the speech classes", "no when nobody speaks where "
            "speech is claimed; unknown otherwise", rule_no_words),
    RuleRow("channel", "which channel the claim names (spoken or shown)", "unknown when that channel has no words",
            rule_channel),
    RuleRow("absence", "the words of the claim's channel", "'X is not said': yes when X is absent, no when heard",
            rule_absence),
    RuleRow("denied_substitution", "the aligned words of the claim's channel", "unknown for a denial of a word "
            "the evidence replaces", rule_denied_substitution),
    RuleRow("substitution", "the aligned words and their ASR probabilities", "no when another word surely stands "
            "where the claim's is", rule_substitution),
    RuleRow("unsure_substitution", "the ASR probabilities of the words heard there", "unknown when that word may "
            "be a mishearing", rule_unsure_substitution),
    RuleRow("near_substitution", "MiniLM similarity of the claim's word and the one heard in its place",
            "unknown when they are near in meaning (a possible paraphrase)", rule_near_substitution),
    RuleRow("order", "the ASR word order", "order, adjacency, first/last (yes/no)", rule_order),
    RuleRow("all_heard", "every term against the claim's channel, negations near them", "yes (or no on a polarity "
            "clash)", rule_all_heard),
    RuleRow("quote_missing", "quoted words and their ASR probabilities", "no for a surely unheard quote, else "
            "unknown", rule_quote_missing),
    RuleRow("meaning", "MiniLM similarity of what is claimed said to what is heard", "yes by meaning, no when "
            "something else is said, else unknown", rule_meaning),
    RuleRow("unheard", "the citation's modalities", "unknown, naming the blind spot", rule_unheard),
)


def decide(case: Case) -> str:
    """The fold: the answer of the first rule of :data:`RULES` that decides (the last always does)."""
    for row in RULES:
        out = row.fn(case)
        if out is not None:
            return out
    raise AssertionError("the last rule always decides")  # pragma: no cover


def _first_line(doc: str | None) -> str:
    text = " ".join((doc or "").split())
    return re.split(r"(?<=\.)\s", text, maxsplit=1)[0]


def _example(doc: str | None) -> str:
    m = re.search(r"Example:\s*(.+?)(?:\n\s*\n|$)", doc or "", re.DOTALL)
    return " ".join(m.group(1).split()) if m else ""


def rules_markdown(rows: tuple[RuleRow, ...] = RULES) -> str:
    """The rule table as markdown, in fold order: what each rule reads, decides, and one example
    (from its docstring) — the documentation's table is generated from this."""
    out = ["| # | rule | reads | decides | example |", "|---|---|---|---|---|"]
    for i, r in enumerate(rows, 1):
        cells = [str(i), f"`{r.name}`", r.reads, r.decides, _example(r.fn.__doc__)]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # python -m murgat.judges.embedded_rules: the table the documentation is generated from
    print(rules_markdown(), end="")
