"""Options every command shares, declared once as pydantic settings: the command line is made
from the fields (flag from the name, help from the description, default and minimum from the
field), so an option has one name, help and check in every command, and :func:`build` turns
parsed arguments back into the typed settings that the Python API and the run's config use.

Groups:

- :class:`Requests` — how every model or judge request is sent (becomes a
  :class:`~murgat.judges.types.GenerateConfig`);
- :class:`Selection` — which items (``--limit``, ``--ids``);
- :class:`Place` — where media are looked for;
- :class:`Folder` — the run folder (``--out``, ``--cache``, ``--overwrite``, ``--retry-errors``,
  ``--item-concurrency``, ``--max-undetermined``, ``--json``, ``--quiet``).

**Role defaults.** Two request settings have a default that depends on what a request asks
for, and they stay so because each is part of the settings fingerprint of run folders made by
earlier versions (a changed default would refuse to resume them): ``--max-tokens`` (a judge's
yes/no answer: 1,024; a model's reasoning chain: 2,048, or 4,096 for ``generate``) and
``--timeout`` (judging: 120 s; generating: 300 s). A command states its role with
``defaults=`` in :func:`add`; nothing else may differ between commands.
"""

from __future__ import annotations

import argparse
import math
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo

#: the only defaults a command may set for itself (see the module docstring)
ROLE_DEFAULTS = frozenset({"max_tokens", "timeout", "item_concurrency"})


class Requests(BaseModel):
    """How every model or judge request of a run is sent."""

    temperature: float = Field(0.0, ge=0, description="sampling temperature (0 for reproducible answers)")
    max_tokens: int = Field(1024, ge=1, description="cap on answer tokens")
    effort: str | None = Field(None, description="reasoning effort: none|minimal|low|medium|high|dynamic "
                                                 "(mapped per provider)", json_schema_extra={"parse": "effort"})
    timeout: float = Field(120.0, gt=0, description="seconds before one attempt is abandoned (then retried)")
    retries: int = Field(5, ge=0, description="retries after the first attempt on 429/5xx/timeouts")
    backoff_max: float = Field(60.0, gt=0, description="longest wait between retries in seconds; also caps a "
                                                        "server's Retry-After")
    max_retry_time: float = Field(600.0, gt=0, description="most seconds one request may spend on attempts and waits "
                                                            "before it is an error")
    concurrency: int = Field(8, ge=1, description="requests in flight at once per provider")
    rpm: float | None = Field(None, gt=0, description="requests-per-minute limit per provider")
    tpm: float | None = Field(None, gt=0, description="tokens-per-minute limit per provider (estimated before sending)")

    def generate_config(self, effort: str | None = None) -> Any:
        from murgat.judges.types import GenerateConfig

        return GenerateConfig(temperature=self.temperature, max_tokens=self.max_tokens,
                              reasoning_effort=effort if effort is not None else self.effort, timeout_s=self.timeout,
                              retries=self.retries, backoff_max_s=self.backoff_max, max_retry_time_s=self.max_retry_time,
                              concurrency=self.concurrency, rpm=self.rpm, tpm=self.tpm)


class Selection(BaseModel):
    """Which items of the input a run uses."""

    limit: int | None = Field(None, ge=0, description="use only the first N items (only those are read)")
    ids: str | None = Field(None, description="comma-separated ids to use")


class Place(BaseModel):
    """Where media are looked for."""

    media_root: str | None = Field(None, description="folder the media names or ids are resolved in (media outside "
                                                     "it are refused; default: the input file's folder)")
    allow_media_outside_root: bool = Field(False, description="read media wherever the input names it (default: only "
                                                              "inside --media-root)")


class Folder(BaseModel):
    """The run folder and how a run in it behaves."""

    out: str = Field(description="run folder (resumed when it exists)")
    cache: str | None = Field(None, description="response cache file shared between runs (default: OUT/cache.sqlite)")
    overwrite: bool = Field(False, description="discard what the run folder holds and start again (the cache stays)")
    retry_errors: bool = Field(False, description="do again items whose record is an error or was left undetermined "
                                                  "by judge failures")
    item_concurrency: int | None = Field(8, ge=1, description="items processed at once")
    max_undetermined: float | None = Field(None, ge=0, le=1, description="exit 1 when more than this share of items "
                                                                         "is undetermined (default: only when all are)")
    print_json: bool = Field(False, description="print one JSON document instead of tables",
                             json_schema_extra={"flag": "--json", "dest": "json"})
    quiet: bool = Field(False, description="no progress bar")


def _extra(info: FieldInfo) -> dict[str, Any]:
    return info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}


def _flag(name: str, info: FieldInfo) -> str:
    return str(_extra(info).get("flag") or "--" + name.replace("_", "-"))


def _dest(name: str, info: FieldInfo) -> str:
    return str(_extra(info).get("dest") or name)


def _scalar(annotation: Any) -> Any:
    """``float`` for ``float | None`` and the like."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else str
    return annotation


def _parser_for(name: str, info: FieldInfo) -> Any:
    if _extra(info).get("parse") == "effort":
        from murgat.judges.effort import arg_type

        return arg_type
    kind = _scalar(info.annotation)
    low = next((m.ge for m in info.metadata if hasattr(m, "ge")), None)
    above = next((m.gt for m in info.metadata if hasattr(m, "gt")), None)
    high = next((m.le for m in info.metadata if hasattr(m, "le")), None)

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {'a whole number' if kind is int else 'a number'}, "
                                             f"got {text!r}") from None
        if kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        if low is not None and value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        if above is not None and value <= above:
            raise argparse.ArgumentTypeError(f"must be more than {above}, got {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high}, got {value}")
        return value

    parse.__name__ = name
    return parse


def add(parser: argparse.ArgumentParser, model: type[BaseModel], *, only: typing.Iterable[str] | None = None,
        skip: typing.Iterable[str] = (), defaults: dict[str, Any] | None = None,
        required: typing.Iterable[str] = ()) -> None:
    """Add ``model``'s fields to ``parser`` as options (``only``/``skip`` choose fields; ``defaults``
    may set only :data:`ROLE_DEFAULTS`)."""
    defaults = defaults or {}
    bad = set(defaults) - ROLE_DEFAULTS
    if bad:
        raise ValueError(f"options {sorted(bad)} have one default in every command")
    keep = set(only) if only is not None else None
    for name, info in model.model_fields.items():
        if (keep is not None and name not in keep) or name in set(skip):
            continue
        default = defaults.get(name, None if info.is_required() else info.default)
        help_text = info.description or ""
        kind = _scalar(info.annotation)
        if kind is bool:
            parser.add_argument(_flag(name, info), dest=_dest(name, info), action="store_true", default=bool(default),
                                help=help_text)
            continue
        choices = list(get_args(kind)) if get_origin(kind) is Literal else None
        parser.add_argument(_flag(name, info), dest=_dest(name, info), default=default, help=help_text,
                            required=name in set(required),
                            **({"choices": choices} if choices else {"type": _parser_for(name, info)}))


def build(model: type[BaseModel], args: argparse.Namespace) -> Any:
    """The typed settings of ``model`` from parsed arguments (fields the command did not offer keep their default)."""
    values = {k: getattr(args, _dest(k, info)) for k, info in model.model_fields.items() if hasattr(args, _dest(k, info))}
    return model.model_validate(values)
