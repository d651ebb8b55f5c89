"""Make the replay cassettes of the README's offline examples (``examples/cassettes/*.jsonl``).

Run from the repository root after changing a prompt, a request's inputs or an offline command of
the README::

    python examples/make_cassettes.py            # rewrite examples/cassettes/ and examples/questions.jsonl
    python examples/make_cassettes.py --check    # exit 1 when what is shipped differs from what would be made

Where the answers come from. Nothing here was written by a model. Every answer below was written
by hand from what the bundled media really hold (``examples/media/LICENSES.md``): the human
captions of ``friday.mp4`` (``friday.vtt``) and ``nasa_13013.mp4`` (``nasa_13013.captions.srt``),
the known text of ``jfk.flac`` (JFK's 1961 inaugural address), the stream list of each file
(``bikes.mp4`` has no sound track, ``flower.webm``'s is silent, ``jfk.flac`` has no picture) and
frames looked at by eye. The clip ``friday.mp4`` is from *His Girl Friday* (1940): the woman in
the hat and striped suit is Hildy Johnson (Rosalind Russell), so the "Hildy!" at 0:00 is said to
her, not by her. The chains of ``examples/responses.jsonl`` contain deliberate slips (a flag
"seen" in a sound-only file, a horn "heard" in a file with no sound, a time past the end); the
judges below call them what they are. The answering model's answers (``model.jsonl``) are
hand-written too, with the slips a model makes at low effort (a wrong time, a cited sound track
that does not exist), so the sweep has something to find.

How the cassettes are made. Each README offline command that names a cassette
(``replay:examples/cassettes/NAME.jsonl``) is run, in a scratch copy of ``examples/``, exactly as
the README writes it, except that every such provider is this file's scripted judge
(:meth:`Book.answer` reads the tables below) wrapped by the replay judge's recorder, which writes each
exchange into ``NAME.jsonl`` as it is made: so a cassette holds exactly the requests its commands
send, with all their inputs. A request the tables cannot answer is listed at the end (with all
its inputs) and nothing is written; so is a table entry no command asked for (a stale answer).
The recorder's request key (``key``) is left out of the shipped lines: it digests decoded frames
and audio samples, which differ between ffmpeg builds, and the full inputs identify every request
of these examples (the replay judge matches on them when no key is given). Lines are sorted, so a
remake is byte-identical.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CASSETTES = HERE / "cassettes"
#: the fenced blocks of README.md that hold the offline commands (```` ```bash offline ````)
BLOCK = re.compile(r"^```bash offline[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
SPEC = re.compile(r"replay:examples/cassettes/([\w.-]+\.jsonl)")


# ----- the README's offline commands (the test that runs them reads them with these functions too) -----


def offline_blocks(readme: str) -> list[str]:
    """The bodies of the README's ```` ```bash offline ```` blocks, in order."""
    return BLOCK.findall(readme)


def offline_commands(readme: str) -> list[str]:
    """Every command of the offline blocks as written (a line ending in ``\\`` continues; ``#`` comments and
    blank lines are skipped)."""
    out: list[str] = []
    for body in offline_blocks(readme):
        for line in body.replace("\\\n", " ").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


def argv_of(command: str) -> list[str]:
    """``murgat ARGS…`` → ``[ARGS…]`` (every offline command is a murgat command)."""
    words = shlex.split(command)
    if not words or words[0] != "murgat":
        raise ValueError(f"an offline command must start with 'murgat': {command!r}")
    return words[1:]


# ----- the hand-written answers -----

#: the labelling judge's description of each file (``faith_describe``, the "grounding" variant)
DESCRIPTIONS = {
    "friday.mp4": (
        "A six-second black-and-white clip from an old film. At the right a woman in a tall dark hat and a striped "
        "jacket leans on a desk, smiling and talking to two women seated at a switchboard at the left, who wear "
        "headsets; a round wall clock and a panel of the switchboard are behind them. Sound: a voice calls out "
        "\"Hildy!\" (0:00-0:01), then \"How are you?\" (0:01); a woman asks \"Tell me, is the lord of the universe "
        "in?\" (0:01.5-0:03); the answer is \"Yes, he's in - in a bad humor\" (0:03-0:04.3), then \"Somebody "
        "must've stolen the crown jewels\" (0:04.3-0:06). The picture does not show who says each line."),
    "nasa_13013.mp4": (
        "About 13 seconds of NASA footage in a dark cleanroom. A large array of gold hexagonal mirror segments stands "
        "at the right; at the left a worker in a white cleanroom suit stands in the basket of an orange lift, shown "
        "from afar and, around 0:05-0:07, close up beside the mirrors. A narrator says: \"This is the optical and "
        "science segment of the Webb space telescope in one of the largest cleanrooms in the world at NASA's "
        "Goddard Space Flight Center in Greenbelt, Maryland\" (0:00-0:12), then begins \"This half of the "
        "observatory element successfully\"."),
    "jfk.flac": (
        "A sound recording with no picture, 11 seconds long. A man's voice says: \"And so my fellow Americans, ask "
        "not what your country can do for you, ask what you can do for your country\" (0:00-0:10), the words of "
        "John F. Kennedy's 1961 inaugural address."),
    "bikes.mp4": (
        "Ten seconds of city street shots with no sound track: a white vehicle seen from above (0:00-0:01), a man in "
        "a suit passing in front of blurred traffic (0:01-0:02), cars and a taxi waiting in traffic with their "
        "headlights on (0:02-0:04), a van with its brake lights on while a cyclist in a helmet rides past (0:04-0:06), "
        "a bicycle parked against a metal railing by a street of brick houses (0:06-0:07.5), a person walking past a "
        "bicycle parked against a wall (0:07.5-0:09) and, at the very end, bicycle wheels close up."),
    "flower.webm": (
        "A five-second time-lapse close-up of a plant: a red bud among green leaves with purple edges opens into a "
        "red flower with yellow stamens. The sound track is silent."),
}


def _p(modality: str, faithful: bool, reason: str) -> dict[str, Any]:
    return {"type": "perception", "modality": modality, "faithful": faithful, "reason": reason}


def _r(reason: str) -> dict[str, Any]:
    return {"type": "reasoning", "modality": None, "faithful": None, "reason": reason}


#: one label per step text: the faithfulness judge's (``faith_chain``) and the reflect detector's (``faith_step``)
STEP_LABELS: dict[str, dict[str, Any]] = {
    # friday.mp4 (examples/responses.jsonl: friday-mood)
    "A woman in a hat stands at a desk in front of switchboard operators (visual, 0:01).":
        _p("visual", True, "a woman in a tall hat leans on a desk beside two seated switchboard operators"),
    "She greets them by calling out \"Hildy!\" (audio, 0:00-0:01).":
        _p("audio", False, "\"Hildy!\" is called out at 0:00-0:01, but nothing shows the woman in the hat calling it: "
                           "she is Hildy, the one being greeted"),
    "She asks whether the lord of the universe is in (audio, 0:01-0:03).":
        _p("audio", True, "\"Tell me, is the lord of the universe in?\" is asked at 0:01.5-0:03"),
    "An operator replies that he is in, in a bad humor (audio, 0:03-0:05).":
        _p("audio", True, "\"Yes, he's in - in a bad humor\" answers the question at 0:03-0:04.3"),
    "Another says somebody must have stolen the crown jewels (audio, 0:04-0:06; visual, 0:05).":
        _p("both", True, "\"Somebody must've stolen the crown jewels\" is said at 0:04.3-0:06"),
    "So the man is in a bad mood.": _r("a conclusion from the reply"),
    # nasa_13013.mp4 (nasa-where)
    "The narrator says this is the optical and science segment of the Webb space telescope (audio, 0:00-0:04).":
        _p("audio", True, "the narration opens with these words (0:00-0:05)"),
    "It sits in one of the largest cleanrooms in the world (audio, 0:04-0:08).":
        _p("audio", True, "\"in one of the largest cleanrooms in the world\" is said at 0:04-0:08"),
    "The narrator names NASA's Goddard Space Flight Center in Greenbelt, Maryland (audio, 0:08-0:12).":
        _p("audio", True, "\"at NASA's Goddard Space Flight Center in Greenbelt, Maryland\" is said at 0:08-0:12"),
    "A worker in a white suit stands on an orange lift (visual, 0:06).":
        _p("visual", True, "a worker in a white cleanroom suit stands in an orange lift basket"),
    "The mirror segments are hexagonal.": _p("visual", True, "the gold mirror segments are hexagons"),
    # jfk.flac (jfk-ask)
    "The speaker addresses his fellow Americans (audio, 0:00-0:03).":
        _p("audio", True, "\"And so my fellow Americans\" is said at 0:00-0:02"),
    "He tells them to ask not what their country can do for them (audio, 0:02-0:08).":
        _p("audio", True, "\"ask not what your country can do for you\" is said at 0:03-0:07"),
    "He holds up a flag (visual, 0:05).":
        _p("visual", False, "the file is a sound recording with no picture: no flag or gesture can be seen"),
    "He asks what they can do for their country (audio, 0:08-0:11).":
        _p("audio", True, "\"ask what you can do for your country\" is said at 0:08-0:10"),
    # bikes.mp4 (bikes-sound)
    "Blurred cars stand in traffic with their headlights on (visual, 0:02).":
        _p("visual", True, "blurred cars wait in traffic with their headlights on at 0:02"),
    "A horn honks (audio, 0:03).": _p("audio", False, "the file has no sound track: no horn can be heard"),
    "The scene is dim (visual, 0:12).":
        _p("visual", False, "the video ends at 0:10, and its last shots are in ordinary daylight"),
    # flower.webm (flower-color)
    "A red flower bud sits among purple-edged leaves (visual, 0:02).":
        _p("visual", True, "a red bud among green leaves with purple edges"),
    "It is probably a garden plant.": _r("a guess from general knowledge, not something seen"),
    # reflect: the model's replacements and continuations (REGENERATED, CONTINUED below)
    "Someone calls out \"Hildy!\" as the scene opens (audio, 0:00-0:01).":
        _p("audio", True, "\"Hildy!\" is called out at 0:00-0:01"),
    "The recording has sound only, no picture (audio, 0:00-0:11).":
        _p("audio", True, "the file has a sound track and no video stream"),
    "A cyclist in a helmet rides past a van (visual, 0:05).":
        _p("visual", True, "a cyclist in a helmet rides past a van with its brake lights on"),
    "A person walks past a bicycle parked against a wall (visual, 0:08).":
        _p("visual", True, "a person in dark trousers walks past a bicycle parked against a wall"),
}

#: the reflecting model's replacement for a rejected step: (item, rejected step) → new step (accepted at once)
REGENERATED = {
    ("friday-mood", "She greets them by calling out \"Hildy!\" (audio, 0:00-0:01)."):
        "Someone calls out \"Hildy!\" as the scene opens (audio, 0:00-0:01).",
    ("jfk-ask", "He holds up a flag (visual, 0:05)."): "The recording has sound only, no picture (audio, 0:00-0:11).",
    ("bikes-sound", "A horn honks (audio, 0:03)."): "A cyclist in a helmet rides past a van (visual, 0:05).",
}
#: the model's continuation after the replaced step, by item (the rest of the chain and its answer)
CONTINUED = {
    "friday-mood": ("She asks whether the lord of the universe is in (audio, 0:01-0:03). An operator replies that he "
                    "is in, in a bad humor (audio, 0:03-0:05). Another says somebody must have stolen the crown jewels "
                    "(audio, 0:04-0:06; visual, 0:05). So the man is in a bad mood.\nAnswer: B"),
    "jfk-ask": "He asks what they can do for their country (audio, 0:08-0:11).\nAnswer: B",
    "bikes-sound": "A person walks past a bicycle parked against a wall (visual, 0:08).\nAnswer: A",
}

#: the answering model (``generate``/``sweep``, cite mode): (item, effort) → answer
ANSWERS = {
    ("friday-mood", "high"): (
        "A woman in a tall hat leans on a desk beside two switchboard operators wearing headsets (visual, 0:02). "
        "She asks whether the lord of the universe is in (audio, 0:01-0:03). An operator answers that he is in, in a "
        "bad humor (audio, 0:03-0:05). So the man is in a bad mood.\nAnswer: B"),
    ("friday-mood", "low"): "An operator says that he is in a bad humor (audio, 0:01-0:02). So he is in a bad mood.\n"
                            "Answer: B",
    ("nasa-where", "high"): (
        "The narrator introduces the optical and science segment of the Webb space telescope (audio, 0:00-0:08). He "
        "says it is in one of the largest cleanrooms in the world, at NASA's Goddard Space Flight Center in Greenbelt, "
        "Maryland (audio, 0:04-0:12). A worker in a white cleanroom suit stands on an orange lift beside gold "
        "hexagonal mirrors (visual, 0:06).\nAnswer: C"),
    ("nasa-where", "low"): "The narrator names NASA's Goddard Space Flight Center in Greenbelt, Maryland (audio, "
                           "0:08-0:12).\nAnswer: C",
    ("jfk-ask", "high"): (
        "The speaker addresses his fellow Americans (audio, 0:00-0:03). He tells them to ask not what their country "
        "can do for them (audio, 0:02-0:08) but what they can do for their country (audio, 0:07-0:11).\nAnswer: B"),
    ("jfk-ask", "low"): "The speaker says to ask what you can do for your country (audio, 0:07-0:11).\nAnswer: B",
    ("bikes-sound", "high"): (
        "Blurred cars wait in traffic with their headlights on (visual, 0:02-0:04). A cyclist in a helmet rides past "
        "a van (visual, 0:05). A person walks past a bicycle parked against a wall (visual, 0:08).\nAnswer: A"),
    ("bikes-sound", "low"): "Cars stand in traffic with their headlights on (visual, 0:03). A horn honks (audio, "
                            "0:03).\nAnswer: A",
    ("flower-color", "high"): (
        "A red bud among green leaves with purple edges opens into a red flower with yellow stamens (visual, "
        "0:01-0:05).\nAnswer: B"),
    ("flower-color", "low"): "The bud is red (visual, 0:02).\nAnswer: B",
}

#: the scoring judge (``sweep``'s): is a sentence (its citations stripped) a claim about the media? (``verify``)
VERIFY: dict[str, str] = {
    **dict.fromkeys([
        "A woman in a tall hat leans on a desk beside two switchboard operators wearing headsets.",
        "She asks whether the lord of the universe is in.", "An operator answers that he is in, in a bad humor.",
        "An operator says that he is in a bad humor.",
        "The narrator introduces the optical and science segment of the Webb space telescope.",
        "He says it is in one of the largest cleanrooms in the world, at NASA's Goddard Space Flight Center in "
        "Greenbelt, Maryland.",
        "A worker in a white cleanroom suit stands on an orange lift beside gold hexagonal mirrors.",
        "The narrator names NASA's Goddard Space Flight Center in Greenbelt, Maryland.",
        "The speaker addresses his fellow Americans.",
        "He tells them to ask not what their country can do for them but what they can do for their country.",
        "The speaker says to ask what you can do for your country.",
        "Blurred cars wait in traffic with their headlights on.", "A cyclist in a helmet rides past a van.",
        "A person walks past a bicycle parked against a wall.", "Cars stand in traffic with their headlights on.",
        "A horn honks.",
        "A red bud among green leaves with purple edges opens into a red flower with yellow stamens.",
        "The bud is red."], "yes"),
    # conclusions drawn from other sentences
    **dict.fromkeys(["So the man is in a bad mood.", "So he is in a bad mood."], "no"),
}
#: the scoring judge's atomic facts of a sentence (``decompose``; each fact keeps the citations of its clause)
DECOMPOSE: dict[str, list[str]] = {
    "A woman in a tall hat leans on a desk beside two switchboard operators wearing headsets (visual, 0:02).": [
        "A woman in a tall hat leans on a desk (visual, 0:02).",
        "Two switchboard operators wearing headsets sit beside the woman (visual, 0:02)."],
    "She asks whether the lord of the universe is in (audio, 0:01-0:03).": [
        "The woman asks whether the lord of the universe is in (audio, 0:01-0:03)."],
    "An operator answers that he is in, in a bad humor (audio, 0:03-0:05).": [
        "An operator answers that the lord of the universe is in, in a bad humor (audio, 0:03-0:05)."],
    "An operator says that he is in a bad humor (audio, 0:01-0:02).": [
        "An operator says that he is in a bad humor (audio, 0:01-0:02)."],
    "The narrator introduces the optical and science segment of the Webb space telescope (audio, 0:00-0:08).": [
        "The narrator introduces the optical and science segment of the Webb space telescope (audio, 0:00-0:08)."],
    "He says it is in one of the largest cleanrooms in the world, at NASA's Goddard Space Flight Center in Greenbelt, "
    "Maryland (audio, 0:04-0:12).": [
        "The narrator says the segment is in one of the largest cleanrooms in the world (audio, 0:04-0:12).",
        "The narrator says the cleanroom is at NASA's Goddard Space Flight Center in Greenbelt, Maryland "
        "(audio, 0:04-0:12)."],
    "A worker in a white cleanroom suit stands on an orange lift beside gold hexagonal mirrors (visual, 0:06).": [
        "A worker in a white cleanroom suit stands on an orange lift (visual, 0:06).",
        "The lift is beside gold hexagonal mirrors (visual, 0:06)."],
    "The narrator names NASA's Goddard Space Flight Center in Greenbelt, Maryland (audio, 0:08-0:12).": [
        "The narrator names NASA's Goddard Space Flight Center in Greenbelt, Maryland (audio, 0:08-0:12)."],
    "The speaker addresses his fellow Americans (audio, 0:00-0:03).": [
        "The speaker addresses his fellow Americans (audio, 0:00-0:03)."],
    "He tells them to ask not what their country can do for them (audio, 0:02-0:08) but what they can do for their "
    "country (audio, 0:07-0:11).": [
        "The speaker tells his fellow Americans to ask not what their country can do for them (audio, 0:02-0:08).",
        "The speaker tells his fellow Americans to ask what they can do for their country (audio, 0:07-0:11)."],
    "The speaker says to ask what you can do for your country (audio, 0:07-0:11).": [
        "The speaker says to ask what you can do for your country (audio, 0:07-0:11)."],
    "Blurred cars wait in traffic with their headlights on (visual, 0:02-0:04).": [
        "Blurred cars wait in traffic with their headlights on (visual, 0:02-0:04)."],
    "A cyclist in a helmet rides past a van (visual, 0:05).": [
        "A cyclist in a helmet rides past a van (visual, 0:05)."],
    "A person walks past a bicycle parked against a wall (visual, 0:08).": [
        "A person walks past a bicycle (visual, 0:08).", "The bicycle is parked against a wall (visual, 0:08)."],
    "Cars stand in traffic with their headlights on (visual, 0:03).": [
        "Cars stand in traffic with their headlights on (visual, 0:03)."],
    "A red bud among green leaves with purple edges opens into a red flower with yellow stamens (visual, "
    "0:01-0:05).": [
        "A red bud is among green leaves with purple edges (visual, 0:01-0:05).",
        "The bud opens into a red flower with yellow stamens (visual, 0:01-0:05)."],
    "The bud is red (visual, 0:02).": ["The bud is red (visual, 0:02)."],
    # its citation is invalid (the file has no sound track), so no entailment is asked
    "A horn honks (audio, 0:03).": ["A horn honks (audio, 0:03)."],
}
def _bullets(*calls: str) -> str:
    """A narrative plan: one call per bullet."""
    return "\n".join(f"- {c}" for c in calls)


#: the planner's programs: (item, variant) → the answer (``plan``)
PLANS: dict[tuple[str, str], str] = {
    ("friday-mood", "logic-declarative"): """```python
def execute_command(video, options):
    ask = video.query("00:01-00:03", "What does the woman ask?", "audio")
    reply = video.query("00:03-00:05", "What is said in reply about the man?", "audio")
    return answer_question("According to the operator, what mood is the man in?", [ask, reply], options)
```""",
    ("nasa-where", "logic-declarative"): """```python
def execute_command(video, options):
    room = video.query("00:04-00:08", "What does the narrator say about the room?", "audio")
    place = video.query("00:08-00:12", "Which place does the narrator name?", "audio")
    seen = video.query("00:06", "What is shown?", "visual")
    return answer_question("Where is the telescope segment shown in the video?", [room, place, seen], options)
```""",
    ("jfk-ask", "logic-declarative"): """```python
def execute_command(video, options):
    urged = video.query("00:02-00:11", "What does the speaker urge the listeners to ask?", "audio")
    return answer_question("What does the speaker urge people to ask?", [urged], options)
```""",
    ("bikes-sound", "logic-declarative"): """```python
def execute_command(video, options):
    street = video.query("00:02-00:04", "What is in the street?", "visual")
    later = video.query("00:08-00:09", "What is shown?", "visual")
    return answer_question("What is shown?", [street, later], options)
```""",
    ("flower-color", "logic-declarative"): """```python
def execute_command(video, options):
    bud = video.query("00:00-00:02", "What colour is the flower bud?", "visual")
    return answer_question("What colour is the flower bud?", [bud], options)
```""",
    ("friday-mood", "narrative-imperative"): _bullets(
        'describe(find("someone says the man is in a bad humor", "audio"), "audio", '
        '"What is said about the man\'s mood?")',
        'synthesize("Decide what mood the man is in, according to the operator.")'),
    ("nasa-where", "narrative-imperative"): _bullets(
        'describe(find("the narrator names a place", "audio"), "audio", "Which place does the narrator name?")',
        'synthesize("Decide where the telescope segment is.")'),
    ("jfk-ask", "narrative-imperative"): _bullets(
        'describe(find("ask what you can do for your country", "audio"), "audio", '
        '"What does the speaker urge the listeners to ask?")',
        'synthesize("Decide what the speaker urges people to ask.")'),
    ("bikes-sound", "narrative-imperative"): _bullets(
        'describe(find("cars in traffic", "visual"), "visual", "What is in the street?")',
        'synthesize("Decide what is shown.")'),
    ("flower-color", "narrative-imperative"): _bullets(
        'describe(find("a flower bud", "visual"), "visual", "What colour is the flower bud?")',
        'synthesize("Decide the colour of the bud.")'),
}
#: the executor's searches: (query, modality) → time ranges in seconds, from the captions and frames (``find``)
FOUND: dict[tuple[str, str], list[list[float]]] = {
    ("someone says the man is in a bad humor", "audio"): [[3.0, 4.3]],
    ("the narrator names a place", "audio"): [[8.35, 12.47]],
    ("ask what you can do for your country", "audio"): [[7.7, 10.4]],
    ("cars in traffic", "visual"): [[2.0, 4.0]],
    ("a flower bud", "visual"): [[0.0, 2.0]],
}
#: the executor's descriptions: (instruction, evidence labels) → description (``describe``)
DESCRIBED: dict[tuple[str, tuple[str, ...]], str] = {
    ("What does the woman ask?", ("audio 0:01-0:03",)):
        "A voice says \"How are you?\", then a woman asks whether the lord of the universe is in.",
    ("What is said in reply about the man?", ("audio 0:03-0:05",)): "A voice answers that he is in, in a bad humor.",
    ("What is said about the man's mood?", ("audio 0:03-0:04.3",)):
        "A voice says that he is in, in a bad humor.",
    ("What does the narrator say about the room?", ("audio 0:04-0:08",)):
        "The narrator says the telescope is in one of the largest cleanrooms in the world.",
    ("Which place does the narrator name?", ("audio 0:08-0:12",)):
        "The narrator names NASA's Goddard Space Flight Center in Greenbelt, Maryland.",
    ("Which place does the narrator name?", ("audio 0:08.35-0:12.47",)):
        "The narrator names NASA's Goddard Space Flight Center in Greenbelt, Maryland.",
    ("What is shown?", ("visual 0:06",)): ("A worker in a white cleanroom suit stands in the basket of an orange lift "
                                          "next to a wall of large hexagonal mirror segments."),
    ("What does the speaker urge the listeners to ask?", ("audio 0:02-0:11",)):
        "A man tells his listeners to ask not what their country can do for them but what they can do for their country.",
    ("What does the speaker urge the listeners to ask?", ("audio 0:07.7-0:10.4",)):
        "A man tells his listeners to ask what they can do for their country.",
    ("What is in the street?", ("visual 0:02-0:04",)):
        "Cars wait in traffic with their headlights on; one has a taxi sign, and a van shows its brake lights.",
    ("What is shown?", ("visual 0:08-0:09",)): "A person walks past a bicycle parked against a wall on a paved street.",
    ("What colour is the flower bud?", ("visual 0:00-0:02",)): "The bud is red, among green leaves with purple edges.",
}
#: the entailment judge: (claim, evidence labels) → yes/no (``entail``: ``score``'s and ``program``'s runtime check)
ENTAIL: dict[tuple[str, tuple[str, ...]], str] = {
    # sweep: the facts of the model's answers, each against its own cited segment
    ("A woman in a tall hat leans on a desk.", ("visual 0:02",)): "yes",
    ("Two switchboard operators wearing headsets sit beside the woman.", ("visual 0:02",)): "yes",
    ("The woman asks whether the lord of the universe is in.", ("audio 0:01-0:03",)): "yes",
    ("An operator answers that the lord of the universe is in, in a bad humor.", ("audio 0:03-0:05",)): "yes",
    # the low-effort slip: 0:01-0:02 holds "How are you?" and the start of the question, not the reply
    ("An operator says that he is in a bad humor.", ("audio 0:01-0:02",)): "no",
    ("The narrator introduces the optical and science segment of the Webb space telescope.", ("audio 0:00-0:08",)):
        "yes",
    ("The narrator says the segment is in one of the largest cleanrooms in the world.", ("audio 0:04-0:12",)): "yes",
    ("The narrator says the cleanroom is at NASA's Goddard Space Flight Center in Greenbelt, Maryland.",
     ("audio 0:04-0:12",)): "yes",
    ("A worker in a white cleanroom suit stands on an orange lift.", ("visual 0:06",)): "yes",
    ("The lift is beside gold hexagonal mirrors.", ("visual 0:06",)): "yes",
    ("The narrator names NASA's Goddard Space Flight Center in Greenbelt, Maryland.", ("audio 0:08-0:12",)): "yes",
    ("The speaker addresses his fellow Americans.", ("audio 0:00-0:03",)): "yes",
    ("The speaker tells his fellow Americans to ask not what their country can do for them.", ("audio 0:02-0:08",)):
        "yes",
    ("The speaker tells his fellow Americans to ask what they can do for their country.", ("audio 0:07-0:11",)): "yes",
    ("The speaker says to ask what you can do for your country.", ("audio 0:07-0:11",)): "yes",
    ("Blurred cars wait in traffic with their headlights on.", ("visual 0:02-0:04",)): "yes",
    ("A cyclist in a helmet rides past a van.", ("visual 0:05",)): "yes",
    ("A person walks past a bicycle.", ("visual 0:08",)): "yes",
    ("The bicycle is parked against a wall.", ("visual 0:08",)): "yes",
    ("Cars stand in traffic with their headlights on.", ("visual 0:03",)): "yes",
    ("A red bud is among green leaves with purple edges.", ("visual 0:01-0:05",)): "yes",
    ("The bud opens into a red flower with yellow stamens.", ("visual 0:01-0:05",)): "yes",
    ("The bud is red.", ("visual 0:02",)): "yes",
    # program: the runtime check of every description against the segments it describes
    **{(d, ev): "yes" for (_, ev), d in DESCRIBED.items()},
}

#: the executor's conclusions: (instruction, description numbers) → reasoning with [n] markers (``synthesize``)
SYNTHESIZED: dict[tuple[str, tuple[int, ...]], str] = {
    ("According to the operator, what mood is the man in?", (1, 2)):
        ("The woman asks whether the lord of the universe is in [1], and the reply is that he is in, in a bad humor "
         "[2]. So the man is in a bad mood.\nAnswer: B"),
    ("Where is the telescope segment shown in the video?", (1, 2, 3)):
        ("The narrator says the telescope is in one of the largest cleanrooms in the world [1], at NASA's Goddard "
         "Space Flight Center in Greenbelt, Maryland [2]. A worker in a cleanroom suit is seen beside its mirrors "
         "[3].\nAnswer: C"),
    ("What does the speaker urge people to ask?", (1,)):
        ("The speaker urges his listeners to ask not what their country can do for them but what they can do for "
         "their country [1].\nAnswer: B"),
    ("What is shown?", (1, 2)): ("Cars wait in traffic with their lights on [1], and a person walks past a parked "
                                 "bicycle [2]. The video shows a city street with traffic.\nAnswer: A"),
    ("What colour is the flower bud?", (1,)): "The bud is red [1].\nAnswer: B",
    ("Decide what mood the man is in, according to the operator.", (1,)):
        "The operator says he is in, in a bad humor [1]. So he is in a bad mood.\nAnswer: B",
    ("Decide where the telescope segment is.", (1,)):
        "The narrator names NASA's Goddard Space Flight Center in Greenbelt, Maryland [1].\nAnswer: C",
    ("Decide what the speaker urges people to ask.", (1,)):
        "He urges them to ask what they can do for their country [1].\nAnswer: B",
    ("Decide what is shown.", (1,)): "Cars wait in traffic [1], so the video shows a street with traffic.\nAnswer: A",
    ("Decide the colour of the bud.", (1,)): "The bud is red [1].\nAnswer: B",
}


# ----- the scripted judge -----


class Book:
    """Answers requests from the tables above; remembers what was asked and what it could not answer."""

    def __init__(self) -> None:
        self.used: set[tuple[str, Any]] = set()
        self.misses: list[str] = []

    def _get(self, table_name: str, table: dict[Any, Any], key: Any, req: Any) -> Any:
        if key in table:
            self.used.add((table_name, key))
            return table[key]
        self.misses.append(f"{table_name}[{key!r}]  (task {req.task!r}, inputs "
                           f"{json.dumps(req.inputs, ensure_ascii=False, default=str)})")
        return None

    def answer(self, req: Any) -> str:
        t, x = req.task, req.inputs
        if t == "faith_describe":
            return self._get("DESCRIPTIONS", DESCRIPTIONS, x["media"], req) or ""
        if t == "faith_chain":
            rows = [self._get("STEP_LABELS", STEP_LABELS, s, req) for s in x["steps"]]
            return json.dumps({"steps": [{"index": i, **(r or {})} for i, r in enumerate(rows)]}, ensure_ascii=False)
        if t in ("faith_step", "faith_detect"):
            return json.dumps(self._get("STEP_LABELS", STEP_LABELS, x["step"], req) or {}, ensure_ascii=False)
        if t in ("reflect_regenerate", "reflect_regenerate_again"):
            return self._get("REGENERATED", REGENERATED, (x["id"], x["rejected"]), req) or ""
        if t == "reflect_continue":
            return self._get("CONTINUED", CONTINUED, x["id"], req) or ""
        if t == "generate":
            return self._get("ANSWERS", ANSWERS, (x["id"], x["effort"]), req) or ""
        if t == "verify":
            return self._get("VERIFY", VERIFY, x["sentence"], req) or ""
        if t == "decompose":
            facts = self._get("DECOMPOSE", DECOMPOSE, x["sentence"], req)
            return json.dumps({"facts": facts or []}, ensure_ascii=False)
        if t == "entail":
            return self._get("ENTAIL", ENTAIL, (x["fact"], tuple(x["evidence"])), req) or ""
        if t == "plan":
            return self._get("PLANS", PLANS, (x["id"], x["variant"]), req) or ""
        if t == "find":
            return json.dumps({"ranges": self._get("FOUND", FOUND, (x["query"], x["modality"]), req) or []})
        if t == "describe":
            return self._get("DESCRIBED", DESCRIBED, (x["instruction"], tuple(x["evidence"])), req) or ""
        if t == "synthesize":
            return self._get("SYNTHESIZED", SYNTHESIZED, (x["instruction"], tuple(x["descriptions"])), req) or ""
        self.misses.append(f"a task no table answers: {t!r} (inputs {json.dumps(x, default=str)})")
        return ""

    def unused(self) -> list[str]:
        """Table entries no command asked for (stale answers)."""
        tables: dict[str, dict[Any, Any]] = {"DESCRIPTIONS": DESCRIPTIONS, "STEP_LABELS": STEP_LABELS, "REGENERATED": REGENERATED,
                                             "CONTINUED": CONTINUED, "ANSWERS": ANSWERS, "VERIFY": VERIFY,
                                             "DECOMPOSE": DECOMPOSE, "ENTAIL": ENTAIL, "PLANS": PLANS, "FOUND": FOUND,
                                             "DESCRIBED": DESCRIBED, "SYNTHESIZED": SYNTHESIZED}
        return [f"{name}[{key!r}]" for name, table in tables.items() for key in table if (name, key) not in self.used]


def _recording_command(command: Any, book: Book, record_dir: Path) -> Any:
    """``command`` whose providers named ``replay:examples/cassettes/NAME.jsonl`` are the book's scripted
    judge, recorded into ``record_dir/NAME.jsonl``; any other provider is made as usual."""
    from murgat.engine.roles import JudgeMaker
    from murgat.judges.replay import RecordingJudge
    from murgat.judges.scripted import ScriptedJudge

    class BookMaker(JudgeMaker):
        def __init__(self, made: JudgeMaker) -> None:
            super().__init__(made.cache_path, dry_run=made.dry_run)
            self._book_judges: dict[str, Any] = {}

        def __call__(self, spec: str, options: dict[str, str], config: Any) -> Any:
            found = SPEC.fullmatch(spec)
            if found is None:
                return super().__call__(spec, options, config)
            key = json.dumps([spec, options, config.model_dump(mode="json")], sort_keys=True, default=str)
            if key not in self._book_judges:
                inner = ScriptedJudge(book.answer, model="examples/make_cassettes.py", cache=self.cache, config=config)
                self._book_judges[key] = RecordingJudge(inner, record_dir / found.group(1))
            return self._book_judges[key]

        @property
        def made(self) -> list[Any]:
            return [*super().made, *self._book_judges.values()]

    base = type(command)
    recorded = type(base.__name__, (base,), {"judge_maker": lambda self, s: BookMaker(base.judge_maker(self, s))})
    return recorded()


def _run_recorded(argv: list[str], book: Book, record_dir: Path) -> int:
    """Run one README command in this process with the book's judges (and so the commands it runs)."""
    from murgat.api import COMMANDS, Commands
    from murgat.cli import build_parser
    from murgat.engine.command import run_command
    from murgat.engine.errors import CommandError

    class RecordedCommands(Commands):
        def run(self, kind: str, values: dict[str, Any]) -> Any:
            if kind not in COMMANDS:
                return super().run(kind, values)
            command, cls = COMMANDS[kind]
            return run_command(_recording_command(command, book, record_dir), cls.model_validate(values), echo=False,
                               others=self)

    name = argv[0]
    command, cls = COMMANDS[name]
    # no progress bar (not a deciding setting: the requests are the README command's)
    settings = cls.from_args(build_parser().parse_args(argv)).model_copy(update={"quiet": True})
    try:
        done = run_command(_recording_command(command, book, record_dir), settings, echo=False,
                           others=RecordedCommands())
    except CommandError as exc:
        print(f"  error: {exc.message}", file=sys.stderr)
        return exc.code
    return done.code


#: the order of tasks in a cassette (readers find a stage's lines together)
TASK_ORDER = ("generate", "reflect_regenerate", "reflect_regenerate_again", "reflect_continue", "faith_describe",
              "faith_segment", "faith_chain", "faith_step", "faith_detect", "plan", "find", "describe", "synthesize",
              "verify", "decompose", "entail")


def cassette_lines(recorded: Path) -> list[str]:
    """A recorded cassette as shipped: ``match`` (task and every input) and the answer's text, one line per
    request, sorted by task then inputs (see the module docstring: no request key, no usage)."""
    from murgat.core.jsonl import dumps, iter_lines, loads_line

    rows: dict[str, dict[str, Any]] = {}
    for _, line in iter_lines(recorded):
        if not line.strip():
            continue
        rec = loads_line(line)
        row = {"match": rec["match"], "output": {"text": rec["output"]["text"]}}
        ident = json.dumps(row["match"], sort_keys=True, ensure_ascii=False)
        if ident in rows and rows[ident] != row:
            raise ValueError(f"{recorded.name}: two different answers to one request {ident[:200]}")
        rows[ident] = row

    def order(item: tuple[str, dict[str, Any]]) -> tuple[int, str]:
        task = item[1]["match"]["task"]
        return (TASK_ORDER.index(task) if task in TASK_ORDER else len(TASK_ORDER), item[0])

    return [dumps(row) + "\n" for _, row in sorted(rows.items(), key=order)]


def questions_lines() -> list[str]:
    """``examples/questions.jsonl``: the example's questions without the responses (the input of ``generate``,
    ``sweep``, ``program`` and ``reflect``)."""
    keep = ("id", "media", "question", "options", "gold")
    out = []
    for line in (HERE / "responses.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            out.append(json.dumps({k: rec[k] for k in keep if k in rec}, ensure_ascii=False) + "\n")
    return out


def make(scratch: Path) -> dict[str, str]:
    """Run every README offline command that names a cassette, in ``scratch``; the cassettes' text by file
    name (``questions.jsonl`` included). Raises ``SystemExit(1)`` naming every miss or stale answer."""
    commands = [c for c in offline_commands((ROOT / "README.md").read_text(encoding="utf-8")) if SPEC.search(c)]
    if not commands:
        raise SystemExit("README.md has no ```bash offline block naming a replay:examples/cassettes/ cassette")
    work = scratch / "work"
    shutil.copytree(HERE, work / "examples", ignore=shutil.ignore_patterns("cassettes", "__pycache__", "*.py"))
    (work / "examples" / "questions.jsonl").write_text("".join(questions_lines()), encoding="utf-8")
    record_dir = scratch / "recorded"
    record_dir.mkdir()
    book = Book()
    here = Path.cwd()
    os.chdir(work)
    try:
        for command in commands:
            print(f"$ {command}", file=sys.stderr)
            code = _run_recorded(argv_of(command), book, record_dir)
            if code != 0 and not book.misses:
                raise SystemExit(f"the command exited {code}: {command}")
    finally:
        os.chdir(here)
    problems = [f"no answer for {m}" for m in book.misses] + [f"never asked: {u}" for u in book.unused()]
    if problems:
        print("\n".join(problems), file=sys.stderr)
        raise SystemExit(1)
    out = {p.name: "".join(cassette_lines(p)) for p in sorted(record_dir.glob("*.jsonl"))}
    out["questions.jsonl"] = "".join(questions_lines())
    return out


def shipped_path(name: str) -> Path:
    return HERE / name if name == "questions.jsonl" else CASSETTES / name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with what is shipped instead of writing")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="murgat-cassettes-") as tmp:
        made = make(Path(tmp))
    if args.check:
        stale = [n for n, text in made.items() if not shipped_path(n).exists()
                 or shipped_path(n).read_text(encoding="utf-8") != text]
        extra = sorted({p.name for p in CASSETTES.glob("*.jsonl")} - set(made))
        for n in stale:
            print(f"differs from what would be made: {shipped_path(n).relative_to(ROOT)}", file=sys.stderr)
        for n in extra:
            print(f"no README command uses {shipped_path(n).relative_to(ROOT)}", file=sys.stderr)
        return 1 if stale or extra else 0
    CASSETTES.mkdir(exist_ok=True)
    for p in CASSETTES.glob("*.jsonl"):
        if p.name not in made:
            p.unlink()
    for name, text in made.items():
        shipped_path(name).write_text(text, encoding="utf-8")
        print(f"wrote {shipped_path(name).relative_to(ROOT)} ({len(text.encode()):,} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

