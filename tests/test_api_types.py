"""The Python API's keyword arguments are typed from the settings models: each command's
``TypedDict`` (murgat.settings.keywords) holds exactly its model's fields with the model's types (and the
declared extras the API converts), each function unpacks its own, and a type checker uses them."""

from __future__ import annotations

import os
import types
import typing
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import pytest

import murgat
from murgat import api
from murgat.settings import keywords

OPTIONS = {"score": keywords.ScoreOptions, "faithfulness": keywords.FaithfulnessOptions,
           "reflect": keywords.ReflectOptions, "program": keywords.ProgramOptions,
           "generate": keywords.GenerateOptions, "sweep": keywords.SweepOptions}


def _members(annotation: Any) -> set[Any]:
    """The types a union admits (a single type: itself); ``Literal[...]`` stays one member."""
    if get_origin(annotation) in (Union, types.UnionType):
        return set(get_args(annotation))
    return {annotation}


@pytest.mark.parametrize("command", sorted(OPTIONS))
def test_each_commands_keywords_are_its_settings_fields(command: str) -> None:
    model = api.COMMANDS[command][1]
    hints = get_type_hints(OPTIONS[command])
    fields = {n: i for n, i in model.model_fields.items() if not (i.json_schema_extra or {}).get("positional")}
    assert set(hints) == set(fields), set(hints) ^ set(fields)
    assert not OPTIONS[command].__required_keys__  # settings= alone is a call too
    for name, info in fields.items():
        expected = _members(info.annotation)
        if name in keywords.PATHS:
            expected.add(os.PathLike[str])
        expected.update(keywords.WIDER.get(name, ()))
        assert _members(hints[name]) == expected, (command, name, hints[name], info.annotation)


def test_every_declared_extra_belongs_to_a_field() -> None:
    every = {n for _, model in api.COMMANDS.values() for n in model.model_fields}
    assert set(keywords.PATHS) <= every and set(keywords.WIDER) <= every


@pytest.mark.parametrize("command", sorted(OPTIONS))
def test_each_function_unpacks_its_commands_keywords_and_names_its_settings(command: str) -> None:
    function = getattr(murgat, command)
    hints = get_type_hints(function, include_extras=True)
    assert hints["options"] == typing.Unpack[OPTIONS[command]]
    model = api.COMMANDS[command][1]
    assert model.__name__ in (function.__doc__ or "") and OPTIONS[command].__name__ in (function.__doc__ or "")


def test_the_public_names_are_listed() -> None:
    assert all(hasattr(api, n) for n in api.__all__)
    assert set(murgat.__all__) - {"__version__"} <= set(api.__all__)
    assert set(OPTIONS) <= set(api.__all__)


SNIPPET = '''\
from pathlib import Path

import murgat

murgat.score("x.jsonl", judge="embedded", out="r")
murgat.sweep(Path("q.jsonl"), model="m", judge="embedded", out=Path("s"), efforts=["low", "high"], ids="a,b")
murgat.score("x.jsonl", judge="embedded", out="r", judg="embedded")
murgat.reflect("q.jsonl", model="m", detector="self", out="r", max_steps="3")
murgat.score("x.jsonl", judge="embedded", out="r", precision_mode="loose")
'''


def test_a_type_checker_accepts_the_api_and_refuses_a_wrong_keyword(tmp_path: Path) -> None:
    """mypy on a user's script: the first two calls pass; a misspelt keyword, a text for a number and a
    value outside a field's choices are each an error on its own line (only the API's own modules are
    read, the rest skipped, so this takes seconds)."""
    mypy_api = pytest.importorskip("mypy.api")
    script = tmp_path / "user.py"
    script.write_text(SNIPPET)
    root = Path(murgat.__file__).parent
    out, err, _ = mypy_api.run(["--follow-imports=skip", "--no-incremental", "--config-file=",
                                f"--cache-dir={tmp_path / 'cache'}", str(script), str(root / "__init__.py"),
                                str(root / "api.py"), str(root / "settings" / "keywords.py")])
    errors = [ln for ln in out.splitlines() if ": error:" in ln]
    assert [ln.split(":")[1] for ln in errors] == ["7", "8", "9"], out + err
    assert '"judg"' in errors[0] and "max_steps" in errors[1] and "precision_mode" in errors[2]
