"""The probes: claims about the probe clip whose answers murgat knows.

Each probe is a claim, one citation of the clip, and the answer an honest judge that sees and
hears exactly the cited segment must give. They come in pairs, a "yes" that a judge which does
not perceive cannot pass and a "no" that a judge which answers without perceiving (from the
text, or "yes" to everything) cannot pass:

========================  =========================================  ========  ====================================
probe                     claim (citation)                           expected  checks
========================  =========================================  ========  ====================================
hearing                   the voice says W1 (audio 0:01-0:03)        yes       the audio reaches the judge
hearing_other             the voice says W-never (audio 0:01-0:03)   no        it does not answer audio from text
seeing                    N1 is shown (visual 0:02)                  yes       the pictures reach the judge
seeing_other              N-never is shown (visual 0:02)             no        it does not answer pictures from text
time_seeing               N2 is shown (visual 0:06)                  yes       the frame at the cited time is sent
time_seeing_elsewhere     N2 is shown (visual 0:02)                  no        only the cited moment is shown
time_hearing              the voice says W2 (audio 0:05-0:07)        yes       the audio at the cited time is sent
time_hearing_elsewhere    the voice says W2 (audio 0:01-0:03)        no        only the cited span is heard
modality_visual           the voice says W1 (visual 0:01-0:03)       no        pictures carry no sound
modality_audio            N1 is shown (audio 0:01-0:03)              no        sound carries no pictures
order                     N1 is shown before N2 (visual 0:00-0:07)   yes       frames arrive in time order
order_reversed            N2 is shown before N1 (visual 0:00-0:07)   no        a reordered range is noticed
========================  =========================================  ========  ====================================

W1/W2 are the words said at 1.3 s and 5.3 s, N1/N2 the numbers shown in the first and second
half (:mod:`murgat.judging.probes.clip`). ``whole_media``: whether the probe still means something when
the judge is shown the whole clip instead of the cited segment (``faithfulness`` chain
labelling); time and one-modality probes do not.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from murgat.judging.probes.clip import ProbeClip

#: bump when a probe's claim, citation or expected answer changes (2: the chain probes are several
#: chains in seeded orders, :func:`chain_orders`)
PROBES_VERSION = "2"

#: chains a chain-labelling judge is probed with (each holds every chain probe, in its own order)
N_CHAINS = 2

Check = Literal["hearing", "seeing", "time", "one_modality", "order"]


class Probe(BaseModel):
    """One claim about the probe clip with the answer an honest judge gives."""

    name: str
    checks: Check
    claim: str = Field(description="the fact, without its citation")
    citation: str = Field(description="the citation group, e.g. (audio, 0:01-0:03)")
    expected: Literal["yes", "no"]
    whole_media: bool = Field(description="still meaningful when the judge sees the whole clip")
    failure_means: str = Field(description="what a wrong answer says about the judge or the path to it")


def _said(word: str) -> str:
    return f'The voice says "{word}".'


def _shown(number: int) -> str:
    # "58 is displayed.", not "The number 58 is shown on the screen.": the embedded judge counts
    # every content word ("number", "screen") as a term to read, and OCR reads only "58"
    return f"{number} is displayed."


def probe_set(clip: ProbeClip) -> list[Probe]:
    """The probes for ``clip`` (its numbers and words), in the order they are reported."""
    w1, w2 = clip.words
    n1, n2 = clip.numbers
    a1, a2, v1, v2, rng = "(audio, 0:01-0:03)", "(audio, 0:05-0:07)", "(visual, 0:02)", "(visual, 0:06)", "(visual, 0:00-0:07)"
    return [
        Probe(name="hearing", checks="hearing", claim=_said(w1), citation=a1, expected="yes", whole_media=True,
              failure_means="the judge did not hear the word: the server may drop audio parts, or the model cannot hear"),
        Probe(name="hearing_other", checks="hearing", claim=_said(clip.other_word), citation=a1, expected="no",
              whole_media=True, failure_means="the judge confirms a word that is never said: it answers audio claims "
              "without hearing them (from the text, or yes to everything)"),
        Probe(name="seeing", checks="seeing", claim=_shown(n1), citation=v1, expected="yes", whole_media=True,
              failure_means="the judge did not see the number: the server may drop images, or they arrive unreadable"),
        Probe(name="seeing_other", checks="seeing", claim=_shown(clip.other_number), citation=v1, expected="no",
              whole_media=True, failure_means="the judge confirms a number that is never shown: it answers visual "
              "claims without looking at the pictures"),
        Probe(name="time_seeing", checks="time", claim=_shown(n2), citation=v2, expected="yes", whole_media=False,
              failure_means="the frame at the cited time did not reach the judge (wrong seeking or a wrong time)"),
        Probe(name="time_seeing_elsewhere", checks="time", claim=_shown(n2), citation=v1, expected="no",
              whole_media=False, failure_means="the judge was shown more than the cited moment, or it guesses: a "
              "citation of 0:02 confirmed what is shown only from 0:04"),
        Probe(name="time_hearing", checks="time", claim=_said(w2), citation=a2, expected="yes", whole_media=False,
              failure_means="the audio at the cited time did not reach the judge (wrong slicing or a wrong time)"),
        Probe(name="time_hearing_elsewhere", checks="time", claim=_said(w2), citation=a1, expected="no",
              whole_media=False, failure_means="the judge heard more than the cited span, or it guesses: a citation of "
              "0:01-0:03 confirmed a word said at 0:05"),
        Probe(name="modality_visual", checks="one_modality", claim=_said(w1), citation="(visual, 0:01-0:03)",
              expected="no", whole_media=False, failure_means="a visual citation confirmed speech: the sound track "
              "reached the judge with the pictures, or the judge answers from something other than what it is shown"),
        Probe(name="modality_audio", checks="one_modality", claim=_shown(n1), citation=a1, expected="no",
              whole_media=False, failure_means="an audio citation confirmed what is on screen: pictures reached the "
              "judge with the sound, or the judge guesses"),
        Probe(name="order", checks="order", claim=f"{n1} is displayed before {n2}.", citation=rng,
              expected="yes", whole_media=True, failure_means="the frames of a range did not reach the judge in time "
              "order, or too few frames were sent (--max-frames, --fps) to see both numbers"),
        Probe(name="order_reversed", checks="order", claim=f"{n2} is displayed before {n1}.",
              citation=rng, expected="no", whole_media=True, failure_means="the judge saw the frames out of order (a "
              "server that reorders images or drops their time labels), or it answers without looking"),
    ]


def _rank(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


def _alternates(pattern: Sequence[str]) -> bool:
    return all(a != b for a, b in itertools.pairwise(pattern))


def chain_orders(probes: Sequence[Probe], seed: int, n_chains: int = N_CHAINS) -> list[list[int]]:
    """The orders (indices into ``probes``) of the chains a chain-labelling judge is probed with.

    One chain in a fixed order has a fixed pattern of expected answers (the probe table alternates
    yes, no), which a judge that labels steps by position passes without looking. So every chain
    holds every probe (as many yes as no), in an order drawn from the probe ``seed`` by SHA-256,
    redrawn until no chain's pattern alternates and every two chains' patterns differ in at least
    two positions: any rule of position alone then gets a probe wrong in some chain, a rule of
    always the same answer gets half wrong, and one of step length cannot tell ``order`` from
    ``order_reversed`` (the same text lengths, opposite answers)."""
    n = len(probes)
    if n < 2 or n_chains < 2:
        return [list(range(n))] * max(n_chains, 1)
    for attempt in range(10_000):
        orders = [sorted(range(n), key=lambda i: _rank(f"chain:{seed}:{attempt}:{k}:{i}")) for k in range(n_chains)]
        pats = [[probes[i].expected for i in o] for o in orders]
        apart = all(sum(x != y for x, y in zip(a, b, strict=True)) >= 2 for j, a in enumerate(pats) for b in pats[j + 1:])
        if apart and not any(_alternates(p) for p in pats):
            return orders
    raise ValueError("no chain orders tell position from content for these probes (all expect the same answer?)")
