"""Made the run folders in this directory with murgat at commit c23eead (the main the command
lifecycle refactor started from), one per run command, so that every later version is checked to
resume them with nothing redone and every record byte for byte (tests/murgat/engine/test_legacy_folders.py).

Run from this directory: ``python make.py MEDIA_FOLDER`` (the bundled examples/media). Every judge
and model is a replay cassette (``*.cassette.jsonl``, hand-written ``match`` lines); settings are
partly non-default so the names of earlier versions' config.json are exercised. ``commands.json``
lists the argv of each folder ({media} stands for the media folder)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from murgat.cli import main


def m(task: str, inputs: dict, text: str) -> dict:
    return {"match": {"task": task, "inputs": inputs}, "output": {"text": text}}


def write(name: str, rows: list[dict]) -> str:
    Path(name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return name


Q = {"media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"], "gold": "B"}
LAUGH = "A man laughs loudly (audio, 0:03-0:05)."
ASKS = "She asks whether the lord of the universe is in (audio, 0:01-0:03)."
MOOD = "A man says he is in a bad humor (audio, 0:03-0:05)."
SEEN = "A woman talks on a telephone (visual, 0:04)."
GRUMPY = "So he is grumpy."


def label(kind: str, faithful: bool | None = None, reason: str = "checked") -> str:
    return json.dumps({"type": kind, "modality": "audio" if kind == "perception" else None, "faithful": faithful,
                       "reason": reason})


def inputs() -> None:
    write("questions.jsonl", [{**Q, "id": i} for i in ("q1", "q2", "q3")])
    write("responses.jsonl", [{**Q, "id": "r1", "response": f"{ASKS} {MOOD} {GRUMPY}\nAnswer: B"},
                              {**Q, "id": "r2", "response": f"{SEEN} {LAUGH}\nAnswer: A"},
                              {**Q, "id": "r3", "media": "missing.mp4", "response": f"{MOOD}\nAnswer: B"}])
    # score: verifiable unless reasoning; one fact per sentence; entailment yes but for the laugh
    write("score.cassette.jsonl", [m("verify", {"sentence": GRUMPY}, "no"), {"match": {"task": "verify"},
                                   "output": {"text": "yes"}},
                                   {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["F."]})}},
                                   m("entail", {"fact": "F."}, "yes")])
    # faithfulness: one description per media, one chain answer per chain
    chains = [[ASKS, MOOD, GRUMPY], [SEEN, LAUGH]]
    write("faith.cassette.jsonl", [m("faith_describe", {}, "A woman on a telephone; a man says he is in a bad humor."),
          *[m("faith_chain", {"steps": c}, json.dumps({"steps": [
              {"index": i, **json.loads(label("reasoning" if s == GRUMPY else "perception",
                                              None if s == GRUMPY else s != LAUGH))} for i, s in enumerate(c)]}))
            for c in chains]])
    # reflect: start from r1/r2, the detector (per step) flags the laugh, the model regenerates it
    write("from.jsonl", [{**Q, "id": "q1", "response": f"{ASKS} {MOOD} {GRUMPY}\nAnswer: B"},
                         {**Q, "id": "q2", "response": f"{LAUGH} {GRUMPY}\nAnswer: B"}])
    write("reflect.cassette.jsonl", [
        m("faith_describe", {}, "A phone call; a man in a bad humor."),
        *[m("faith_detect", {"step": s}, label("perception", True)) for s in (ASKS, MOOD)],
        m("faith_detect", {"step": LAUGH}, label("perception", False, "nobody laughs")),
        *[m("faith_detect", {"step": s}, label("reasoning")) for s in (GRUMPY,)],
        m("reflect_regenerate", {"id": "q2", "index": 0, "attempt": 1}, MOOD),
        m("reflect_continue", {"id": "q2", "index": 0}, f"{GRUMPY}\nAnswer: B"),
        m("generate", {"id": "q3"}, f"{MOOD} {GRUMPY}\nAnswer: B"),
        *[m("faith_chain", {"steps": c}, json.dumps({"steps": [{"index": i, **json.loads(label(
            "reasoning" if s == GRUMPY else "perception", None if s == GRUMPY else s != LAUGH))}
            for i, s in enumerate(c)]})) for c in ([ASKS, MOOD, GRUMPY], [LAUGH, GRUMPY], [MOOD, GRUMPY])]])
    # generate (and sweep): one answer per question, cited; a post-hoc run of those answers
    write("generate.cassette.jsonl", [{"match": {"task": "generate"}, "output": {"text": f"{MOOD}\nAnswer: B"}}])
    # program: one declarative logic program, its descriptions, the check and the synthesis
    prog = '''```python
def execute_command(video, options):
    mood = video.query("00:03-00:05", "What is said about his mood?", "audio")
    return answer_question("What mood is the man in?", [mood], options)
```'''
    write("program.cassette.jsonl", [
        {"match": {"task": "plan"}, "output": {"text": prog}},
        m("describe", {"instruction": "What is said about his mood?"}, "A man says he is in a bad humor."),
        {"match": {"task": "synthesize"}, "output": {"text": "He is in a bad humor [1].\nAnswer: B"}},
        {"match": {"task": "entail"}, "output": {"text": "yes"}},
        {"match": {"task": "verify"}, "output": {"text": "yes"}},
        {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["He is in a bad humor."]})}}])


COMMANDS = {
    "score-run": ["score", "responses.jsonl", "--judge", "replay:score.cassette.jsonl", "--out", "score-run", "--pad",
                  "0.5", "--decompose-context", "2", "--end-tolerance", "0.5", "--box-units", "1000",
                  "--max-citations-per-fact", "8", "--bootstrap", "200", "--temperature", "0.2"],
    "faith-run": ["faithfulness", "responses.jsonl", "--ids", "r1,r2,r3", "--judge", "replay:faith.cassette.jsonl",
                  "--out", "faith-run", "--max-frames", "4", "--fps", "0.5", "--bootstrap", "200", "--max-tokens",
                  "1500"],
    "reflect-run": ["reflect", "questions.jsonl", "--model", "replay:reflect.cassette.jsonl", "--detector",
                    "replay:reflect.cassette.jsonl", "--from", "from.jsonl", "--out", "reflect-run", "--k", "2",
                    "--max-frames", "4", "--bootstrap", "200"],
    "reflect-gen-run": ["reflect", "questions.jsonl", "--ids", "q3", "--model", "replay:reflect.cassette.jsonl",
                        "--detector", "self", "--judge", "replay:reflect.cassette.jsonl", "--out", "reflect-gen-run",
                        "--mode", "cite", "--bootstrap", "200"],
    "program-run": ["program", "questions.jsonl", "--ids", "q1,q2", "--variant", "logic-declarative",
                    "--planner", "replay:program.cassette.jsonl", "--out", "program-run", "--score", "--max-ops", "12"],
    "generate-run": ["generate", "questions.jsonl", "--model", "replay:generate.cassette.jsonl", "--out",
                     "generate-run", "--effort", "low", "--max-frames", "16"],
    "generate-file.jsonl": ["generate", "questions.jsonl", "--model", "replay:generate.cassette.jsonl", "--mode",
                            "base", "--out", "generate-file.jsonl"],
    "posthoc-run": ["generate", "questions.jsonl", "--model", "replay:generate.cassette.jsonl", "--mode", "posthoc",
                    "--base", "generate-file.jsonl", "--out", "posthoc-run"],
    "sweep-run": ["sweep", "questions.jsonl", "--model", "replay:generate.cassette.jsonl", "--judge",
                  "replay:score.cassette.jsonl", "--efforts", "low,high", "--out", "sweep-run"],
}


if __name__ == "__main__":
    media = str(Path(sys.argv[1]).resolve())
    here = Path(__file__).resolve().parent
    os.chdir(here)
    inputs()
    codes = {}
    for name, argv in COMMANDS.items():
        codes[name] = main([*argv, "--media-root", media, "--quiet", "--json"])
        print(name, codes[name], file=sys.stderr)
    Path("commands.json").write_text(json.dumps({"commit": "c23eead", "commands": COMMANDS, "exit": codes},
                                                indent=2) + "\n")
