"""Rule-based stand-ins for the LLM stages, used by the offline ``embedded`` judge and by
dry-run estimates. They are simple on purpose and labelled as rules wherever they are used;
they are not research-grade judgements.

* verifiability: a sentence is verifiable unless it reads as an inference, a hedge, an
  answer statement, a heading or a question;
* decomposition: one fact per clause, where clauses end at inline citation groups; each
  fact carries the groups inside its clause (an end-dumped group therefore goes to the
  whole sentence when the sentence has no inline group).
"""

from __future__ import annotations

import re

from murgat.citations import find_groups, strip_citations

_INFERENCE = re.compile(
    r"^\s*(?:so|therefore|thus|hence|overall|in conclusion|in summary|this (?:means|suggests|implies|indicates)|"
    r"it (?:seems|appears)|based on|given (?:this|that|these))\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:probably|likely|possibly|perhaps|might|may be|maybe|seems? to|i think|i believe|presumably|"
    r"the (?:correct |final )?answer|option [a-j]\b|choice [a-j]\b)",
    re.IGNORECASE,
)


def rule_verifiable(sentence: str) -> tuple[bool, str]:
    """``(verifiable, reason)`` by the rules in the module docstring."""
    text = strip_citations(sentence).strip()
    words = re.findall(r"[A-Za-z0-9']+", text)
    if len(words) < 3:
        return False, "rule: fewer than three words"
    if text.endswith("?"):
        return False, "rule: a question"
    if text.endswith(":"):
        return False, "rule: a heading"
    if _INFERENCE.search(text):
        return False, "rule: reads as an inference or conclusion"
    if _HEDGE.search(text):
        return False, "rule: hedged, or about the answer rather than the media"
    return True, "rule: a plain statement about the media"


def rule_decompose(sentence: str) -> list[str]:
    """Facts of ``sentence``, each written with the citation groups it inherits."""
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
