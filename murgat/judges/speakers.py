"""Who speaks: whether the offline judge may take "he says X", "she asks X" or "a man says X" as
checked, from the speaker turns of the transcript or from the number of voices in the window.

Why: murgat's bundled ASR gives no speaker turns, so rules v4 left every named or described
speaker unchecked, and most facts of ordinary answers ("He says the train leaves at nine") were
``unknown`` on a file with one voice. Rules v5.1: where one voice speaks — in the cited window, or
in the whole file — whoever the claim calls "he" or "she" is that voice, so the claim is decided on
what is said. The count comes from the pitch of the speech (:mod:`murgat.media.voices`) and is
carried by the evidence (a ``voices`` part of each cited audio segment, in the request's digest).

What stays unchecked, with the reason saying what would decide it: a name or a description the
voice cannot confirm ("Kennedy", "an operator", "the man in the suit"); several voices, or a count
the pitch cannot make; "he" or "a man" said of a voice whose pitch is not clearly a man's; and "she"
or "a woman" always (a man declaiming reaches a woman's pitch: on the labelled set, "She says ask not
…" of Kennedy's voice was a false yes until this rule).
"""

from __future__ import annotations

from typing import Any

from murgat.judges.claims import Claim
from murgat.judges.heard import Heard

#: speaker words one voice decides, and the sex each names (None: either)
_ONE_VOICE_WORDS: dict[str, str | None] = {
    "he": "man", "him": "man", "himself": "man", "man": "man", "guy": "man", "gentleman": "man", "male": "man",
    "she": "woman", "her": "woman", "herself": "woman", "woman": "woman", "lady": "woman", "female": "woman",
}


def _one_voice(hd: Heard) -> tuple[dict[str, Any] | None, str]:
    """The voice count that says one voice speaks in every cited audio segment (the count of the
    window, or of the file when the window's was unsure), or ``None`` and why not."""
    counts = hd.voice_counts
    if not counts:
        return None, "the transcript has no speaker turns and no voice count was made (the sound channel is off)"
    files = [c.get("file") for c in counts]
    one_file = all(f is not None and f.get("voices") == "one" for f in files)
    for c in counts:
        if c.get("voices") != "one":
            win = c.get("window") or {}
            what = "several voices speak" if win.get("voices") == "several" else "how many voices speak is unsure"
            return None, f"{what} in the cited audio ({win.get('reason', '')}); one voice would decide it"
    if len(counts) > 1 and not one_file:
        return None, "each cited audio segment has one voice, but not necessarily the same one"
    c = counts[0]
    win = c.get("window") or {}
    return (win if win.get("voices") == "one" else c.get("file")), ""


def who_speaks(claim: Claim, hd: Heard) -> str | None:
    """``None`` when who speaks is checked (no speaker named, one voice by the speaker turns, or
    one voice by pitch that the claim's "he"/"she" fits); else what is open, for the reason.

    Example: "He says the train leaves at nine" where one voice with a median pitch of 105 Hz speaks
    → ``None`` (checked); the same with two voices an octave apart → "several voices speak …"."""
    from murgat.media.voices import MAN_MAX_HZ, WOMAN_MIN_HZ, pitch_sex

    if not claim.speaker or hd.single_voice():
        return None
    who = repr(claim.speaker)
    if hd.has_turns():
        return f"who says it ({who}: the words heard come from more than one voice)"
    words = [w.lower() for w in claim.speaker.split()]
    if any(w not in _ONE_VOICE_WORDS for w in words):
        return (f"who says it ({who}: a name or description; the transcript has no speaker turns to tell who "
                "speaks, and a voice's pitch does not say who it is)")
    count, why = _one_voice(hd)
    if count is None:
        return f"who says it ({who}: {why})"
    sexes = {_ONE_VOICE_WORDS[w] for w in words} - {None}
    if len(sexes) > 1:
        return f"who says it ({who}: the fact names both a man and a woman as the speaker)"
    if sexes == {"woman"}:
        # a man raising his voice reaches a woman's pitch (Kennedy's inaugural: a median of 245 Hz), so a high
        # pitch never confirms "she"; a median under a man's bound is never a woman's speaking voice
        return (f"who says it ({who}: one voice speaks, but a voice's pitch cannot tell a woman from a man raising "
                "his voice; speaker turns would decide it)")
    heard = pitch_sex(count.get("median_hz"))
    if sexes and heard not in sexes:
        want = next(iter(sexes))
        clear = f"under {MAN_MAX_HZ:.0f} Hz" if want == "man" else f"over {WOMAN_MIN_HZ:.0f} Hz"
        return (f"who says it ({who}: one voice speaks, but its median pitch, {count.get('median_hz')} Hz, is not "
                f"clearly a {want}'s ({clear})")
    return None
