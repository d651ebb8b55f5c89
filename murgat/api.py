"""The Python API: every command as a function, and :func:`load_run` to read any run folder.

Each function takes the command's options as keyword arguments named as on the command line
(``media_root=`` for ``--media-root``, ``judge_option=["base_url=…"]`` for ``-J``), with the
same defaults and checks, because both go through the one declaration of each option (the
command's parser). It runs the command in this process and returns a :class:`RunResult`: the
exit status, the summary and the records, read back from the run folder. Nothing is printed
except the command's own warnings on stderr.

    import murgat
    run = murgat.score("responses.jsonl", judge="embedded", out="runs/demo", media_root="videos")
    print(run.summary["murgat_s"]["value"], len(run.records))
    df = murgat.load_run("runs/demo").dataframe()      # with pandas installed
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class RunResult:
    """A finished (or resumed) run: what ``murgat view``/``summarize`` read, as Python values."""

    path: Path
    kind: str | None
    exit_code: int = 0
    summary: dict[str, Any] = field(default_factory=dict)
    #: where the records are when they are not in the folder (``generate --out FILE.jsonl``)
    records_file: Path | None = None

    @property
    def records(self) -> list[dict[str, Any]]:
        """One record per item (the latest), in the order the run folder keeps them."""
        return list(self.iter_records())

    def iter_records(self) -> Iterator[dict[str, Any]]:
        from murgat.engine.folder import RunFolder

        if self.records_file is not None:
            yield from RunFolder(self.path, repair=False, record=None, results=self.records_file.resolve()).latest_results()
            return
        if self.kind == "program":  # one record per item and variant, from each variant's folder
            for sub in sorted(p for p in self.path.iterdir() if (p / "results.jsonl").exists()):
                for r in RunFolder(sub, repair=False, record=None).latest_results():
                    yield {**r.get("record", r), "variant": sub.name}
            return
        for name in ("results.jsonl", "responses.jsonl"):
            if (self.path / name).exists():
                rows = RunFolder(self.path, repair=False, record=None, results=name).latest_results()
                # reflect keeps {id, record, trace}: its records are the responses
                yield from (r["record"] if self.kind == "reflect" and "record" in r else r for r in rows)
                return

    def dataframe(self) -> Any:
        """The records as a pandas DataFrame (one row per item; nested fields flattened with ``.``)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pandas is not a dependency of murgat
            raise ImportError("RunResult.dataframe() needs pandas: pip install pandas") from exc
        return pd.json_normalize([{k: v for k, v in r.items() if k not in ("sentences", "steps")}
                                  for r in self.iter_records()])


def load_run(path: str | Path) -> RunResult:
    """Any run folder (``score``, ``faithfulness``, ``reflect``, ``program``, ``generate``, ``sweep``)."""
    from murgat.engine.folder import read_kind

    p = Path(path)
    records_file = None
    if p.suffix == ".jsonl" and p.is_file():  # generate --out FILE.jsonl keeps its folder beside the file
        p, records_file = p.with_suffix(".run"), p
    if not p.is_dir():
        raise FileNotFoundError(f"{path}: no run folder there")
    summary: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        summary = json.loads((p / "summary.json").read_text(encoding="utf-8"))
    return RunResult(path=p, kind=read_kind(p), summary=summary, records_file=records_file)


def _argv(command: list[str], options: dict[str, Any]) -> list[str]:
    argv = list(command)
    short = {"judge_option": "-J", "model_option": "-M", "planner_option": "-P", "executor_option": "-E",
             "detector_option": "-D"}
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = short.get(name, "--" + name.replace("_", "-"))
        if value is True:
            argv.append(flag)
        elif isinstance(value, list | tuple):
            for v in value:
                argv += [flag, str(v)]
        else:
            argv += [flag, str(value)]
    return argv


def _run(command: list[str], out: str | Path, options: dict[str, Any], quiet: bool = True) -> RunResult:
    """Run one command in this process (its tables silenced; warnings still reach stderr) and read its folder back."""
    from murgat.cli import main

    if quiet:  # no progress bar unless asked for (generate has none to turn off)
        options = {"quiet": True, **options}
    argv = _argv(command, {**options, "out": str(out)})
    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit:  # the parser refused an option: a Python error, not an exit
        raise ValueError(err.getvalue().strip().split("\n")[-1] if err.getvalue().strip() else f"bad options: {argv}"
                         ) from None
    if err.getvalue():
        import sys

        sys.stderr.write(err.getvalue())  # the command's warnings, as on the command line
    res = load_run(out)
    res.exit_code = code
    return res


def score(input: str | Path, *, judge: str, out: str | Path, **options: Any) -> RunResult:
    """``murgat score INPUT --judge J --out OUT [options]``."""
    return _run(["score", str(input), "--judge", judge], out, options)


def faithfulness(input: str | Path, *, judge: str, out: str | Path, **options: Any) -> RunResult:
    """``murgat faithfulness INPUT --judge J --out OUT [options]``."""
    return _run(["faithfulness", str(input), "--judge", judge], out, options)


def reflect(data: str | Path, *, model: str, detector: str, out: str | Path, **options: Any) -> RunResult:
    """``murgat reflect DATA --model M --detector D --out OUT [options]``."""
    return _run(["reflect", str(data), "--model", model, "--detector", detector], out, options)


def program(data: str | Path, *, planner: str, out: str | Path, **options: Any) -> RunResult:
    """``murgat program DATA --planner P --out OUT [options]``."""
    return _run(["program", str(data), "--planner", planner], out, options)


def generate(data: str | Path, *, model: str, out: str | Path, **options: Any) -> RunResult:
    """``murgat generate DATA --model M --out OUT [options]``; ``out`` is a run folder (or a ``.jsonl`` file)."""
    options.pop("quiet", None)
    return _run(["generate", str(data), "--model", model], out, options, quiet=False)
