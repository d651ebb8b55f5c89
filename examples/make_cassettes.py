"""Make the replay cassettes of the README's offline examples (``examples/cassettes/*.jsonl``).

Run from the repository root after changing a prompt, a request's inputs or an offline command of
the README::

    python examples/make_cassettes.py            # rewrite examples/cassettes/ and examples/questions.jsonl
    python examples/make_cassettes.py --check    # exit 1 when what is shipped differs from what would be made

Where the answers come from. Nothing here was written by a model. Every answer (the tables of
``examples/cassette_tables.toml``, beside this file: data, read by :func:`load_tables`) was written
by hand from what the bundled media really hold (``examples/media/LICENSES.md``): the human
captions of ``friday.mp4`` (``friday.vtt``) and ``nasa_13013.mp4`` (``nasa_13013.captions.srt``),
the known text of ``jfk.flac`` (JFK's 1961 inaugural address), the stream list of each file
(``bikes.mp4`` has no sound track, ``flower.webm``'s is silent, ``jfk.flac`` has no picture) and
frames looked at by eye. The clip ``friday.mp4`` is from *His Girl Friday* (1940): the woman in
the hat and striped suit is Hildy Johnson (Rosalind Russell), so the "Hildy!" at 0:00 is said to
her, not by her. The chains of ``examples/responses.jsonl`` contain deliberate slips (a flag
"seen" in a sound-only file, a horn "heard" in a file with no sound, a time past the end); the
judges of the tables call them what they are. The answering model's answers (``model.jsonl``) are
hand-written too, with the slips a model makes at low effort (a wrong time, a cited sound track
that does not exist), so the sweep has something to find.

How the cassettes are made. Each README offline command that names a cassette
(``replay:examples/cassettes/NAME.jsonl``) is run, in a scratch copy of ``examples/``, exactly as
the README writes it, except that every such provider is this file's scripted judge
(:meth:`Book.answer` reads the tables of ``cassette_tables.toml``) wrapped by the replay judge's recorder, which writes each
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
import tomllib
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


# ----- the hand-written answers (examples/cassette_tables.toml) -----

#: the hand-written answers, one table per task (their provenance: this module's docstring)
TABLES_FILE = HERE / "cassette_tables.toml"
#: the tables keyed by several parts (the file's arrays of tables): the key's fields, then the answer's
ROWS: dict[str, tuple[str, ...]] = {
    "REGENERATED": ("item", "rejected", "step"),  # the reflecting model's replacement for a rejected step
    "ANSWERS": ("item", "effort", "answer"),  # the answering model (generate/sweep, cite mode)
    "PLANS": ("item", "variant", "program"),  # the planner's programs
    "FOUND": ("query", "modality", "ranges"),  # the executor's searches (time ranges in seconds)
    "DESCRIBED": ("instruction", "evidence", "description"),  # the executor's descriptions
    "ENTAIL": ("claim", "evidence", "answer"),  # the entailment judge (score's and program's runtime check)
    "SYNTHESIZED": ("instruction", "descriptions", "reasoning"),  # the executor's conclusions
}


def _frozen(part: Any) -> Any:
    """A key part as the requests carry it: a list (evidence labels, description numbers) is a tuple."""
    return tuple(part) if isinstance(part, list) else part


def _step_label(row: dict[str, Any]) -> dict[str, Any]:
    """A step's label as the faithfulness judge answers it: a perception step has a modality and a verdict, a
    reasoning step neither (the keys in the judge's order: the cassettes hold this JSON)."""
    if "modality" in row:
        return {"type": "perception", "modality": row["modality"], "faithful": row["faithful"], "reason": row["reason"]}
    return {"type": "reasoning", "modality": None, "faithful": None, "reason": row["reason"]}


def load_tables(path: Path = TABLES_FILE) -> dict[str, dict[Any, Any]]:
    """The answer tables by name, each keyed as :meth:`Book.answer` looks it up. The entailment table
    gains a "yes" for every description against the segments it describes (the program's runtime
    check of each of DESCRIBED's answers), which the file does not repeat."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    tables: dict[str, dict[Any, Any]] = {}
    for name, body in raw.items():
        if name in ROWS:
            *keys, answer = ROWS[name]
            tables[name] = {tuple(_frozen(row[k]) for k in keys): row[answer] for row in body}
        else:
            tables[name] = dict(body)
    tables["STEP_LABELS"] = {step: _step_label(row) for step, row in tables["STEP_LABELS"].items()}
    tables["ENTAIL"].update({(d, ev): "yes" for (_, ev), d in tables["DESCRIBED"].items()})
    return tables


TABLES = load_tables()


# ----- the scripted judge -----


class Book:
    """Answers requests from the tables (:data:`TABLES`); remembers what was asked and what it could not answer."""

    def __init__(self, tables: dict[str, dict[Any, Any]] | None = None) -> None:
        self.tables = TABLES if tables is None else tables
        self.used: set[tuple[str, Any]] = set()
        self.misses: list[str] = []

    def _get(self, table_name: str, key: Any, req: Any) -> Any:
        table = self.tables[table_name]
        if key in table:
            self.used.add((table_name, key))
            return table[key]
        self.misses.append(f"{table_name}[{key!r}]  (task {req.task!r}, inputs "
                           f"{json.dumps(req.inputs, ensure_ascii=False, default=str)})")
        return None

    def answer(self, req: Any) -> str:
        t, x = req.task, req.inputs
        if t == "faith_describe":
            return self._get("DESCRIPTIONS", x["media"], req) or ""
        if t == "faith_chain":
            rows = [self._get("STEP_LABELS", s, req) for s in x["steps"]]
            return json.dumps({"steps": [{"index": i, **(r or {})} for i, r in enumerate(rows)]}, ensure_ascii=False)
        if t in ("faith_step", "faith_detect"):
            return json.dumps(self._get("STEP_LABELS", x["step"], req) or {}, ensure_ascii=False)
        if t in ("reflect_regenerate", "reflect_regenerate_again"):
            return self._get("REGENERATED", (x["id"], x["rejected"]), req) or ""
        if t == "reflect_continue":
            return self._get("CONTINUED", x["id"], req) or ""
        if t == "generate":
            return self._get("ANSWERS", (x["id"], x["effort"]), req) or ""
        if t == "verify":
            return self._get("VERIFY", x["sentence"], req) or ""
        if t == "decompose":
            facts = self._get("DECOMPOSE", x["sentence"], req)
            return json.dumps({"facts": facts or []}, ensure_ascii=False)
        if t == "entail":
            return self._get("ENTAIL", (x["fact"], tuple(x["evidence"])), req) or ""
        if t == "plan":
            return self._get("PLANS", (x["id"], x["variant"]), req) or ""
        if t == "find":
            return json.dumps({"ranges": self._get("FOUND", (x["query"], x["modality"]), req) or []})
        if t == "describe":
            return self._get("DESCRIBED", (x["instruction"], tuple(x["evidence"])), req) or ""
        if t == "synthesize":
            return self._get("SYNTHESIZED", (x["instruction"], tuple(x["descriptions"])), req) or ""
        self.misses.append(f"a task no table answers: {t!r} (inputs {json.dumps(x, default=str)})")
        return ""

    def unused(self) -> list[str]:
        """Table entries no command asked for (stale answers)."""
        return [f"{name}[{key!r}]" for name, table in self.tables.items() for key in table
                if (name, key) not in self.used]


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
    from murgat.api import COMMANDS, Commands, command_of
    from murgat.cli import build_parser
    from murgat.engine.command import run_command
    from murgat.engine.errors import CommandError

    class RecordedCommands(Commands):
        def run(self, kind: str, values: dict[str, Any]) -> Any:
            if kind not in COMMANDS:
                return super().run(kind, values)
            command, cls = command_of(kind), COMMANDS[kind][1]
            return run_command(_recording_command(command, book, record_dir), cls.model_validate(values), echo=False,
                               others=self)

    name = argv[0]
    command, cls = command_of(name), COMMANDS[name][1]
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
    skip = shutil.ignore_patterns("cassettes", "__pycache__", "*.py", TABLES_FILE.name)  # the commands' inputs only
    shutil.copytree(HERE, work / "examples", ignore=skip)
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

