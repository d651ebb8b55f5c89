"""What a fact claims, in checkable terms: the offline judge's reading of a sentence.

A claim is reduced to its **content terms** (names, places, numbers, quoted words, and the
nouns and verbs that carry it), each with a kind, plus its polarity. Three things are *not*
claim terms, and are removed before anything is looked for in the evidence:

* time phrases ("around seven seconds in", "at the start", "at 0:07", "then") — the
  citation already says when, and the words are not spoken;
* discourse labels at the start ("Reasoning:", "Step 2:", "Answer:");
* attributions and speaker descriptions ("the narrator says", "a woman asks", "we hear").

Matching a term against heard/read words (:func:`match_term`): exact after normalisation
(case, plurals, possessives, number words = digits), or a *near miss* that spelling and
sound both say is the same word (same first letter, and an edit ratio of 0.8 or more, or
the same phonetic key with a ratio of 0.7 or more) — so an ASR "Universities" still
matches "universe", but "Texas" never matches "you".
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from murgat.citations import strip_citations

NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
                     "ninety": "90", "hundred": "100", "thousand": "1000", "million": "1000000"})
_NUM_ALT = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_NUM = rf"(?:\d+(?:\.\d+)?|(?:{_NUM_ALT})(?:[- ](?:{_NUM_ALT}))?|a few|several|a couple of|a|an|half a)"
_UNIT = r"(?:seconds?|secs?|s|minutes?|mins?|m)"
_MEDIUM = r"(?:video|clip|audio|recording|film|scene|footage|track|segment|sequence)"

#: prose time phrases (citation groups are removed before these run)
TIME_PHRASES = [re.compile(p, re.IGNORECASE) for p in (
    r"\b(?:in|during|within|over|for)\s+the\s+(?:opening|first|last|final|closing|early|late|next|remaining)\s+"
    r"(?:few\s+)?(?:seconds?|moments?|minutes?|frames?|shots?)\b",
    rf"\b(?:(?:at|around|about|approximately|roughly|near|nearly|by|after|before|until|till|from|within|during|in|"
    rf"for|over|between|just|only|some)\s+)+(?:the\s+)?(?:first|last|final|opening|closing|next|following)?\s*{_NUM}\s*"
    rf"(?:(?:-|–|to|and)\s*{_NUM}\s*)?{_UNIT}\b(?:\s+(?:mark|in|into\s+the\s+{_MEDIUM}|of\s+the\s+{_MEDIUM}))?",
    rf"\b{_NUM}\s*{_UNIT}\s+(?:in|into|later|earlier|afterwards?)\b(?:\s+the\s+{_MEDIUM})?",
    r"\b(?:at|around|about|by|near|from|until)\s+(?:the\s+)?\d{1,2}:\d{2}(?:\.\d+)?(?:\s*(?:-|–|to)\s*\d{1,2}:\d{2})?"
    r"(?:\s+mark)?",
    rf"\b(?:at|near|towards?|by|from|in)\s+(?:the\s+)?(?:very\s+)?(?:start|beginning|end|outset|opening|close|middle)"
    rf"(?:\s+of\s+(?:the\s+)?{_MEDIUM})?\b",
    r"\b(?:early on|later on|at first|at this point|at that point|at that moment|at this moment|at the same time|"
    r"meanwhile|afterwards|afterward|shortly after(?:wards)?|right after|just before|soon after|moments? later|"
    r"a moment later|then|next|finally|first|subsequently|immediately)\b",
    rf"\b(?:in|throughout|during)\s+(?:the|this|that)\s+(?:cited\s+)?(?:{_MEDIUM}|part|portion|moment|window|span|interval)\b",
)]
#: a label that opens a line of reasoning, not part of what is claimed
DISCOURSE_LABEL = re.compile(
    r"^\s*(?:(?:step|point|observation|evidence|reason|fact|claim)\s*\d+|reasoning|rationale|answer|final answer|"
    r"observation|evidence|analysis|thought|thinking|conclusion|summary|note|explanation|description|perception|"
    r"\d+|[a-z])\s*[:.)\]-]\s+", re.IGNORECASE)
NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot"})
_CONTRACTIONS = {"n't": " not", "'ve": " have", "'re": " are", "'ll": " will", "'d": " would", "'m": " am"}
STOP = frozenset("""a an the and or but of to in on at for with by from as is are was were be been being this that these
those it its he she they them his her their him we you your our us i me my there here then than so do does did has have
had will would can could should shall must just also very into onto over under about up down out what which who whom
whose when where while if because some any all each both either own same other such only too again once how why
one ones let lets get gets got s t whether""".split())
#: how a claim says who says or shows something; never what is claimed
FRAMING = frozenset("""say says said saying tell tells told telling mention mentions mentioned mentioning state states
stated stating reply replies replied answer answers answered explain explains explained narrate narrates narrated
narrator narration speaker speakers voice voices ask asks asked asking remark remarks remarked add adds added
continue continues continued exclaim exclaims exclaimed announce announces announced declare declares declared hear
hears heard listen audible talk talks talking speak speaks spoke spoken speaking someone somebody person people man
men woman women boy girl guy lady gentleman character figure individual host presenter reporter announcer commentator
caller operator audience viewer listener clip video audio recording footage scene soundtrack background seen show
shows shown showing appear appears appeared visible displays displayed display word words line lines phrase quote
quotes quoted sentence something things thing another whether""".split())
#: verbs followed by what is said ("says the jewels were stolen")
CONTENT_VERBS = frozenset("""say says said saying tell tells told mention mentions mentioned state states stated reply
replies replied answer answers answered explain explains explained narrates narrated ask asks asked asking announce
announces announced declare declares declared exclaim exclaims exclaimed count counts counting counted read reads
reading remark remarks remarked add adds added call calls called calling greet greets greeted address addresses
addressed urge urges urged report reports reported note notes noted describe describes described name names named
list lists listed observe observes observed comment comments commented recall recalls recalled repeat repeats repeated
recite recites recited quote quotes quoted admit admits admitted argue argues argued claim claims claimed confirm
confirms confirmed deny denies denied insist insists insisted promise promises promised warn warns warned wonder
wonders wondered joke jokes joked conclude concludes concluded introduce introduces introduced refer refers referred
respond responds responded""".split())
#: who is spoken to or about, even after the speech verb ("urges people to ask", "tells them")
PERSONS = frozenset("""people person listeners listener audience viewers viewer everyone everybody someone somebody
them him her us man woman men women crowd""".split())
#: verbs that say *that* someone speaks, not what ("someone speaks over the radio")
MANNER_VERBS = frozenset("""talk talks talking talked speak speaks spoke speaking spoken shout shouts shouted yell yells
yelled whisper whispers whispered sing sings sang singing chat chats chatting chatter converse converses""".split())
SPEECH_VERBS = CONTENT_VERBS | MANNER_VERBS
#: words before a speech verb that only say who speaks, or how many ("several people talk")
QUANTIFIERS = frozenset("several many some few multiple various two three four five both all couple group".split())

@dataclass
class Term:
    text: str  # as written
    norm: str  # normalised form used for matching
    kind: str  # "number", "name" or "word"
    position: int  # index in the claim's token list


@dataclass
class Claim:
    """A fact as the offline judge reads it."""

    original: str
    cleaned: str  # without citations, labels and time phrases
    tokens: list[str]  # normalised tokens of ``cleaned`` (stopwords kept; for alignment)
    terms: list[Term] = field(default_factory=list)
    negated: bool = False
    speech: bool = False  # an attribution or a quote: the claim is about what is said
    #: only *that* someone speaks (a manner verb, nothing said): "someone speaks", "two people talk"
    speech_presence: bool = False
    speakers: int | None = None  # a number of speakers the claim asserts ("two people are talking")
    manner: list[str] = field(default_factory=list)  # words about how or where speech happens
    quoted: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # time phrases and labels taken out


def normalize_word(w: str) -> str:
    """Lower case; number words as digits; plural and possessive endings off."""
    w = w.lower().strip("'’.,;:!?\"“”()[]")
    w = NUMBER_WORDS.get(w, w)
    if w.isdigit():
        return str(int(w))
    if len(w) > 3 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("es") and w[-3] in "sxz":
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "as", "os")):
        w = w[:-1]
    return w


def tokenize(text: str) -> list[str]:
    """Words of ``text`` with contractions expanded (``don't`` → ``do not``), in order."""
    t = text.replace("’", "'").replace("‘", "'")
    for k, v in _CONTRACTIONS.items():
        t = re.sub(re.escape(k) + r"\b", v, t, flags=re.IGNORECASE)
    t = re.sub(r"'s\b", "", t)
    return re.findall(r"[A-Za-z]+(?:-[A-Za-z]+)*|\d+(?:\.\d+)?", t)


def strip_time_phrases(text: str) -> tuple[str, list[str]]:
    removed: list[str] = []
    for rx in TIME_PHRASES:
        removed += [m.group(0) for m in rx.finditer(text)]
        text = rx.sub(" ", text)
    return re.sub(r"\s+", " ", text).strip(" ,;"), removed


def analyze(fact: str) -> Claim:
    """Split ``fact`` into content terms (see the module docstring)."""
    text = strip_citations(fact).strip()
    removed: list[str] = []
    while True:
        m = DISCOURSE_LABEL.match(text)
        if not m or len(text) - m.end() < 3:
            break
        removed.append(m.group(0).strip())
        text = text[m.end():]
    quoted = re.findall(r"[\"“”]([^\"“”]+)[\"“”]", text)
    outside = re.sub(r"[\"“”][^\"“”]+[\"“”]", " ", text)
    # time phrases go everywhere before the speech verb; after it (in what is said: "says the
    # launch is in ten seconds") only one set off by a comma at the end ("…, around 7 s in")
    verb = re.search(r"\b(?:" + "|".join(sorted(CONTENT_VERBS, key=len, reverse=True)) + r")\b", outside, re.IGNORECASE)
    if verb is None:
        outside, times = strip_time_phrases(outside)
    else:
        head, times = strip_time_phrases(outside[:verb.end()])
        tail = outside[verb.end():]
        m_tail = re.search(r",\s*([^,]+?)\s*[.!?]?\s*$", tail)
        if m_tail:
            rest, more = strip_time_phrases(m_tail.group(1))
            if more and not rest.strip():
                times += more
                tail = tail[:m_tail.start()] + "."
        outside = f"{head} {tail}".strip()
    removed += times
    cleaned = outside if not quoted else f"{outside} {' '.join(quoted)}"
    raw = tokenize(outside)
    lower = [w.lower() for w in raw]
    content_cue = next((i for i, w in enumerate(lower) if w in CONTENT_VERBS), None)
    manner_cue = next((i for i, w in enumerate(lower) if w in MANNER_VERBS), None)
    speech = bool(quoted) or content_cue is not None
    # after a content verb comes what is said: there only function words are dropped ("He says
    # ask what your country can do" keeps "ask"); before it, attribution words too. After a
    # manner verb, only "about …" is said content; other words say how or where.
    cue = content_cue
    about = None
    if cue is None and manner_cue is not None:
        about = next((i for i in range(manner_cue + 1, len(lower)) if lower[i] in ("about", "of")), None)
        cue = about
    terms: list[Term] = []
    tokens: list[str] = []  # the claim's words in order, negations as "not" (what alignment compares)
    negated = False
    speakers = None
    manner: list[str] = []
    said_tokens: list[tuple[str, str, int]] = []

    def push(w: str) -> str | None:
        """Append ``w`` to ``tokens``; its normal form, or ``None`` for a negation."""
        nonlocal negated
        if w.lower() in NEGATIONS:
            negated = True
            tokens.append("not")
            return None
        tokens.append(normalize_word(w))
        return tokens[-1]

    for i, w in enumerate(raw):
        lw = w.lower()
        n = push(w)
        if n is None:
            continue
        said = cue is not None and i > cue
        if said and not (not said_tokens and lw in ("that", "whether", "if")):
            said_tokens.append((w, n, len(tokens) - 1))
        is_number = n.replace(".", "").isdigit()
        before_manner = manner_cue is not None and content_cue is None and i < manner_cue
        after_manner = manner_cue is not None and content_cue is None and i > manner_cue and not said
        if before_manner and (lw in QUANTIFIERS or is_number):
            count = int(float(n)) if is_number else (2 if lw in ("both", "couple") else None)
            if count is not None and count >= 2:
                speakers = count
            continue
        if (lw in STOP and not is_number) or (not said and (lw in SPEECH_VERBS or lw in FRAMING or n in FRAMING)) or (
                len(n) < 2 and not is_number) or (said and lw in PERSONS and i == (cue or 0) + 1):
            continue
        if after_manner:
            manner.append(w)
            continue
        kind = "number" if is_number else ("name" if w[:1].isupper() and i > 0 else "word")
        terms.append(Term(text=w, norm=n, kind=kind, position=len(tokens) - 1))
    if content_cue is not None and said_tokens and not any(t.position > len(tokens) - len(said_tokens) - 1
                                                           for t in terms):
        # only function words are said ("says how are you"): then they are the claim
        terms += [Term(text=w, norm=n, kind="word", position=p) for w, n, p in said_tokens]
    presence = not quoted and content_cue is None and manner_cue is not None and about is None
    speech = speech or about is not None
    for q in quoted:
        for w in tokenize(q):
            lw = w.lower()
            n = push(w)
            if n is None:
                continue
            if lw in STOP and not n.isdigit() and not all(x.lower() in STOP for x in tokenize(q)):
                continue  # function words inside a quote are not required (ASR drops "is" in "he's")
            kind = "number" if n.isdigit() else ("name" if w[:1].isupper() else "word")
            terms.append(Term(text=w, norm=n, kind=kind, position=len(tokens) - 1))
    return Claim(original=fact, cleaned=cleaned, tokens=tokens, terms=terms, negated=negated, speech=speech,
                 quoted=quoted, removed=removed, speech_presence=presence, speakers=speakers, manner=manner)


def phonetic_key(w: str) -> str:
    """A rough sound key: first letter, then consonant classes with vowels and repeats dropped
    (a Soundex-like reduction; enough to tell "Jewel"/"jewels" apart from "Texas"/"you")."""
    w = re.sub(r"[^a-z]", "", w.lower())
    if not w:
        return ""
    groups = {**dict.fromkeys("bfpv", "1"), **dict.fromkeys("cgjkqsxz", "2"), **dict.fromkeys("dt", "3"),
              "l": "4", **dict.fromkeys("mn", "5"), "r": "6"}
    out, last = [w[0]], groups.get(w[0], "")
    for ch in w[1:]:
        g = groups.get(ch, "")
        if g and g != last:
            out.append(g)
        last = g
    return "".join(out)


def match_term(term: str, vocab: set[str], singles: set[str] | None = None) -> tuple[str | None, bool]:
    """``(matched word, near)``: an exact match in ``vocab``, a near miss that spelling and
    sound agree on among ``singles`` (the single words; joined pairs match only exactly), or
    ``(None, False)``."""
    if term in vocab:
        return term, False
    if term.isdigit() or len(term) < 4:
        return None, False
    best, best_r = None, 0.0
    for v in (vocab if singles is None else singles):
        if not v or v[0] != term[0] or v.isdigit() or len(v) < 3:
            continue
        r = difflib.SequenceMatcher(None, term, v).ratio()
        common = next((k for k, (a, b) in enumerate(zip(term, v, strict=False)) if a != b), min(len(term), len(v)))
        if r >= 0.8 or common >= 7 or common >= 0.85 * min(len(term), len(v)) or (r >= 0.7 and phonetic_key(term) == phonetic_key(v)) or (
                len(v) >= 4 and (v.startswith(term) or term.startswith(v)) and min(len(v), len(term)) >= 5):
            if r > best_r:
                best, best_r = v, r
    return (best, True) if best is not None else (None, False)
