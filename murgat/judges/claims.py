"""What a fact claims, in checkable terms: the offline judge's reading of a sentence.

A claim is reduced to its **content terms** (names, places, numbers, quoted words, and the
nouns and verbs that carry it), each with a kind, plus its polarity. Three things are *not*
claim terms, and are removed before anything is looked for in the evidence:

* time phrases ("around seven seconds in", "at the start", "at 0:07", "then") — the
  citation already says when, and the words are not spoken;
* discourse labels at the start ("Reasoning:", "Step 2:", "Answer:");
* attributions and speaker descriptions ("the narrator says", "a woman asks", "we hear").

What is *said* is read in three parts (rules v3): the **speaker** before the speech verb
("Kennedy", "one of the voices") is not a term; an **addressee** after a verb such as
"tells", "urges" or "addresses" ("his listeners", "the audience") is a term only when the
sentence says nothing else; the rest is what is claimed to be said. Order words ("first",
"last", "then", "before", "after") and counts ("twice", "from nine to zero", "three
numbers") are not terms but checks (:class:`OrderCheck`, :class:`CountCheck`) the judge
decides from the word order of the transcript. A negation before the speech verb ("does not
mention", "never says", "nobody says") makes the claim one of *absence*
(``Claim.says_not``); a negation in what is said is the claim's polarity. Pronouns,
reflexives ("herself"), adverbs of time and place ("here", "now") and a number word used as
a determiner ("one of the …") are function words.

Rules v4 read the parts of a claim that are not content terms but must still be checked for a
"yes" (the judge names each one it cannot check): **who speaks** (``Claim.speaker``: a named or
described speaker — "Kennedy", "she", "an operator" — as opposed to "the speaker", "a voice",
"someone", "the narrator"), **to whom** (``Claim.addressee``), **which voice says which part**
(``Claim.turns``: "answers", "replies", a second speech verb), **question vs statement**
(``Claim.asks``, ``Claim.states``), **quantifiers** ("all", "every", "only": ``Claim.quantifiers``),
**superlatives** ("the largest" vs "one of the largest": ``Claim.superlatives``), **adjacency**
("right after": ``OrderCheck.adjacent``), a **scene** clause about the picture ("… while a worker
stands on a lift": ``Claim.scene``), and what a claim says is *not* said ("rather than X":
``Claim.excluded``). A few surface forms are first put in one shape (:func:`_canonical`): "Right
after X, the speaker says Y" and "Y comes right after X" become "the voice says Y right after X";
meta and linking words ("the word X", "the name X", "as well as", "rather") are not terms.

Matching a term against heard/read words (:func:`match_term`): exact after normalisation
(case, plurals, possessives, number words = digits), or a *near miss* that spelling and
sound both say is the same word (same first letter, and an edit ratio of 0.8 or more, or
the same phonetic key with a ratio of 0.7 or more) — so an ASR "Universities" still
matches "universe", but "Texas" never matches "you".
"""

from __future__ import annotations

import difflib
import itertools
import re
from dataclasses import dataclass, field

from murgat.core.citations import strip_citations
from murgat.core.rules import DISCOURSE_LABEL

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
NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot"})
_CONTRACTIONS = {"n't": " not", "'ve": " have", "'re": " are", "'ll": " will", "'d": " would", "'m": " am"}
STOP = frozenset("""a an the and or but of to in on at for with by from as is are was were be been being this that these
those it its he she they them his her their him we you your our us i me my there here then than so do does did has have
had will would can could should shall must just also very into onto over under about up down out what which who whom
whose when where while if because some any all each both either own same other such only too again once how why
one ones let lets get gets got s t whether himself herself themselves itself myself yourself yourselves ourselves
here now today again already still ever even""".split())
#: words that order or count what is said; never terms of a claim about speech (see :class:`OrderCheck`)
ORDER_WORDS = frozenset("""first last then before after right next finally followed afterwards afterward earlier later
once twice thrice times time immediately directly straight""".split())
#: verbs whose object is who is spoken to ("tells his listeners to …", "addresses the audience as …")
ADDRESS_VERBS = frozenset("""tell tells told urge urges urged address addresses addressed remind reminds reminded warn
warns warned greet greets greeted assure assures assured inform informs informed ask asks asked""".split())
#: where an addressee ends and what is said begins
_ADDRESS_END = frozenset("""to that as whether if what how why who where when not never he she it they we i you there
this these those""".split())
_DOWN = frozenset({"down", "backwards", "backward", "downward", "downwards"})
_UP = frozenset({"up", "upward", "upwards", "forward", "forwards"})
_TIMES = {"once": 1, "twice": 2, "thrice": 3}
#: how a claim says who says or shows something; never what is claimed
FRAMING = frozenset("""say says said saying tell tells told telling mention mentions mentioned mentioning state states
stated stating reply replies replied answer answers answered explain explains explained narrate narrates narrated
narrator narration speaker speakers voice voices ask asks asked asking remark remarks remarked add adds added
continue continues continued exclaim exclaims exclaimed announce announces announced declare declares declared hear
hears heard listen audible talk talks talking speak speaks spoke spoken speaking someone somebody person people man
men woman women boy girl guy lady gentleman character figure individual host presenter reporter announcer commentator
caller operator audience viewer listener clip video audio recording footage scene soundtrack background seen show
broadcast broadcasts message messages announcement announcements transmission transmissions tape program programme
podcast interview voiceover commentary
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
respond responds responded use uses used utter utters uttered pronounce pronounces pronounced""".split())
#: who is spoken to or about, even after the speech verb ("urges people to ask", "tells them")
PERSONS = frozenset("""people person listeners listener audience viewers viewer everyone everybody someone somebody
them him her us man woman men women crowd""".split())
#: verbs that say *that* someone speaks, not what ("someone speaks over the radio")
MANNER_VERBS = frozenset("""talk talks talking talked speak speaks spoke speaking spoken shout shouts shouted yell yells
yelled whisper whispers whispered sing sings sang singing chat chats chatting chatter converse converses""".split())
SPEECH_VERBS = CONTENT_VERBS | MANNER_VERBS
#: words of a subject that name no particular voice: "the speaker", "a voice", "someone", "we hear"
GENERIC_SPEAKERS = frozenset("""someone somebody voice voices speaker speakers narrator narration we you audio recording
clip video film soundtrack footage track radio counting countdown count hear hears heard listen can broadcast
broadcasts message messages announcement announcements transmission transmissions tape program programme podcast
interview voiceover commentary""".split())
#: nouns that name a display: the speaker of on-screen text ("the sign reads X", "a title card says X"),
#: never a term that must itself be read or heard (rules v5)
DISPLAY_WORDS = frozenset("""sign signs screen screens caption captions subtitle subtitles title titles card cards
banner banners text texts label labels placard placards poster posters board boards headline headlines chyron
lettering writing""".split())
_SHOWS_WORDS = re.compile(r"\b(?:shows|displays|bears|carries)\s+(?:the\s+)?(?:words?|text|lettering|message)\b",
                          re.IGNORECASE)
#: "is told", "are asked", "were urged": a passive speech verb; who stands before it is spoken to, not speaking
_PASSIVE_AUX = frozenset("is are was were be been being get gets got".split())
#: who a speech may be addressed to without naming anyone in particular
GENERIC_AUDIENCE = frozenset("""listeners listener audience people everyone everybody viewers viewer public crowd""".split())
#: verbs that say the words were a question
ASK_VERBS = frozenset("ask asks asked asking wonder wonders wondered inquire inquires inquired".split())
#: verbs that say the words were a statement (an answer, a declaration), not a question
STATE_VERBS = frozenset("""state states stated declare declares declared assert asserts asserted answer answers answered
reply replies replied respond responds responded confirm confirms confirmed insist insists insisted""".split())
#: a second speech verb in what is said means two turns ("one voice asks … and another answers …")
TURN_VERBS = frozenset("""answers answered replies replied responds responded asks asked says said tells told adds added
continues continued""".split())
TURN_NOUNS = frozenset({"reply", "replies", "response", "responses", "answer", "answers"})
_WH = frozenset("whether if how what why who whom where when which about".split())
#: words that quantify what is said: they must be heard too (or checked by a count)
QUANTIFIER_WORDS = frozenset("all every each only most many several always entire whole few".split())
_NOT_SUPERLATIVE = frozenset("""interest honest forest modest suggest request harvest protest contest arrest digest
invest manifest rest west best test nest chest guest quest vest""".split())
#: superlatives without the -est ending, and -est words that are
_SUPERLATIVES = frozenset({"best", "worst", "most", "least", "last"})
#: words before a speech verb that only say who speaks, or how many ("several people talk")
QUANTIFIERS = frozenset("several many some few multiple various two three four five both all couple group".split())

@dataclass
class Term:
    text: str  # as written
    norm: str  # normalised form used for matching
    kind: str  # "number", "name" or "word"
    position: int  # index in the claim's token list
    #: "said" (what is claimed to be said or shown), "addressee" (who is spoken to: not
    #: required to be heard, and not a substitution when another word stands there), or "scene"
    #: (a clause about the picture beside what is said: checked only against on-screen text)
    role: str = "said"
    #: a word inside quotation marks (a quoted name is "no" only when the ASR was sure)
    in_quote: bool = False


@dataclass
class OrderCheck:
    """An order between things said: ``before`` is said before ``after`` (normalised tokens of
    each side), or ``which`` ("first"/"last") of ``among`` ("number"/"word") is ``target``."""

    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    which: str | None = None
    among: str = "word"
    target: str | None = None
    #: the order word as written ("after", "first"); when the speech itself has it, it is part of
    #: what is said ("he left after lunch"), not an order between utterances
    marker: str = ""
    #: "right after", "immediately before", "followed directly by": nothing is said between the sides
    adjacent: bool = False
    #: ``which == "nth"``: the position claimed ("the third number" → 3)
    nth: int = 0


@dataclass
class CountCheck:
    """A count of what is said: ``word`` said ``times`` times, ``times`` numbers said, or a
    count from ``start`` to ``end`` (``direction`` "down", "up" or None)."""

    kind: str  # "times" | "numbers" | "range"
    times: int | None = None
    word: str | None = None
    start: str | None = None
    end: str | None = None
    direction: str | None = None
    #: "every number from N to M": none of the numbers between may be missing
    every: bool = False


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
    #: a claim of absence: a negation before the speech verb ("does not mention X", "nobody says X")
    says_not: bool = False
    said: str = ""  # what is claimed to be said, as written (after the speech verb), for similarity
    order: OrderCheck | None = None
    count: CountCheck | None = None
    #: rules v4: the parts of the claim besides its terms (see the module docstring)
    speaker: str | None = None
    addressee: str | None = None
    turns: bool = False
    asks: bool = False
    states: bool = False
    quantifiers: list[str] = field(default_factory=list)
    #: (normalised superlative, hedged by "one of"/"among")
    superlatives: list[tuple[str, bool]] = field(default_factory=list)
    scene: list[Term] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)


def is_superlative(w: str) -> bool:
    """``largest``, ``best``, ``tiniest`` — not ``forest`` or ``interest``."""
    w = w.lower()
    return w in _SUPERLATIVES - {"last"} or (len(w) >= 6 and w.endswith("est") and w not in _NOT_SUPERLATIVE)


_ADJ = r"(?:right|immediately|directly|just|straight)"
_DEICTIC = frozenset("that this it then which these those".split())
_PLAIN_ORDER = re.compile(rf"^(?:the\s+(?:word|name|number|phrase)\s+)?(?P<x>.+?)\s+(?:comes|follows|is\s+said|is\s+heard|"
                          rf"is\s+spoken|appears)\s+(?:(?P<adj>{_ADJ})\s+)?(?P<rel>after|before)\s+(?P<y>.+?)[.!]?$",
                          re.IGNORECASE)
_FOLLOWED = re.compile(rf"^(?:the\s+(?:word|name|number|phrase)\s+)?(?P<x>.+?)\s+is\s+(?:(?P<adj>{_ADJ})\s+)?followed\s+by\s+"
                       rf"(?P<y>.+?)[.!]?$", re.IGNORECASE)
_FRONT_ORDER = re.compile(rf"^(?:(?P<adj>{_ADJ})\s+)?(?P<rel>after|before)\s+(?P<y>[^,]+),\s*(?P<rest>.+)$", re.IGNORECASE)
_FRONT_SCENE = re.compile(r"^(?:while|whilst|when|as)\s+(?P<scene>[^,]+),\s*(?P<rest>.+)$", re.IGNORECASE)
_TAIL_SCENE = re.compile(r"\s+(?:while|whilst|when|as)\s+(?P<scene>(?:a|an|the|some|two|three|his|her|their)\s+.+?)[.!]?$",
                         re.IGNORECASE)
_TAIL_WHILE = re.compile(r"\s+(?:while|whilst)\s+(?P<scene>[A-Za-z].+?)[.!]?$", re.IGNORECASE)
_BE = frozenset("is are was were stands stand sits sit walks walk appears appear lies lie shown seen visible".split())


def _clause_like(text: str) -> bool:
    """Whether the words after "as"/"while" read as a clause (a verb), not a phrase ("as the location")."""
    words = [w.lower() for w in tokenize(text)]
    return any(w in _BE or w.endswith("ing") for w in words) or any(
        w.endswith("s") and not w.endswith("ss") for w in words[2:])


_CONTENT_VERB = re.compile(r"\b(?:" + "|".join(sorted(CONTENT_VERBS, key=len, reverse=True)) + r")\b", re.IGNORECASE)
#: a question verb (or "knows", "tells", "explains") just before "when"/"while"/"as": the clause is what is asked
_ASKING_AT_END = re.compile(r"\b(?:" + "|".join(sorted(ASK_VERBS | {"know", "knows", "tells", "tell", "explains"},
                                                          key=len, reverse=True)) + r")\s*$", re.IGNORECASE)


def _canonical(text: str) -> tuple[str, str, str]:
    """``(text, scene, excluded)``: one shape for order claims, the scene clause and a "rather
    than …" phrase taken out, meta and linking words dropped (see the module docstring). Each part
    is checked on its own later, so none of them may leave its words among the terms said.

    Example: "Right after the word ten, the speaker says nine while a worker stands on a lift" →
    ``("the speaker says nine right after ten.", "a worker stands on a lift", "")``."""
    t, excluded = _take_excluded(text)
    t, scene = _take_scene(t)
    t = _one_order_shape(t)
    # "the word X", "the name X", "the phrase X": the meta noun is not said
    t = re.sub(r"\bthe\s+(?:word|words|name|names|phrase|term|line|sentence|quote|expression)\s+"
               r"(?!of\b|heard\b|said\b|is\b|that\b|the\b)", "", t,
               flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", t).strip(), scene.strip(), excluded.strip()


def _take_excluded(text: str) -> tuple[str, str]:
    """``(text, excluded)``: a "rather than X" at the front or the end taken out, and the linking
    words "as well as", "rather" and "as well" made plain. What a claim says is *not* said is a
    check of its own (``Claim.excluded``); left in, its words would be terms that must be heard.

    Example: "The speaker says nine rather than ten." → ``("The speaker says nine", "ten")``."""
    t = re.sub(r"\bas well as\b", "and", text, flags=re.IGNORECASE)
    excluded = ""
    m = re.match(r"^\s*rather than\s+([^,]+),\s*(.+)$", t, re.IGNORECASE)
    if m:
        excluded, t = m.group(1), m.group(2)
    else:
        m = re.search(r",?\s+rather than\s+(.+?)[.!]?$", t, re.IGNORECASE)
        if m:
            excluded, t = m.group(1), t[:m.start()]
    return re.sub(r"\b(?:rather|as well)\b", " ", t, flags=re.IGNORECASE), excluded


def _take_scene(t: str) -> tuple[str, str]:
    """``(text, scene)``: a clause about the picture ("while a dog sits on a sofa", "as the crowd
    cheers") taken out, at the front or the end. Beside what is said, it can be checked only
    against on-screen text; left in, "dog" and "sofa" would be terms that must be heard.

    Example: "The speaker says hello while a dog sits on a sofa." → ``("The speaker says hello",
    "a dog sits on a sofa")``; "… as the location" (no verb: not a clause) stays."""
    m = _FRONT_SCENE.match(t)
    if m and (not m.group(0).lower().startswith("as") or _clause_like(m.group("scene"))):
        return m.group("rest"), m.group("scene")
    tail = _tail_scene(t)
    if tail is not None:
        return t[:tail.start()], tail.group("scene")
    return t, ""


def _tail_scene(t: str) -> re.Match[str] | None:
    """The scene clause at the end of ``t``, or ``None``. After an article ("while a worker …") it
    is a scene; without one, only a clause after a report of speech ("says X while operators sit
    …"), never a question ("asks when the train leaves": what is asked, rules v5).

    Example: "The voice asks when the train leaves" → ``None``; "… says go while a worker stands
    on a lift" → the match of "while a worker stands on a lift"."""
    m = _TAIL_SCENE.search(t) or _TAIL_WHILE.search(t)
    if m is None:
        return None
    if m.re is _TAIL_WHILE and not (_clause_like(m.group("scene")) and not m.group("scene").split()[0].lower(
            ).endswith("ing") and _CONTENT_VERB.search(t[:m.start()])):
        return None  # without an article, only a clause after a report of speech ("says X while operators sit …")
    if _ASKING_AT_END.search(t[:m.start()]):
        return None  # "asks when the train leaves": the question, not a picture (rules v5)
    if not m.group(0).strip().lower().startswith("as") or _clause_like(m.group("scene")):
        return m
    return None


def _one_order_shape(t: str) -> str:
    """Order claims in one shape, "the voice says Y right after X", so that one reading of what is
    said (:func:`_order_and_count`) serves them all: a front "After X, …" of a report of speech goes
    to its end, and a sentence with no speech verb ("Y comes after X", "X is followed by Y", "Y
    follows X") becomes a report of speech.

    Example: "Right after ten, the speaker says nine." → "the speaker says nine right after ten.";
    "Nine comes right after ten." → "The voice says Nine right after ten."."""
    if _CONTENT_VERB.search(t):
        m = _FRONT_ORDER.match(t.strip())
        if m and not (set(w.lower() for w in tokenize(m.group("y"))) <= _DEICTIC) and not re.search(
                rf"\b{_NUM}\s*{_UNIT}\b", m.group("y").strip(), re.IGNORECASE):
            rest = m.group("rest").rstrip(" .!")
            return f"{rest} {(m.group('adj') or '').lower()} {m.group('rel').lower()} {m.group('y')}."
        return t
    m = _PLAIN_ORDER.match(t.strip()) or _FOLLOWED.match(t.strip())
    if m:
        rel = m.groupdict().get("rel") or "before"
        return f"The voice says {m.group('x')} {(m.group('adj') or '').lower()} {rel.lower()} {m.group('y')}."
    m = re.match(r"^(?P<x>.+?)\s+(?:(?P<adj>directly|immediately|right)\s+)?follows\s+(?P<y>.+?)[.!]?$", t.strip(),
                 re.IGNORECASE)
    if m and not re.search(r"\b(?:after|before)\b", m.group("y"), re.IGNORECASE):
        return f"The voice says {m.group('x')} {(m.group('adj') or '').lower()} after {m.group('y')}."
    return t


#: ordinal words from "fourth" on, as digits ("ninth" and "9th" are one word to this judge); "first",
#: "second" and "third" stay words (they also order things: "first … then"), and "1st", "2nd", "3rd" become them
ORDINAL_WORDS = {w: f"{n}th" for n, w in (
    (4, "fourth"), (5, "fifth"), (6, "sixth"), (7, "seventh"), (8, "eighth"), (9, "ninth"), (10, "tenth"),
    (11, "eleventh"), (12, "twelfth"), (13, "thirteenth"), (14, "fourteenth"), (15, "fifteenth"), (16, "sixteenth"),
    (17, "seventeenth"), (18, "eighteenth"), (19, "nineteenth"), (20, "twentieth"), (30, "thirtieth"),
    (40, "fortieth"), (50, "fiftieth"), (60, "sixtieth"), (70, "seventieth"), (80, "eightieth"), (90, "ninetieth"),
    (100, "hundredth"), (1000, "thousandth"))}
_FIRST_THREE = {"1st": "first", "2nd": "second", "3rd": "third"}
#: ordinal words and the position each names ("third" → 3), for "the third number the voice says"
ORDINALS = {"first": 1, "second": 2, "third": 3, **{w: int(v[:-2]) for w, v in ORDINAL_WORDS.items() if int(v[:-2]) <= 20}}
_ORDINAL_ALT = "|".join(sorted(set(ORDINALS) - {"first"}, key=len, reverse=True))
_MULTIPLIERS = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_TENS = frozenset({"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"})


def _year_value(words: list[str]) -> int | None:
    """A year said in two parts ("nineteen ninety nine" → 1999, "nineteen sixty" → 1960, "nineteen oh
    five" → 1905): a teen above ten, then tens in words ("oh" and a unit). Two teens stay a list (a
    countdown says "nineteen eighteen"), as do "nine fifteen" and "twenty …" ("twenty twenty" is not
    read as 2020)."""
    low = [w.lower() for w in words]
    if len(low) not in (2, 3) or low[0] not in NUMBER_WORDS or not 11 <= int(NUMBER_WORDS[low[0]]) <= 19:
        return None
    rest = low[1:]
    if rest[0] == "oh" and len(rest) == 2 and rest[1] in NUMBER_WORDS and 1 <= int(NUMBER_WORDS[rest[1]]) <= 9:
        return int(NUMBER_WORDS[low[0]]) * 100 + int(NUMBER_WORDS[rest[1]])
    if len(rest) == 1 and (rest[0] in _TENS or rest[0] == "ten"):
        return int(NUMBER_WORDS[low[0]]) * 100 + int(NUMBER_WORDS[rest[0]])
    if len(rest) == 2 and rest[0] in _TENS and rest[1] in NUMBER_WORDS and 1 <= int(NUMBER_WORDS[rest[1]]) <= 9:
        return int(NUMBER_WORDS[low[0]]) * 100 + int(NUMBER_WORDS[rest[0]]) + int(NUMBER_WORDS[rest[1]])
    return None


@dataclass
class _SpelledNumber:
    """A number read word by word ("two thousand five hundred and five"): what each word was
    (``kinds``: "unit", "teen", "tens", "mult", "and", "a", "digit"), the thousands and millions so
    far (``total``) and the part under them (``current``). A word that cannot follow the ones before
    it ("twenty thirty", "three two") ends the reading: those words are a list of numbers."""

    kinds: list[str] = field(default_factory=list)
    total: int = 0
    current: int = 0
    last_mult: int = 0

    def read(self, w: str) -> bool:
        """Take one lower-case word; ``False`` when it cannot continue this number (a digit or "a"
        only opens one: "3 million", "a hundred").

        Example: after "twenty", "one" → ``True`` (21 so far); after "twenty", "thirty" → ``False``."""
        prev = self.kinds[-1] if self.kinds else None
        if w == "a" and prev is None:
            self.kinds.append("a")
            self.current = 1
        elif w.isdigit() and prev is None:
            self.kinds.append("digit")
            self.current = int(w)
        elif w == "and" and prev == "mult":
            self.kinds.append("and")
        elif w in _MULTIPLIERS:
            return self._multiplier(_MULTIPLIERS[w], prev)
        elif w in _TENS:
            if prev not in (None, "mult", "and"):
                return False
            self.kinds.append("tens")
            self.current += int(NUMBER_WORDS[w])
        elif w in NUMBER_WORDS and int(NUMBER_WORDS[w]) < 20:
            return self._under_twenty(int(NUMBER_WORDS[w]), prev)
        else:
            return False
        return True

    def _multiplier(self, m: int, prev: str | None) -> bool:
        """"hundred" multiplies the part under the thousands, "thousand" and "million" close it into
        the total; a multiplier follows a count or a smaller multiplier, never a larger one (which
        would be two numbers). Example: "five hundred thousand" → 500000; "thousand hundred" → ``False``."""
        if prev not in ("unit", "teen", "tens", "a", "digit") and not (prev == "mult" and m > self.last_mult):
            return False
        self.kinds.append("mult")
        if m == 100:
            self.current = (self.current or 1) * 100
        else:
            self.total += (self.current or 1) * m
            self.current = 0
        self.last_mult = m
        return True

    def _under_twenty(self, v: int, prev: str | None) -> bool:
        """A unit or teen opens a number, follows a multiplier or "and", or (a unit) ends tens; after
        another unit it is a list. Example: "twenty one" → 21; "three two" → ``False``."""
        if not (prev in (None, "mult", "and") or (prev == "tens" and 1 <= v <= 9)):
            return False
        self.kinds.append("teen" if v >= 10 else "unit")
        self.current += v
        return True

    def value(self) -> int | None:
        """The number read, or ``None`` when the words are not one number of several words: one word,
        a dangling "a", "and" or digit, or units and teens alone (a list: "three two one"). Example:
        "two thousand five" → 2005; "a" → ``None``."""
        k = self.kinds
        if len(k) < 2 or k[-1] in ("a", "and", "digit") or ("mult" not in k and "tens" not in k):
            return None
        return self.total + self.current


def number_value(words: list[str]) -> int | None:
    """The value of a number written in words ("twenty one", "two thousand five hundred", "one hundred
    and five", "a hundred", "3 million"), or ``None`` when the words are not one number: fewer than
    two, or a list of numbers ("three two one", "twenty thirty"), which is read word by word.

    A number of several words is said as digits by ASR as often as in words ("platform 21",
    "twenty-one"): the two spellings must meet, or a right claim is answered "no".

    Example: ``number_value(["one", "hundred", "and", "five"])`` → 105; ``["three", "two"]`` → ``None``."""
    year = _year_value(words)
    if year is not None:
        return year
    number = _SpelledNumber()
    if not all(number.read(raw.lower()) for raw in words):
        return None
    return number.value()


#: most words one number is written in ("seven hundred and seventy seven thousand seven hundred and seventy seven": 12)
_MAX_NUMBER_WORDS = 12
_NUM_TOKEN = rf"(?:a|\d+|{_NUM_ALT})"
_NUMBER_RUN = re.compile(rf"\b{_NUM_TOKEN}(?:(?:[ \t]+|-)(?:and[ \t]+|oh[ \t]+)?(?:{_NUM_ALT}))+\b", re.IGNORECASE)


def numbers_as_digits(text: str) -> str:
    """``text`` with every number of several words written in digits ("twenty-one" → "21", "two
    thousand" → "2000") and thousands separators dropped ("2,000" → "2000"); words separated by
    anything but a space or a hyphen ("four, three, two") are not one number and stay as they are."""
    text = re.sub(r"\b\d{1,3}(?:,\d{3})+\b", lambda m: m.group(0).replace(",", ""), text)
    # dozens are twelves ("a dozen" → 12, "half a dozen" → 6, "two dozen" → 24)
    text = re.sub(r"\bhalf\s+a\s+dozen\b", "6", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(a|one|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+dozen\b",
                  lambda m: str(12 * (1 if m.group(1).lower() == "a" else int(NUMBER_WORDS.get(m.group(1).lower(),
                                                                                                m.group(1))))),
                  text, flags=re.IGNORECASE)

    def one(m: re.Match[str]) -> str:
        # words and the separators between them; the longest number from each word on (greedy), so
        # "twenty-one ninety nine" is two numbers and "a two hundred" keeps its "a"
        bits = re.split(r"([\s-]+)", m.group(0))
        words, seps = bits[0::2], bits[1::2]
        out: list[str] = []
        i = 0
        while i < len(words):
            longest = min(len(words), i + _MAX_NUMBER_WORDS)  # bounded: a run of 10,000 number words stays linear
            j = next((j for j in range(longest, i + 1, -1) if number_value(words[i:j]) is not None), None)
            out.append(str(number_value(words[i:j])) if j is not None else words[i])
            i = j if j is not None else i + 1
            if i < len(words):
                out.append(seps[i - 1])
        return "".join(out)

    return _NUMBER_RUN.sub(one, text)


def normalize_word(w: str) -> str:
    """Lower case; number words as digits; plural and possessive endings off."""
    w = w.lower().strip("'’.,;:!?\"“”()[]")
    w = NUMBER_WORDS.get(w, w)
    if w.isdigit():
        return str(int(w))
    if w in ORDINAL_WORDS or w in _FIRST_THREE:
        return ORDINAL_WORDS.get(w) or _FIRST_THREE[w]
    if re.fullmatch(r"\d+(?:st|nd|rd|th)", w):
        return f"{int(w[:-2])}th"
    if len(w) > 3 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("es") and w[-3] in "sxz":
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "as", "os")):
        w = w[:-1]
    return w


def tokenize(text: str) -> list[str]:
    """Words of ``text`` with contractions expanded (``don't`` → ``do not``), in order; a number of
    several words is one token of digits (:func:`numbers_as_digits`), an ordinal in digits one token
    ("9th")."""
    t = numbers_as_digits(text.replace("’", "'").replace("‘", "'"))
    for k, v in _CONTRACTIONS.items():
        t = re.sub(re.escape(k) + r"\b", v, t, flags=re.IGNORECASE)
    t = re.sub(r"'s\b", "", t)
    return re.findall(r"[A-Za-z]+(?:-[A-Za-z]+)*|\d+(?:\.\d+)?(?:st|nd|rd|th)?\b|\d+(?:\.\d+)?", t)


def strip_time_phrases(text: str) -> tuple[str, list[str]]:
    removed: list[str] = []
    for rx in TIME_PHRASES:
        removed += [m.group(0) for m in rx.finditer(text)]
        text = rx.sub(" ", text)
    return re.sub(r"\s+", " ", text).strip(" ,;"), removed


def _strip_labels(text: str) -> tuple[str, list[str]]:
    """``text`` without its discourse labels at the start ("Reasoning:", "Step 2:"), and the labels."""
    removed: list[str] = []
    while True:
        m = DISCOURSE_LABEL.match(text)
        if not m or len(text) - m.end() < 3:
            return text, removed
        removed.append(m.group(0).strip())
        text = text[m.end():]


def _strip_times(outside: str) -> tuple[str, list[str]]:
    """Time phrases out: everywhere before the speech verb; after it (in what is said: "says the
    launch is in ten seconds") only one set off by a comma at the end ("…, around 7 s in")."""
    verb = re.search(r"\b(?:" + "|".join(sorted(CONTENT_VERBS, key=len, reverse=True)) + r")\b", outside, re.IGNORECASE)
    if verb is None:
        return strip_time_phrases(outside)
    head, times = strip_time_phrases(outside[:verb.end()])
    tail = outside[verb.end():]
    m_tail = re.search(r",\s*([^,]+?)\s*[.!?]?\s*$", tail)
    if m_tail:
        rest, more = strip_time_phrases(m_tail.group(1))
        if more and not rest.strip():
            times += more
            tail = tail[:m_tail.start()] + "."
    return f"{head} {tail}".strip(), times


def _subject_is_speaker(raw: list[str], lower: list[str], content_cue: int | None) -> bool:
    """Whether the words before a speech verb say who speaks ("Kennedy says …", "one of the voices
    says …"), so they are not what is said; "The telescope in the cleanroom is named Webb" keeps its subject."""
    if content_cue is None:
        return False
    speaker_words = FRAMING | PERSONS | DISPLAY_WORDS | {"he", "she", "they", "i", "we", "it", "nobody", "no", "one",
                                                        "none"}
    return any(w in speaker_words or (raw[i][:1].isupper() and w not in STOP) for i, w in enumerate(lower[:content_cue]))


def _addressee_span(lower: list[str], content_cue: int | None) -> set[int]:
    """Token indices of who is spoken to after an address verb ("tells his listeners to …"); none
    when nothing else is said (then the object is what is claimed: "addresses his fellow Americans")."""
    addressee: set[int] = set()
    if content_cue is None or lower[content_cue] not in ADDRESS_VERBS:
        return addressee
    j = content_cue + 1
    while j < len(lower) and lower[j] not in _ADDRESS_END and lower[j] not in NEGATIONS:
        addressee.add(j)
        j += 1
    return set() if j >= len(lower) else addressee


def _position_order(position: re.Match[str]) -> OrderCheck:
    """"the first/last/third/largest number …" as an order check."""
    pos_word = position.group(1).lower()
    which = {"first": "first", "smallest": "min", "lowest": "min", "largest": "max", "highest": "max",
             "biggest": "max", **dict.fromkeys(set(ORDINALS) - {"first"}, "nth")}.get(pos_word, "last")
    return OrderCheck(which=which, among="number" if position.group(2).lower() == "number" else "word",
                      marker=pos_word, nth=ORDINALS.get(pos_word, 0))


@dataclass
class _Reading:
    """The token-by-token reading of a claim's words: what :func:`analyze` builds, word by word."""

    raw: list[str]
    lower: list[str]
    content_cue: int | None
    manner_cue: int | None
    cue: int | None  # where what is said begins: the content verb, or "about" after a manner verb
    addressee: set[int]
    skip: set[int]
    drop_subject: bool
    tokens: list[str] = field(default_factory=list)  # the claim's words in order, negations as "not"
    terms: list[Term] = field(default_factory=list)
    negated: bool = False
    neg_at: list[int] = field(default_factory=list)
    speakers: int | None = None
    manner: list[str] = field(default_factory=list)
    said_tokens: list[tuple[str, str, int]] = field(default_factory=list)

    def push(self, w: str, at: int = -1) -> str | None:
        """Append ``w`` to ``tokens``; its normal form, or ``None`` for a negation."""
        if w.lower() in NEGATIONS:
            self.negated = True
            self.neg_at.append(at)
            self.tokens.append("not")
            return None
        self.tokens.append(normalize_word(w))
        return self.tokens[-1]

    def _speaker_count(self, i: int, lw: str, n: str, is_number: bool) -> None:
        """A number of speakers before a manner verb ("two people talk", "a single voice speaks")."""
        count_ = int(float(n)) if is_number else (2 if lw in ("both", "couple") else 1 if lw in (
            "single", "sole", "lone") else None)
        only_one = count_ == 1 and (lw != "one" or (i > 0 and self.lower[i - 1] == "only"))
        if count_ is not None and (count_ >= 2 or only_one):
            self.speakers = count_

    def _not_a_term(self, i: int, lw: str, n: str, said: bool, is_number: bool) -> bool:
        """Words that are never terms: the speaker, a repeated "says", order words, function words."""
        cc, lower = self.content_cue, self.lower
        if self.drop_subject and cc is not None and i < cc:
            return True
        if said and lw in ("say", "says", "said", "saying"):
            return True  # a second report of the same speech ("says 'ask not' and then says …") is no term
        if i in self.skip or (cc is not None and said and lw in ORDER_WORDS) or (
                lw == "one" and i + 1 < len(lower) and lower[i + 1] == "of"):
            return True
        return (lw in STOP and not is_number) or (not said and (lw in SPEECH_VERBS or lw in FRAMING or n in FRAMING)) or (
            len(n) < 2 and not is_number) or (said and lw in PERSONS and i == (self.cue or 0) + 1)

    def word(self, i: int, w: str) -> None:
        """Read the claim's ``i``-th word (outside quotes)."""
        lw = w.lower()
        n = self.push(w, i)
        if n is None:
            return
        cue, cc, mc = self.cue, self.content_cue, self.manner_cue
        said = cue is not None and i > cue
        if said and i not in self.addressee and not (not self.said_tokens and lw in ("that", "whether", "if")):
            self.said_tokens.append((w, n, len(self.tokens) - 1))
        is_number = n.replace(".", "").isdigit()
        if mc is not None and cc is None and i < mc and (lw in QUANTIFIERS or is_number or lw in (
                "single", "only", "sole", "lone")):
            self._speaker_count(i, lw, n, is_number)
            return
        if self._not_a_term(i, lw, n, said, is_number):
            return
        if mc is not None and cc is None and i > mc and not said:
            self.manner.append(w)
            return
        kind = "number" if is_number else ("name" if w[:1].isupper() and i > 0 else "word")
        self.terms.append(Term(text=w, norm=n, kind=kind, position=len(self.tokens) - 1,
                               role="addressee" if i in self.addressee else "said"))

    def quote(self, q: str, outside_said: bool, negated_before: bool) -> None:
        """Read a quoted phrase: its words are terms; named beside other words said, its negation is its own."""
        for w in tokenize(q):
            lw = w.lower()
            n = self.push(w)
            if n is None:
                if outside_said:
                    self.negated = negated_before
                continue
            if lw in STOP and not n.isdigit() and not all(x.lower() in STOP for x in tokenize(q)):
                continue  # function words inside a quote are not required (ASR drops "is" in "he's")
            kind = "number" if n.isdigit() else ("name" if w[:1].isupper() else "word")
            self.terms.append(Term(text=w, norm=n, kind=kind, position=len(self.tokens) - 1, in_quote=True))


def _read_words(raw: list[str], outside: str, position: re.Match[str] | None
                ) -> tuple[_Reading, OrderCheck | None, CountCheck | None, int | None, bool]:
    """The reading of the words outside quotes, the order and count checks, the "about" cue, and
    whether the order is a position ("the last number …", which makes the claim one about speech)."""
    lower = [w.lower() for w in raw]
    content_cue = next((i for i, w in enumerate(lower) if w in CONTENT_VERBS), None)
    manner_cue = next((i for i, w in enumerate(lower) if w in MANNER_VERBS), None)
    # after a content verb comes what is said: there only function words are dropped; before it,
    # attribution words too. After a manner verb, only "about …" is said content.
    about = None
    if content_cue is None and manner_cue is not None:
        about = next((i for i in range(manner_cue + 1, len(lower)) if lower[i] in ("about", "of")), None)
    skip, order, count = _order_and_count(raw, lower, content_cue)
    by_position = order is None and count is None and position is not None and (
        content_cue is not None or re.search(r"\b(?:heard|said|spoken)\b", outside, re.IGNORECASE) is not None)
    if by_position and position is not None:
        order = _position_order(position)
    r = _Reading(raw=raw, lower=lower, content_cue=content_cue, manner_cue=manner_cue,
                 cue=content_cue if content_cue is not None else about, addressee=_addressee_span(lower, content_cue),
                 skip=skip, drop_subject=_subject_is_speaker(raw, lower, content_cue))
    for i, w in enumerate(raw):
        r.word(i, w)
    return r, order, count, about, by_position


def _settle_terms(r: _Reading, order: OrderCheck | None, count: CountCheck | None) -> None:
    """Terms that are all addressees are what is said; a claim whose words said are all function
    words ("says how are you") is those words; "the first/last thing … says is X": its target."""
    if r.terms and all(t.role == "addressee" for t in r.terms):
        for t in r.terms:
            t.role = "said"
    if r.content_cue is not None and r.said_tokens and not any(
            t.position > len(r.tokens) - len(r.said_tokens) - 1 for t in r.terms) and order is None and count is None:
        r.terms += [Term(text=w, norm=n, kind="word", position=p) for w, n, p in r.said_tokens]
    if order is not None and order.which and order.target is None:
        # "the first thing … says is X Y": its first word is X; "the last …": its last word (rules v5)
        said_terms = [t for t in r.terms if t.role == "said"]
        order.target = (said_terms[-1] if order.which == "last" else said_terms[0]).norm if said_terms else None


def analyze(fact: str) -> Claim:
    """Split ``fact`` into content terms (see the module docstring)."""
    text, removed = _strip_labels(strip_citations(fact).strip())
    text = _SHOWS_WORDS.sub("reads", text)  # "the screen shows the words X" is "the screen reads X"
    text, scene_text, excluded_text = _canonical(text)
    # "the first/last number …" before the time phrases take "first"/"last" away
    position = re.search(r"\b(first|last|final|smallest|largest|lowest|highest|biggest|" + _ORDINAL_ALT +
                         r")\s+(number|word|name|thing)s?\b", text, re.IGNORECASE)
    quoted = re.findall(r"[\"“”]([^\"“”]+)[\"“”]", text)
    outside, times = _strip_times(re.sub(r"[\"“”][^\"“”]+[\"“”]", " ", text))
    removed += times
    raw = tokenize(outside)
    r, order, count, about, by_position = _read_words(raw, outside, position)
    cc = r.content_cue
    _settle_terms(r, order, count)
    says_not = False
    if cc is not None:
        # a negation before the speech verb denies that it is said; after it, it is said
        says_not = any(0 <= k < cc for k in r.neg_at)
        r.negated = any(k > cc for k in r.neg_at)
    said_text = " ".join(raw[i] for i in range(len(raw)) if cc is not None and i > cc
                         and i not in r.addressee and r.lower[i] not in ORDER_WORDS)
    # a quote named beside other words said ('says "ask not" and then says what you can do …') is a
    # phrase referred to: its negation is its own, not the claim's (rules v5)
    outside_said = bool([t for t in r.terms if t.role == "said"])
    negated_before = r.negated
    for q in quoted:
        said_text = f"{said_text} {q}".strip()
        r.quote(q, outside_said, negated_before)
    speech = bool(quoted) or cc is not None or by_position or about is not None or count is not None
    claim = Claim(original=fact, cleaned=outside if not quoted else f"{outside} {' '.join(quoted)}", tokens=r.tokens,
                  terms=r.terms, negated=r.negated, speech=speech, quoted=quoted, removed=removed,
                  speech_presence=not quoted and cc is None and r.manner_cue is not None and about is None,
                  speakers=r.speakers, manner=r.manner, says_not=says_not, said=said_text, order=order, count=count)
    _read_parts(claim, raw, r.lower, cc, r.addressee, scene_text, excluded_text, position is not None)
    return claim


def _read_parts(claim: Claim, raw: list[str], lower: list[str], cue: int | None, addressee: set[int], scene: str,
                excluded: str, positional: bool) -> None:
    """The v4 parts of ``claim`` besides its terms (see the module docstring)."""
    if scene:
        claim.scene = [Term(text=w, norm=normalize_word(w), kind="word", position=-1, role="scene")
                       for w in tokenize(scene) if w.lower() not in STOP and w.lower() not in NEGATIONS and len(w) > 1]
    claim.excluded = [normalize_word(w) for w in tokenize(excluded) if w.lower() not in STOP]
    if cue is None:
        if any(w in TURN_NOUNS for w in lower):
            claim.turns = True
        return
    skip = ORDER_WORDS | NEGATIONS | {"appear", "appears", "seem", "seems", "one", "single", "only", "smallest",
                                      "largest", "lowest", "highest", "biggest", "number", "numbers", "word", "words",
                                      "name", "thing"}
    _read_speaker(claim, raw, lower, cue, skip, positional)
    person_pronouns = {"them", "him", "her", "us", "me"}
    to = [raw[i] for i in sorted(addressee) if lower[i] not in STOP or lower[i] in person_pronouns]
    if to and not all(w.lower() in GENERIC_AUDIENCE for w in to):
        claim.addressee = " ".join(raw[i] for i in sorted(addressee))
    verb = lower[cue]
    after = [lower[i] for i in range(cue + 1, len(lower)) if i not in addressee]
    claim.asks = (verb in ASK_VERBS and bool(after) and (after[0] in _WH or bool(claim.quoted))) or "question" in lower[:cue]
    claim.states = verb in STATE_VERBS
    claim.turns = (verb in STATE_VERBS - {"state", "states", "stated", "declare", "declares", "declared", "assert",
                                          "asserts", "asserted", "confirm", "confirms", "confirmed", "insist",
                                          "insists", "insisted"}
                   or any(w in TURN_NOUNS for w in lower[:cue])
                   or any(w in TURN_VERBS for w in after))
    claim.quantifiers = sorted({w for w in after if w in QUANTIFIER_WORDS})
    if claim.count is not None and claim.count.kind == "range" and claim.count.every:
        claim.quantifiers = [q for q in claim.quantifiers if q not in ("every", "each", "all")]
    for i in range(cue + 1, len(lower)):
        if is_superlative(lower[i]) and not (positional and i + 1 < len(lower) and lower[i + 1] in (
                "number", "numbers", "word", "words", "name", "thing")):
            before = lower[max(cue + 1, i - 3):i]
            hedged = "among" in before or ("one" in before and "of" in before)
            claim.superlatives.append((normalize_word(raw[i]), hedged))


def _read_speaker(claim: Claim, raw: list[str], lower: list[str], cue: int, skip: frozenset[str] | set[str],
                  positional: bool) -> None:
    """Who speaks: the words before the speech verb, less generic speakers ("the narrator", "the
    recording", "a broadcast"), tone words ("irritably", "a cheerful voice": the verifier's business)
    and ordinals of a position ("the third number"). Before a passive verb ("listeners are told to
    …") they are who is spoken to: a generic audience is no one in particular, anyone else is the
    addressee (rules v5).

    Example: "Listeners are told to ask …" → no speaker, no addressee."""
    from murgat.core.rules import _TONE

    persons = {"he", "she", "they", "him", "her", "them", "himself", "herself", "themselves"}
    who = [raw[i] for i in range(cue) if (lower[i] not in STOP or lower[i] in persons) and lower[i] not in GENERIC_SPEAKERS
           and lower[i] not in skip and not (positional and (lower[i] in ("first", "last", "final")
                                                             or lower[i] in ORDINALS))
           and not _TONE.fullmatch(lower[i]) and lower[i] not in DISPLAY_WORDS]
    who = [w for w in who if w.lower() not in TURN_NOUNS and w.lower() != "question"]
    if not who:
        return
    if cue > 0 and lower[cue - 1] in _PASSIVE_AUX:
        if not all(w.lower() in GENERIC_AUDIENCE for w in who) and claim.addressee is None:
            claim.addressee = " ".join(who)
        return
    claim.speaker = " ".join(who)


def _num(w: str) -> str | None:
    n = normalize_word(w)
    return n if n.isdigit() else None


def _order_and_count(raw: list[str], lower: list[str], cue: int | None) -> tuple[set[int], OrderCheck | None,
                                                                                 CountCheck | None]:
    """Order and count checks in a claim about speech, and the token indices they use up
    (not terms). Only what follows the speech verb is read, except "first"/"last" and "from N
    to M", which may stand anywhere ("The last number the voice says is zero"). An order or a
    count is decided from the transcript's word order, so its words must not be terms to hear.

    Example: "The voice counts down from nine to zero" → every index, no order, ``CountCheck("range",
    start="9", end="0", direction="down")``."""
    count = _range_count(raw, lower)
    if count is not None:
        return set(range(len(lower))), None, count
    if cue is None:
        return set(), None, None
    times = _times_count(raw, lower, cue)
    if times is not None:
        return times[0], None, times[1]
    skip, order = _order_check(raw, lower, cue)
    return skip, order, None


def _range_count(raw: list[str], lower: list[str]) -> CountCheck | None:
    """A count from N to M ("counts down from nine to zero", "goes from four down to one"), read
    only in a claim about counting or numbers: elsewhere "from nine to five" is what is said.

    Example: "The voice counts every number from one up to five" → ``CountCheck("range", start="1",
    end="5", direction="up", every=True)``."""
    n = len(lower)
    counting = any(w.startswith("count") or w in ("number", "numbers") for w in lower)  # "counts down", "the countdown"
    for i in range(n - 2 if counting else 0):
        if lower[i] != "from" or _num(raw[i + 1]) is None:
            continue
        j = i + 2
        while j < n and lower[j] in _DOWN | _UP:
            j += 1
        if j + 1 < n and lower[j] == "to" and _num(raw[j + 1]) is not None:
            direction = "down" if set(lower) & (_DOWN | {"countdown"}) else "up" if set(lower) & _UP else None
            return CountCheck("range", start=_num(raw[i + 1]), end=_num(raw[j + 1]), direction=direction,
                              every=bool(set(lower[:i]) & {"every", "each", "all"}))
    return None


def _times_count(raw: list[str], lower: list[str], cue: int) -> tuple[set[int], CountCheck] | None:
    """A count in what is said, and the indices it uses: a word said N times ("says go twice", "says
    go three times": the first content word said is the one counted) or N numbers or words said
    ("says three numbers"). ``None`` when what is said has no count.

    Example: "The voice says go twice" → ``({4}, CountCheck("times", times=2, word="go"))``."""
    said = list(range(cue + 1, len(lower)))
    for i in said:
        if lower[i] in _TIMES or (lower[i] == "times" and i - 1 > cue and _num(raw[i - 1]) is not None):
            times = _TIMES.get(lower[i]) or int(_num(raw[i - 1]) or 0)
            skip = {i, i - 1} if lower[i] == "times" else {i}
            word = next((normalize_word(raw[k]) for k in said if k not in skip and lower[k] not in STOP
                         and lower[k] not in ORDER_WORDS), None)
            return skip, CountCheck("times", times=times, word=word)
        if lower[i] in ("numbers", "words") and i - 1 > cue and _num(raw[i - 1]) is not None:
            return {i, i - 1}, CountCheck("numbers" if lower[i] == "numbers" else "words",
                                          times=int(_num(raw[i - 1]) or 0))
    return None


def _order_check(raw: list[str], lower: list[str], cue: int) -> tuple[set[int], OrderCheck | None]:
    """An order in what is said, and the indices it uses: the first order word after the speech verb
    ("before", "after", "then", "followed") splits it into two sides; without one, "first" or "last"
    anywhere picks one of the numbers (or words) said, and "number"/"word" are no terms.

    Example: "The first number the voice says is ten" → ``({2}, OrderCheck(which="first",
    among="number", marker="first"))``."""
    markers = [i for i in range(cue + 1, len(lower)) if lower[i] in ("before", "after", "then", "followed")]
    if markers:
        return set(), _order_sides(raw, lower, cue, markers[0])
    if "first" in lower or "last" in lower:
        which = "first" if "first" in lower else "last"
        order = OrderCheck(which=which, among="number" if {"number", "numbers"} & set(lower) else "word", marker=which)
        return {i for i, w in enumerate(lower) if w in ("number", "numbers", "word", "words")}, order
    return set(), None


def _order_sides(raw: list[str], lower: list[str], cue: int, m: int) -> OrderCheck | None:
    """The two sides of the order word at ``m``, less fillers ("says", "just", "and then"): "Y after
    X" says X is said first. "right", "immediately", … next to the order word make it adjacency
    (nothing said between); ``None`` when a side is empty ("says it after").

    Example: "the voice says nine right after ten" → ``OrderCheck(before=["10"], after=["9"],
    marker="after", adjacent=True)``."""
    n = len(lower)
    filler = ORDER_WORDS | {"say", "says", "said", "saying", "mention", "mentions", "mentioned", "and", "just",
                            "immediately", "by", "directly", "shortly"}
    near = set(lower[max(cue + 1, m - 1):m + 2]) & {"right", "immediately", "directly", "just", "straight"}
    filler -= {"and"}  # "and" is filler only at a side's edge ("… and then …"), never inside ("and science")

    def side(ks: range) -> list[str]:
        return [normalize_word(raw[k]) if lower[k] not in NEGATIONS else "not" for k in ks if lower[k] not in filler]

    left, right = side(range(cue + 1, m)), side(range(m + 1, n))
    while left and left[-1] == "and":  # "X and then Y": the "and" next to the order word joins the sides
        left = left[:-1]
    while right and right[0] == "and":
        right = right[1:]
    if not (left and right):
        return None
    order = OrderCheck(before=right, after=left, marker="after") if lower[m] == "after" else \
        OrderCheck(before=left, after=right, marker=lower[m])
    order.adjacent = bool(near)
    return order


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


#: irregular forms, so that "stole", "stolen" and "steals" meet at one lemma
_IRREGULAR = {"stole": "steal", "stolen": "steal", "took": "take", "taken": "take", "said": "say", "told": "tell",
              "spoke": "speak", "spoken": "speak", "went": "go", "gone": "go", "gave": "give", "given": "give",
              "came": "come", "saw": "see", "seen": "see", "made": "make", "found": "find", "began": "begin",
              "begun": "begin", "ran": "run", "won": "win", "biggest": "big", "bigger": "big", "largest": "large",
              "larger": "large", "smallest": "small", "smaller": "small", "tiniest": "tiny", "better": "good",
              "best": "good", "worse": "bad", "worst": "bad", "greatest": "great", "humour": "humor", "centre": "center"}
#: words that say the same thing in a report of speech (a small table, by lemma; not a thesaurus:
#: a word swapped for one outside its group is still a substitution)
SYNONYM_GROUPS: tuple[frozenset[str], ...] = tuple(frozenset(g.split()) for g in (
    "humor mood temper spirit", "bad foul grumpy sour terrible awful rotten", "good cheerful happy fine pleasant nice",
    "large big huge vast", "small little tiny", "world earth globe planet", "country nation", "steal take rob swipe",
    "someone somebody", "jewel gem", "listener audience crowd people viewer public", "begin start", "go proceed",
    "recommendation suggestion advice", "okay ok alright", "yes yeah yep", "room chamber",
    "tell say", "ask inquire enquire", "call shout cry", "count countdown"))
#: groups that say the opposite of each other (index pairs into SYNONYM_GROUPS)
ANTONYM_GROUPS = ((1, 2), (3, 4))


def lemma(w: str) -> str:
    """A rough lemma of a normalised word: irregular forms, then -ing/-ed/-e endings off
    ("placed", "places", "placing" → "plac"); enough to compare two words, not to print."""
    w = _IRREGULAR.get(w, w)
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
        if len(w) > 2 and w[-1] == w[-2]:
            w = w[:-1]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
        if len(w) > 2 and w[-1] == w[-2]:
            w = w[:-1]
    elif len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def _group(w: str) -> int | None:
    forms = {w, _IRREGULAR.get(w, w)}
    forms |= {f for f in (lemma(w),) if len(f) > 2}
    return next((i for i, g in enumerate(SYNONYM_GROUPS) if forms & g or {lemma(x) for x in g} & forms), None)


def match_meaning(term: str, vocab: set[str], singles: set[str] | None = None) -> tuple[str | None, str]:
    """``(matched word, how)``: :func:`match_term` ("exact"/"near"), then the same lemma
    ("lemma"), then the same group of :data:`SYNONYM_GROUPS` ("synonym"); ``(None, "")``."""
    hit, near = match_term(term, vocab, singles)
    if hit is not None:
        return hit, "near" if near else "exact"
    words = vocab if singles is None else singles
    if term.isdigit():
        return None, ""
    lt = lemma(term)
    for v in sorted(words):
        if not v.isdigit() and len(v) > 2 and lemma(v) == lt:
            return v, "lemma"
    g = _group(term)
    if g is not None:
        for v in sorted(words):
            if _group(v) == g:
                return v, "synonym"
    return None, ""


def antonym_heard(term: str, words: set[str]) -> str | None:
    """A heard word that says the opposite of ``term`` ("bad" for "cheerful"), or ``None``."""
    g = _group(term)
    if g is None:
        return None
    opposite = {b if a == g else a for a, b in ANTONYM_GROUPS if g in (a, b)}
    return next((v for v in sorted(words) if _group(v) in opposite), None)


def vocab(texts: list[str]) -> tuple[list[str], set[str]]:
    """Normalised tokens in order, and the set of them plus adjacent pairs joined
    ("clean rooms" also gives "cleanroom")."""
    toks: list[str] = []
    for t in texts:
        toks += ["not" if w.lower() in NEGATIONS else normalize_word(w) for w in tokenize(t)]
    vocab = set(toks)
    # two digits are never one number ("1 0" is not "10"): only words are joined
    vocab |= {normalize_word(a + b) for a, b in itertools.pairwise(toks) if not (a.isdigit() or b.isdigit())}
    return toks, vocab


def vocab_of(toks: list[str]) -> set[str]:
    """The set of ``toks`` plus adjacent word pairs joined (see :func:`vocab`)."""
    return set(toks) | {normalize_word(a + b) for a, b in itertools.pairwise(toks) if not (a.isdigit() or b.isdigit())}
