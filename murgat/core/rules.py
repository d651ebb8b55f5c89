"""Rule-based stand-ins for the LLM stages, used by the offline ``embedded`` judge and by
dry-run estimates. They are simple on purpose and labelled as rules wherever they are used;
they are not research-grade judgements.

* verifiability: a sentence is verifiable unless it reads as an inference, a hedge, an
  answer statement, a heading or a question. Interpretation and evaluation are the
  writer's judgements ("this suggests", "it seems", "must have"); a plain report of what
  someone says or does ("She says somebody must have stolen the jewels", "Kennedy urges his
  listeners to ask …") is a statement about the media, whatever the reported words are —
  only the words before the reporting verb, and a clause the writer sets off after them
  ("…, likely from nine to zero"), are read for hedges and interpretation. A hedge or an
  evaluation anywhere else in the sentence ("appears to say", "a powerful and moving line",
  "an impressive description") makes it not verifiable (rules v4);
* decomposition: one fact per clause, where clauses end at inline citation groups; each
  fact carries the groups inside its clause (an end-dumped group therefore goes to the
  whole sentence when the sentence has no inline group).
"""

from __future__ import annotations

import re

from murgat.core.citations import find_groups, strip_citations

#: a label that opens a line of reasoning, not part of what is claimed (the embedded judge's claim
#: reader strips it too: murgat.judges.claims)
DISCOURSE_LABEL = re.compile(
    r"^\s*(?:(?:step|point|observation|evidence|reason|fact|claim)\s*\d+|reasoning|rationale|answer|final answer|"
    r"observation|evidence|analysis|thought|thinking|conclusion|summary|note|explanation|description|perception|"
    r"\d+|[a-z])\s*[:.)\]-]\s+", re.IGNORECASE)

_INFERENCE = re.compile(
    r"^\s*(?:so|therefore|thus|hence|overall|in conclusion|in summary|this (?:means|suggests|implies|indicates)|"
    r"it (?:seems|appears)|based on|given (?:this|that|these)|by (?:doing|taking|using|following)|one can (?:infer|see|tell))\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:probably|likely|unlikely|possibly|perhaps|might|may be|maybe|seems? to|appears? to|apparently|seemingly|"
    r"supposedly|allegedly|looks like|i think|i believe|presumably|"
    r"the (?:correct |final )?answer|option [a-j]\b|choice [a-j]\b|could|would|it is (?:difficult|hard|impossible) to|"
    r"(?:can|cannot|can't) be (?:seen|determined|inferred|said)|needs? to|should|ought to|must (?:have|be)\b)",
    re.IGNORECASE,
)
#: an explanatory participle or relative clause that interprets rather than reports
# ("adding a touch of style", "showcasing the excitement", "which suggests that …")
_INTERPRETIVE_START = re.compile(
    r"^\s*(?:and\s+)?(?:adding|making|allowing|showcasing|giving|creating|providing|highlighting|emphasi[sz]ing|"
    r"suggesting|indicating|reflecting|contributing|enhancing|ensuring|helping|enabling|demonstrating|offering|"
    r"symboli[sz]ing|conveying|evoking|capturing|signifying|as they|as it|which (?:suggests|indicates|implies|could|"
    r"may|might|adds|makes|creates|gives|allows|is (?:typical|common|likely))|such as|in order to|so that)\b",
    re.IGNORECASE,
)
_INTERPRETIVE = re.compile(
    r"\b(?:suggests?|indicates?|implies|impl(?:y|ying)|atmosphere|ambiance|benefits?|enjoy(?:s|ing|ment)?|"
    r"appealing|excitement|enthusiasm|sense of|personality|opportunit(?:y|ies)|typical(?:ly)?|usually|often|"
    r"generally|commonly|known (?:to|for)|purpose|reason(?:s)? (?:for|behind|why)|significant|importance|important|"
    r"great time|having fun|love for|passion)\b",
    re.IGNORECASE,
)


#: the writer's evaluation of what is shown or said ("a powerful and moving line", "an impressive
#: description"); "moving" only where it cannot be motion ("deeply moving", "powerful and moving")
_EVALUATIVE = re.compile(
    r"\b(?:powerful|impressive|beautiful(?:ly)?|stunning|dramatic(?:ally)?|emotional(?:ly)?|inspiring|inspirational|"
    r"remarkabl[ey]|amazing(?:ly)?|fascinating|striking(?:ly)?|iconic|memorable|touching|compelling|eloquent(?:ly)?|vivid(?:ly)?|"
    r"breathtaking|lovely|wonderful(?:ly)?|excellent|poignant|heartfelt|magnificent|spectacular|awe-inspiring|"
    r"brilliant(?:ly)?|gripping|haunting|charming|delightful|rousing|stirring|masterful(?:ly)?|"
    r"(?:deeply|very|so|truly)\s+moving|moving\s+and|and\s+moving)\b",
    re.IGNORECASE,
)
#: tone words: how a voice sounds or a person feels ("irritably", "a cheerful voice", "sounds annoyed")
#: is the writer's reading of the delivery, which neither the words heard nor the picture settle
_TONE = re.compile(
    r"\b(?:irritat(?:ed|edly)|irritabl[ey]|annoyed(?:ly)?|angr(?:y|ily)|cheerful(?:ly)?|cheer(?:y|ily)|happ(?:y|ily)|"
    r"sad(?:ly)?|excited(?:ly)?|nervous(?:ly)?|anxious(?:ly)?|frustrated(?:ly)?|furious(?:ly)?|gleeful(?:ly)?|"
    r"grump(?:y|ily)|sarcastic(?:ally)?|impatient(?:ly)?|exasperated(?:ly)?|joyful(?:ly)?|playful(?:ly)?|"
    r"stern(?:ly)?|upbeat|enthusiastic(?:ally)?|bored|worried(?:ly)?|irate(?:ly)?|testy|testily|brusque(?:ly)?|"
    r"curt(?:ly)?|snappish(?:ly)?|gruff(?:ly)?|sheepish(?:ly)?|smug(?:ly)?|wistful(?:ly)?|tense(?:ly)?)\b",
    re.IGNORECASE,
)
_HEDGE_START = re.compile(r"^\s*(?:probably|likely|possibly|perhaps|maybe|apparently|presumably|seemingly|supposedly)\b",
                          re.IGNORECASE)

#: a speaker, then a reporting verb: what follows is what is reported, not the writer's judgement
_SPEAKER = re.compile(
    r"^\s*(?:(?i:the|a|an|one|another|one of the)\s+)?(?:[a-z]+\s+){0,2}?(?:(?i:he|she|they|i|we|someone|somebody)|"
    r"narrator|narration|speaker|speakers|voice|voices|man|woman|boy|girl|person|people|host|presenter|reporter|"
    r"announcer|commentator|caller|operator|character|crowd|[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)(?:\s+himself|\s+herself)?"
    r"\s+(?:also\s+|then\s+|again\s+)?(?:says|said|tells|told|asks|asked|mentions|mentioned|states|stated|replies|"
    r"replied|answers|answered|explains|explained|announces|announced|declares|declared|urges|urged|adds|added|"
    r"remarks|remarked|reports|reported|notes|noted|describes|described|warns|warned|reminds|reminded|addresses|"
    r"addressed|introduces|introduced|counts|counted|calls out|exclaims|exclaimed|whispers|shouts|repeats|repeated|"
    r"recalls|recalled|insists|insisted|claims|claimed|promises|promised)\b")


#: the writer's own judgements that make a sentence not verifiable, in the order they are tried
#: (the first that matches gives the reason)
_WRITERS_JUDGEMENTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (_INFERENCE, "rule: reads as an inference or conclusion"),
    (_HEDGE, "rule: hedged, normative, or about the answer rather than the media"),
    (_INTERPRETIVE_START, "rule: an explanatory clause that interprets what is shown"),
    (_INTERPRETIVE, "rule: interpretation, evaluation or generalisation rather than description"),
    (_EVALUATIVE, "rule: the writer's evaluation (an evaluative word about what is shown or said)"),
    (_TONE, "rule: the writer's reading of a tone or mood (a tone word about how it is said or felt)"),
)


def rule_verifiable(sentence: str) -> tuple[bool, str]:
    """``(verifiable, reason)`` by the rules in the module docstring."""
    text = strip_citations(sentence).strip()
    # a fronted clause ("While a worker stands on a lift, the narrator says …") is read as the writer's, and
    # the report after it as a report
    front = re.match(r"^\s*(?:while|whilst|when|as|after|before)\b[^,]{1,120},\s*", text, re.IGNORECASE)
    lead = front.end() if front else 0
    report = _SPEAKER.match(text[lead:])
    if report and not _INFERENCE.search(text) and not text.endswith(("?", ":")):
        head = text[:lead + report.end()]
        # a trailing participle clause (", showcasing …") is the writer's again
        tail_clauses = re.split(r"[,;]\s*", text[lead + report.end():])[1:]
        if not (_HEDGE.search(head) or _INTERPRETIVE.search(head) or _EVALUATIVE.search(head) or _TONE.search(head)
                or any(_INTERPRETIVE_START.search(c) or _HEDGE_START.search(c) for c in tail_clauses)):
            return True, "rule: a plain report of what someone says or does (what is reported is judged by entailment)"
    words = re.findall(r"[A-Za-z0-9']+", text)
    if not words:
        return False, "rule: no words"
    if len(words) < 3 and not re.match(r"^\s*(?:in|on|at|with|by|of|to|for)\b", text, re.IGNORECASE):
        # a bare fragment of a list ("white", "or flowers") still names something seen
        return True, "rule: a short descriptive fragment"
    if len(words) < 4 and re.match(r"^\s*(?:in|on|at)\s+(?:the\s+)?\w+$", text, re.IGNORECASE):
        return False, "rule: a bare place phrase (a heading)"
    if text.endswith("?"):
        return False, "rule: a question"
    if text.endswith(":"):
        return False, "rule: a heading"
    for pattern, reason in _WRITERS_JUDGEMENTS:
        if pattern.search(text):
            return False, reason
    return True, "rule: a plain statement about the media"


def rule_decompose(sentence: str) -> list[str]:
    """Facts of ``sentence``, each written with the citation groups it inherits."""

    label = DISCOURSE_LABEL.match(sentence)
    if label and len(sentence) - label.end() >= 3:
        sentence = sentence[label.end():]  # "Reasoning: …" — the label is not part of any fact
    groups = find_groups(sentence)
    if not groups:
        return [strip_citations(sentence)] if strip_citations(sentence) else []
    facts: list[str] = []
    pos = 0
    for g in groups:
        clause = sentence[pos : g.span[0]]
        tail = sentence[g.span[1] :]
        if not re.search(r"\w", tail) or re.search(r"\w", clause):
            text = clause.strip(" ,;").strip()
            text = re.sub(r"^(?:and|but|while|then|as)\s+", "", text, flags=re.IGNORECASE)
            if text:
                facts.append(f"{text} {sentence[g.span[0]:g.span[1]]}".strip())
            elif facts:
                facts[-1] = f"{facts[-1]} {sentence[g.span[0]:g.span[1]]}"
        pos = g.span[1]
    rest = sentence[pos:].strip(" .,;")
    if re.search(r"[A-Za-z]{2,}", rest):
        facts.append(rest)
    return [f if f.rstrip().endswith((".", "!", "?")) else f.rstrip() + "." for f in facts]
