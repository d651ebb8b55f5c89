"""What the offline judge heard and read in the cited segments, word by word.

The evidence text of a segment is a string; rules v4 of the ``embedded`` judge also weigh *how
surely* each word was heard (faster-whisper's per-word probability, carried by
:attr:`murgat.judges.types.EvidenceTextPart.words`), who said it where the transcript has
speaker turns, and the ASR's punctuation (a question mark, or question word order, marks a
question). :class:`Heard` holds the heard words as normalised tokens — the same tokens the
claim's terms are matched against (:mod:`murgat.judges.claims`) — each with its probability,
speaker and segment, and :meth:`Heard.record` is the structured account of what was heard and
read that the judge's answer carries (the report viewer shows it).

A transcript given without word probabilities (text only) is taken as heard, as rules v3 did:
confidence can only lower a verdict when the ASR says how sure it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from murgat.judges.claims import NEGATIONS, normalize_word, number_value, tokenize
from murgat.judges.types import EvidenceTextPart

#: the ASR probability under which a word may be a mishearing: a missing quote or name is "no"
#: only when every word heard in its place is at least this sure (``-J asr_sure=``)
ASR_SURE = 0.5
#: words kept per segment in the answer's record (the rest are counted): the record stays small
#: enough to survive every place an answer is kept whole
RECORD_WORDS = 40
_AUX = frozenset("is are was were do does did can could will would shall should has have had may might must am".split())
_SUBJECT_START = frozenset("the a an he she it they you we i there this that these those your his her their my our".split())


def number_runs(words: list[str]) -> dict[int, tuple[int, str]]:
    """Heard words that say one number together ("two" "thousand", "twenty" "one"): ``{first: (end,
    digits)}`` for each longest such run. The ASR writes each word apart, so the claim's "2,000" or
    "two thousand" (one token, :func:`murgat.judges.claims.numbers_as_digits`) meets them only as
    one token too. A word ending in punctuation ends a run ("four, three" is a list)."""
    out: dict[int, tuple[int, str]] = {}
    i = 0
    while i < len(words):
        best = None
        j = i
        while j < len(words) and j - i < 8:
            j += 1
            bare = [w.strip("'\".,;:!?()[]").lower() for w in words[i:j]]
            value = number_value(bare)
            if value is not None:
                best = (j, str(value))
            if words[j - 1].rstrip()[-1:] in ",.;:!?)":
                break
        if best is not None:
            out[i] = best
            i = best[0]
        else:
            i += 1
    return out


@dataclass
class Token:
    """One normalised token of a heard word (a word such as "don't" gives two)."""

    norm: str
    word: str  # the word as the ASR wrote it, punctuation included
    probability: float | None
    speaker: str | None
    segment: str
    word_index: int  # which heard word it came from (sentence marks are per word)


@dataclass
class Heard:
    """The heard tokens of a request's transcript parts in evidence order, and the text read on screen."""

    tokens: list[Token] = field(default_factory=list)
    words: list[dict[str, Any]] = field(default_factory=list)  # every heard word, with its segment label
    read: list[tuple[str, str]] = field(default_factory=list)  # (segment label, screen text)
    #: per cited audio segment with a voice count: :meth:`murgat.media.voices.VoiceSource.window`
    voice_counts: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_parts(cls, parts: list[EvidenceTextPart]) -> Heard:
        h = cls()
        for p in parts:
            if p.source == "screen_text" and p.text.strip():
                h.read.append((p.label, p.text))
            if p.source == "voices" and p.voices is not None:
                h.voice_counts.append(p.voices)
            if p.source != "transcript" or not p.text.strip():
                continue
            words = p.words if p.words is not None else [{"word": w, "probability": None} for w in p.text.split()]
            runs = number_runs([str(w.get("word", "")) for w in words])
            i = 0
            while i < len(words):
                w = words[i]
                k = len(h.words)
                end, value = runs.get(i) or (i + 1, None)
                for x in words[i:end]:
                    h.words.append({**x, "segment": p.label})
                probs = [float(str(x["probability"])) for x in words[i:end] if x.get("probability") is not None]
                prob = min(probs) if probs else None
                spk = w.get("speaker")
                said = " ".join(str(x.get("word", "")) for x in words[i:end])
                toks = [value] if value is not None else tokenize(said)
                for t in toks:
                    h.tokens.append(Token("not" if t.lower() in NEGATIONS else normalize_word(t), said, prob,
                                          None if spk is None else str(spk), p.label, k))
                i = end
        return h

    @property
    def norms(self) -> list[str]:
        return [t.norm for t in self.tokens]

    def least_sure(self, indices: range | list[int] | None = None) -> float | None:
        """The lowest probability among the tokens at ``indices`` (all when ``None``); ``None``
        when none of them has one (a text-only transcript)."""
        idx = range(len(self.tokens)) if indices is None else indices
        ps = [self.tokens[i].probability for i in idx if 0 <= i < len(self.tokens)]
        known = [p for p in ps if p is not None]
        return min(known) if known else None

    def unsure(self, threshold: float, indices: range | list[int] | None = None) -> list[Token]:
        """The tokens at ``indices`` (all when ``None``) heard with a probability under ``threshold``."""
        idx = range(len(self.tokens)) if indices is None else indices
        out = []
        for i in idx:
            p = self.tokens[i].probability if 0 <= i < len(self.tokens) else None
            if p is not None and p < threshold:
                out.append(self.tokens[i])
        return out

    def single_voice(self) -> bool:
        """Every heard word carries a speaker label and it is the same one: one voice in the window."""
        speakers = {t.speaker for t in self.tokens}
        return bool(self.tokens) and None not in speakers and len(speakers) == 1

    def has_turns(self) -> bool:
        return any(t.speaker is not None for t in self.tokens)

    def _sentence(self, token_index: int) -> list[str]:
        """The heard words of the sentence holding a token (sentences end at . ! ?)."""
        k = self.tokens[token_index].word_index
        words = [str(w.get("word", "")) for w in self.words]
        start = k
        while start > 0 and not words[start - 1].rstrip().endswith((".", "!", "?")):
            start -= 1
        end = k
        while end < len(words) - 1 and not words[end].rstrip().endswith((".", "!", "?")):
            end += 1
        return words[start:end + 1]

    def asked(self, token_index: int) -> bool:
        """The sentence holding the token is marked as a question: it ends with "?" or opens with an
        auxiliary before its subject ("is the lord … in")."""
        sent = self._sentence(token_index)
        if not sent:
            return False
        if sent[-1].rstrip().endswith("?"):
            return True
        low = [w.lower().strip(",.!?;:") for w in sent]
        return len(low) >= 2 and low[0] in _AUX and low[1] in _SUBJECT_START

    def stated(self, token_index: int) -> bool:
        """The sentence holding the token ends as a statement ("." or "!") and is not a question."""
        sent = self._sentence(token_index)
        return bool(sent) and sent[-1].rstrip().endswith((".", "!")) and not self.asked(token_index)

    def record(self) -> dict[str, Any]:
        """What was heard and read, per segment, as the answer carries it (JSON): each heard word as
        ``[word, start s, probability(, speaker)]`` (the first :data:`RECORD_WORDS` per segment; ``more``
        counts the rest), and the text read on screen."""
        heard: list[dict[str, Any]] = []
        for w in self.words:
            if not heard or heard[-1]["segment"] != w["segment"]:
                heard.append({"segment": w["segment"], "words": [], "more": 0})
            seg = heard[-1]
            if len(seg["words"]) < RECORD_WORDS:
                p = w.get("probability")
                seg["words"].append([w.get("word"), w.get("start"), None if p is None else round(float(p), 2)]
                                    + ([w["speaker"]] if w.get("speaker") is not None else []))
            else:
                seg["more"] += 1
        read = [{"segment": lab, "text": text if len(text) <= 400 else text[:399] + "…"} for lab, text in self.read]
        return {"heard": heard, "read": read}


def shown(tokens: list[Token]) -> str:
    """Heard words with their probabilities, for a reason: ``'Come' (0.04), 'on,' (0.71)``."""
    seen: list[str] = []
    out = []
    for t in tokens:
        key = f"{t.word}|{t.probability}"
        if key in seen:
            continue
        seen.append(key)
        p = "?" if t.probability is None else f"{t.probability:.2f}"
        out.append(f"{t.word!r} ({p})")
    return ", ".join(out[:8]) + (", …" if len(out) > 8 else "")

