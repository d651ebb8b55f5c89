"""Every command's settings as one pydantic model, and the command line made from it.

A command's settings class (``ScoreSettings`` in ``murgat/settings/score.py`` and so on)
inherits the groups it uses from here and adds its own fields. :func:`add_settings` declares
every field on an argparse parser (flag from the name, help from the description, default,
choices and bounds from the field), and :meth:`Settings.from_args` turns parsed arguments back
into the typed settings the command runs on, so the command line and the Python API
(``murgat.score(...)`` = ``ScoreSettings(...)``) accept exactly the same values, checked by the
same rules. A field's ``json_schema_extra`` may say how it is spelled on the command line:
``flag`` (``--json`` for ``print_json``), ``short`` (``-J``), ``also`` (further spellings), ``metavar``,
``positional`` (a ``list`` positional takes one or more values).
A ``bool`` defaulting to True is a ``--no-…`` flag; a ``list[str]`` is a repeatable option.

Groups shared by commands:

- :class:`Requests` — how every model or judge request is sent (becomes a
  :class:`~murgat.judges.types.GenerateConfig`);
- :class:`Selection` — which items (``--limit``, ``--ids``);
- :class:`Place` — where media are looked for;
- :class:`Effort` — one reasoning effort (``sweep`` takes a list instead);
- :class:`Folder`, :class:`Pace`, :class:`Undetermined` — the run folder (``--out``, ``--cache``,
  ``--overwrite``, ``--retry-errors``; ``--item-concurrency``; ``--max-undetermined``);
- :class:`Output` — ``--json`` (:class:`Json`, alone in the commands without a progress bar) and ``--quiet``;
- :class:`Stats` — the bootstrap;
- :class:`GroupBy` — ``--by FIELD``, figures per group of an item field (``score``, ``summarize``,
  ``ground``, ``view``);
- :class:`ResponseCap` — ``--max-response-chars``, the one text-size cap of what a command reads;
- :class:`Probes` — ``--probes auto|on|off|require`` and ``--probe-seed`` (the judge probes, asked
  before the first item; in no fingerprint);
- :class:`RunOn` — where items run (``--run-on local|ray`` and the Ray settings);
- :class:`JudgeOption`, :class:`ModelOption` — ``-J``/``-M`` KEY=VALUE options of the judge or model;
- :class:`Frames`, :class:`EvidenceText`, :class:`Transcripts` — ``--fps``, ``--evidence-text``,
  ``--asr-model`` (what a model or judge is shown of the media);
- :class:`ChainRole`, :class:`GenerateRole` — the role defaults of ``--max-tokens`` and ``--timeout``
  (below).

An option that appears in several commands has one name, default and help everywhere
(``tests/engine/test_options.py`` checks every pair of settings classes), with two
declared exceptions: :data:`ROLE_DEFAULTS` and :data:`PER_COMMAND`.

**Role defaults.** Three settings have a default that depends on what a command's requests ask
for. ``--max-tokens`` (a judge's yes/no answer: 1,024; a reasoning chain: 2,048,
:class:`ChainRole`; an answer to a question, 4,096, :class:`GenerateRole`) and ``--timeout``
(judging: 120 s; generating: 300 s) stay so because each is part of the settings fingerprint of
run folders made by earlier versions (a changed default would refuse to resume them);
``--item-concurrency`` is 8, except in ``score`` (as many as the judge's requests in flight, at
least 4) and ``program`` (4: each item runs a whole program).
"""

from __future__ import annotations

import argparse
import functools
import inspect
import math
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, Self, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.fields import FieldInfo

from murgat.core.inputs import MAX_RESPONSE_CHARS
from murgat.engine.fingerprint import Deciding, Where, derive
from murgat.judges.effort import arg_type, check
from murgat.judges.types import GenerateConfig
from murgat.judging.config import JudgingConfig

#: a settings model class, for the functions that build one from parsed arguments
_Model = TypeVar("_Model", bound=BaseModel)

#: the only defaults a command may set for itself (see the module docstring)
ROLE_DEFAULTS = frozenset({"max_tokens", "timeout", "item_concurrency"})
#: options whose meaning, and so help and default, is the command's own: the input (responses,
#: questions), the model or judge a command names, its ``--mode`` and ``--variant`` vocabularies, and
#: ``--max-frames`` (frames per cited segment in ``score``/``program``; over the whole video when nothing
#: is cited in ``faithfulness``/``reflect``, and for the answering model in ``generate``)
PER_COMMAND = frozenset({"input", "data", "judge", "model", "mode", "variant", "max_frames", "out"})


class Settings(BaseModel):
    """Base of every command's settings: unknown names are refused (a typo is an error, not a
    silently ignored option), and ``model_…`` field names are allowed (``model_option``)."""

    # inf/nan are refused as the command line refuses them (an infinite --pad would be "scored" and
    # written into config.json as Infinity, which is not JSON)
    model_config = ConfigDict(extra="forbid", protected_namespaces=(), allow_inf_nan=False)
    #: the subcommand these settings belong to
    command: ClassVar[str] = ""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Self:
        """The typed settings from parsed arguments (the parser was made by :func:`add_settings`)."""
        return build(cls, args)


S = TypeVar("S", bound=Settings)


class Requests(BaseModel):
    """How every model or judge request of a run is sent."""

    title: ClassVar[str] = "requests (every model or judge request)"

    temperature: float = Deciding(0.0, ge=0, description="sampling temperature (0 for reproducible answers)")
    max_tokens: int = Deciding(1024, ge=1, description="cap on answer tokens")
    timeout: float = Field(120.0, gt=0, description="seconds before one attempt is abandoned (then retried)")
    retries: int = Field(5, ge=0, description="retries after the first attempt on 429/5xx/timeouts")
    backoff_max: float = Field(60.0, gt=0, description="longest wait between retries in seconds; also caps a "
                                                        "server's Retry-After")
    max_retry_time: float = Field(600.0, gt=0, description="most seconds one request may spend on attempts and waits "
                                                            "before it is an error")
    concurrency: int = Field(8, ge=1, description="requests in flight at once per provider")
    rpm: float | None = Field(None, gt=0, description="requests-per-minute limit per provider")
    tpm: float | None = Field(None, gt=0, description="tokens-per-minute limit per provider (estimated before sending)")

    def generate_config(self, effort: str | None = None) -> GenerateConfig:
        """The requests' :class:`~murgat.judges.types.GenerateConfig`, derived from these fields (and
        ``--effort`` where the settings have one; ``effort``: the one to send instead, ``sweep``'s)."""
        own = type(self).model_fields
        cfg = derive(GenerateConfig, self, REQUEST_NAMES, fields=[f for f in (*Requests.model_fields,
                                                                           *Effort.model_fields) if f in own])
        return cfg if effort is None else cfg.model_copy(update={"reasoning_effort": effort})


#: where each request setting sits in a :class:`~murgat.judges.types.GenerateConfig`
REQUEST_NAMES: dict[str, Where] = {"timeout": "timeout_s", "backoff_max": "backoff_max_s",
                                   "max_retry_time": "max_retry_time_s", "effort": "reasoning_effort"}
#: where the request, frame and evidence settings sit in a :class:`~murgat.judging.config.JudgingConfig`
JUDGING_NAMES: dict[str, Where] = {
    "temperature": "generate.temperature", "max_tokens": "generate.max_tokens", "retries": "generate.retries",
    "concurrency": "generate.concurrency", "rpm": "generate.rpm", "tpm": "generate.tpm",
    "timeout": "generate.timeout_s", "backoff_max": "generate.backoff_max_s", "max_retry_time": "generate.max_retry_time_s",
    "effort": "generate.reasoning_effort", "fps": "evidence.fps", "max_frames": "evidence.max_frames"}


def judging_config(s: Requests) -> JudgingConfig:
    """The evidence and request settings of a command that asks about media (``faithfulness``,
    ``reflect``, ``program``): the frames, the evidence text and every request setting."""
    return derive(JudgingConfig, s, JUDGING_NAMES, fields=[f for f in ("fps", "max_frames", "evidence_text")
                                                           if f in type(s).model_fields],
                  extra={"generate": s.generate_config()})


class ChainRole(BaseModel):
    """The role defaults of a command whose model writes or reads whole reasoning chains
    (``faithfulness``, ``reflect``, ``program``): listed before :class:`Requests`, its fields win."""

    title: ClassVar[str] = "requests (every model or judge request)"

    max_tokens: int = Deciding(2048, ge=1, description="cap on answer tokens (a whole reasoning chain)")
    timeout: float = Field(300.0, gt=0, description="seconds before one attempt is abandoned (then retried)")


class GenerateRole(BaseModel):
    """The role defaults of a command whose model answers questions with reasoning (``generate``,
    ``sweep``): longer answers than :class:`ChainRole`."""

    title: ClassVar[str] = "requests (every model or judge request)"

    max_tokens: int = Deciding(4096, ge=1, description="cap on answer tokens (a whole reasoning chain)")
    timeout: float = Field(300.0, gt=0, description="seconds before one attempt is abandoned (then retried)")


class Effort(BaseModel):
    """One reasoning effort for every request (``sweep`` takes several instead)."""

    title: ClassVar[str] = "requests (every model or judge request)"

    effort: str | None = Deciding(None, description="reasoning effort: none|minimal|low|medium|high|dynamic "
                                                 "(mapped per provider)", spelled={"parse": "effort"})

    @field_validator("effort")
    @classmethod
    def _one_vocabulary(cls, value: str | None) -> str | None:
        """The check and spelling ``--effort`` gets (``"LOW"`` → ``"low"``): the Python API then makes
        the same fingerprint as the command line, and an unknown effort fails here, not per request."""
        return check(value)


class Selection(BaseModel):
    """Which items of the input a run uses."""

    title: ClassVar[str] = "selection"

    limit: int | None = Field(None, ge=0, description="use only the first N items (score and faithfulness read no further)")
    ids: str | None = Field(None, description="comma-separated ids to use")

    @field_validator("ids", mode="before")
    @classmethod
    def _ids_list(cls, value: Any) -> Any:
        """The Python API may pass ``ids=["a", "b"]`` for the command line's ``--ids a,b``."""
        return ",".join(str(v) for v in value) if isinstance(value, list | tuple) else value


class Place(BaseModel):
    """Where media are looked for."""

    title: ClassVar[str] = "media"

    media_root: str | None = Field(None, description="folder the media names or ids are resolved in (media outside "
                                                     "it are refused; default: the input file's folder)")
    allow_media_outside_root: bool = Field(False, description="read media wherever the input names it (default: only "
                                                              "inside --media-root)")


class Folder(BaseModel):
    """The run folder and how a run in it behaves."""

    title: ClassVar[str] = "run folder"

    out: str = Field(description="run folder (resumed when it exists)")
    cache: str | None = Field(None, description="response cache file shared between runs (default: cache.sqlite in "
                                                "the run folder)")
    overwrite: bool = Field(False, description="discard what the run folder holds and start again (the cache stays)")
    retry_errors: bool = Field(False, description="do again items whose record is an error or was left undetermined "
                                                  "by judge failures")

    def cache_path(self) -> Path:
        """The response cache of the run: ``--cache``, else ``OUT/cache.sqlite``."""
        return Path(self.cache) if self.cache else Path(self.out) / "cache.sqlite"


class Pace(BaseModel):
    """How many items are in flight at once."""

    title: ClassVar[str] = "run folder"

    item_concurrency: int | None = Field(8, ge=1, description="items processed at once")

    @field_validator("item_concurrency")
    @classmethod
    def _none_is_the_default(cls, value: int | None) -> int | None:
        """``item_concurrency=None`` (the Python API) means the command's default: ``score``'s is None
        (worked out from the judge's concurrency), the others' a number; a None reaching a command
        that runs items N at a time failed deep in the item loop."""
        return cls.model_fields["item_concurrency"].default if value is None else value


class ResponseCap(BaseModel):
    """The one text-size cap of every command that reads responses or chains (:mod:`murgat.core.inputs`):
    a longer one is marked by the loader and gets its own error record, never a parse of unbounded
    cost. It decides nothing about the items within it, so it is no part of any fingerprint."""

    title: ClassVar[str] = "input"

    max_response_chars: int = Field(MAX_RESPONSE_CHARS, ge=1, description="a longer response or chain gets a "
                                                                           "response_too_long error record instead of "
                                                                           "being read")


class Undetermined(BaseModel):
    """When a run whose items could not all be judged counts as failed."""

    title: ClassVar[str] = "run folder"

    max_undetermined: float | None = Field(None, ge=0, le=1, description="exit 1 when more than this share of items "
                                                                         "is undetermined (default: only when all are)")


class Json(BaseModel):
    """``--json``: one JSON document on stdout instead of tables (every command that prints a table)."""

    title: ClassVar[str] = "output"

    print_json: bool = Field(False, description="print one JSON document instead of tables",
                             json_schema_extra={"flag": "--json"})


class Output(Json):
    """What a run prints: its document or tables, and its progress bar."""

    title: ClassVar[str] = "output"

    quiet: bool = Field(False, description="no progress bar")


class JudgeOption(BaseModel):
    """``-J``: options of the judge (listed with the command's own options, as ``--judge`` is)."""

    title: ClassVar[str] = ""

    judge_option: list[str] = Deciding(default_factory=list, description="judge option KEY=VALUE (repeatable), e.g. "
                                    "base_url=http://localhost:8000/v1", spelled={"short": "-J", "metavar": "KEY=VALUE"})


class ModelOption(BaseModel):
    """``-M``: options of the model that writes answers or chains."""

    title: ClassVar[str] = ""

    model_option: list[str] = Deciding(default_factory=list, description="model option KEY=VALUE (repeatable)",
                                       spelled={"short": "-M", "metavar": "KEY=VALUE"})


class Frames(BaseModel):
    """The frame rate a model or judge is shown the video at (how many frames, ``--max-frames``,
    is each command's own)."""

    title: ClassVar[str] = ""

    fps: float = Deciding(1.0, gt=0, description="frames per second sampled from the video (within each cited segment "
                                              "where a command sends cited segments)")


class EvidenceText(BaseModel):
    """Whether transcripts and on-screen text come with the media a judge sees."""

    title: ClassVar[str] = ""

    evidence_text: bool = Deciding(False, description="also send ASR/OCR text of each cited segment")


class Transcripts(BaseModel):
    """Which speech recogniser makes transcripts."""

    title: ClassVar[str] = ""

    asr_model: str | None = Deciding(None, description="ASR model for transcripts: a CTranslate2 Whisper model folder, "
                                                    "or a bundled name this install provides (base, the default; "
                                                    "tiny.en); one it lacks is refused before any work")


class Stats(BaseModel):
    """The bootstrap behind every confidence interval."""

    title: ClassVar[str] = "statistics"

    bootstrap: int = Field(2000, ge=1, le=100_000, description="bootstrap resamples for confidence intervals")
    seed: int = Field(0, ge=0, description="seed of the bootstrap resampling")


class GroupBy(BaseModel):
    """``--by FIELD``: the run's figures per group of an item field as well (:mod:`murgat.core.breakdown`).
    What is printed and summarised, never what is done: no part of any fingerprint."""

    title: ClassVar[str] = "statistics"

    by: list[str] = Field(default_factory=list, description="also give the figures per group of this item field "
                          "(repeatable: groups of the combination of values; a list-valued field such as audio_class "
                          "counts an item once in each of its values), e.g. --by task_type",
                          json_schema_extra={"metavar": "FIELD"})


class Probes(BaseModel):
    """The judge probes a run asks before its first item (:mod:`murgat.judging.probes`): known-answer questions
    about a clip murgat makes, asked through the run's own judge path. They decide nothing about the
    items (a probe's answer never enters a figure), so neither field is part of any fingerprint: a
    folder resumes whatever they are, and ``off`` sends exactly the requests of a run without them."""

    title: ClassVar[str] = "judge probes"

    probes: Literal["auto", "on", "off", "require"] = Field(
        "auto", description="before the first item, ask each judge path 12 questions with known answers about a clip "
                            "murgat makes (does the judge hear and see what murgat sends?): auto (judges that are "
                            "models behind an endpoint or loaded locally: openai, gemini, hf; not embedded or replay), "
                            "on (every judge, embedded and replay too), require (as on, and a failed probe stops the "
                            "run with exit 2 before any item), off (none: exactly the requests of a run without "
                            "probes). A failure is a loud warning before the items and after the summary; cached like "
                            "any request; not part of the run's settings (a folder resumes with any value)")
    probe_seed: int = Field(0, ge=0, description="seed of the probe clip (other numbers and words)")


class RunOn(BaseModel):
    """Where the items run: this process, or Ray tasks grouped by media file."""

    title: ClassVar[str] = "scale-out (Ray)"

    run_on: Literal["local", "ray"] = Field("local", description="local: this process; ray: Ray tasks grouped by media "
                                                                 "file (pip install 'murgat[ray]')")
    ray_address: str | None = Field(None, description="an existing cluster (auto, ray://host:10001); default: start a "
                                                      "local Ray instance")
    ray_cpus: int | None = Field(None, ge=1, description="CPUs of a local Ray instance (default: all)")
    ray_group_size: int = Field(32, ge=1, description="most items of one media file in one task (a file with more "
                                                      "questions is split)")
    ray_task_cpus: float | None = Field(None, gt=0, description="CPUs each task reserves (default: as many as ASR "
                                                                "threads when the run transcribes, else 1)")
    ray_task_retries: int = Field(3, ge=0, le=100, description="times a group whose worker died is resubmitted with "
                                                               "the items not yet returned")

    def scale_out(self) -> RunOn:
        """These settings as their where-to-run group: what the engine reads to run on Ray, typed by the
        group that declares its fields (so :class:`RunSettings` need not list them again)."""
        return self


class RunSettings(Protocol):
    """What the engine reads of a run command's settings: the groups every run command has
    (:class:`Folder`, :class:`Place`, :class:`Output`, and :class:`RunOn` through :meth:`RunOn.scale_out`)."""

    command: ClassVar[str]
    out: str
    media_root: str | None
    overwrite: bool
    retry_errors: bool
    quiet: bool
    print_json: bool

    def cache_path(self) -> Path: ...

    def scale_out(self) -> RunOn: ...


class _OldExecutorSpelling(argparse.Action):
    """``--executor local|ray`` was where-to-run in some commands; ``--executor`` now names only the
    program's executing model, so the old spelling gets a one-line hint instead of a second meaning."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        parser.error(f"--executor {values}: where to run is --run-on local|ray; "
                     "--executor names the model that executes programs in 'murgat program'")


def passed_to_scoring(s: BaseModel) -> dict[str, Any]:
    """What a command that scores its own output in-process (``sweep``, ``program --score``) hands
    on to ``score``: where to run and how requests are sent (rate limits, retries, concurrency,
    temperature) — not the role defaults (``--max-tokens``, ``--timeout``), which are the judge's own."""
    keep = (set(RunOn.model_fields) | set(Requests.model_fields)) - ROLE_DEFAULTS
    return s.model_dump(include=keep & set(type(s).model_fields))


def scoring_values(parent: Any, *, input: str, judge: str, judge_option: list[str], out: str,
                   cache: str) -> dict[str, Any]:
    """The settings values of the score run another command makes of its own output (``sweep``'s
    efforts, ``program --score``'s variants): the parent's media place, where to run, how requests
    are sent (one account's rate limits, retries and concurrency hold for scoring too),
    ``--overwrite``, ``--retry-errors``, ``--max-response-chars``, ``--probes``/``--probe-seed`` and quietness (``--json`` too: the
    parent prints the one document); scoring's own role defaults (``--max-tokens``, ``--timeout``) and everything else."""
    return {"input": input, "judge": judge, "judge_option": list(judge_option), "out": out, "cache": cache,
            "overwrite": parent.overwrite, "retry_errors": parent.retry_errors,
            "quiet": parent.quiet or parent.print_json, **parent.model_dump(include=set(Place.model_fields)),
            **parent.model_dump(include=set(ResponseCap.model_fields) & set(type(parent).model_fields)),
            **parent.model_dump(include=set(Probes.model_fields) & set(type(parent).model_fields)),
            **passed_to_scoring(parent)}


def _extra(info: FieldInfo) -> dict[str, Any]:
    return info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}


def flag_of(name: str, info: FieldInfo) -> str:
    """The command-line spelling of a field (``--media-root`` for ``media_root``)."""
    return str(_extra(info).get("flag") or "--" + name.replace("_", "-"))


def _scalar(annotation: Any) -> Any:
    """``float`` for ``float | None`` and the like."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else str
    return annotation


def _parser_for(name: str, info: FieldInfo) -> Any:
    if _extra(info).get("parse") == "effort":
        return arg_type
    kind = _scalar(info.annotation)
    if kind not in (int, float):
        return kind
    low = next((m.ge for m in info.metadata if hasattr(m, "ge")), None)
    above = next((m.gt for m in info.metadata if hasattr(m, "gt")), None)
    high = next((m.le for m in info.metadata if hasattr(m, "le")), None)
    return number_parser(name, kind, low=low, above=above, high=high)


def number_parser(name: str, kind: type[int] | type[float], *, low: float | None = None, above: float | None = None,
                  high: float | None = None) -> Callable[[str], int | float]:
    """The one check of a number on the command line (every command's, with or without a settings
    model): a whole number or a finite one (``nan`` passed every comparison and broke a summary after
    all the work), within its bounds; anything else is argparse's exit 2 with the reason."""

    def parse(text: str) -> int | float:
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


def _help(info: FieldInfo, default: Any, shown: bool) -> str:
    """A field's help: its description (``%`` kept literal), and its default where one is worth
    saying — not None, False or an empty list, not the True of a ``--no-…`` flag (it would read as
    "off by default"), nor where the description already speaks of the default."""
    text = (info.description or "").replace("%", "%%")
    if text and shown and not (default is None or default is False or default == []) and "default" not in text:
        text += " (default: %(default)s)"
    return text


def _add_field(target: Any, name: str, info: FieldInfo, default: Any, required: bool) -> None:
    """One field as one argument: a positional (``json_schema_extra`` ``positional``; a list takes
    one or more), a ``--flag``/``--no-flag`` for a bool, a repeatable option for a list, else an
    option with the field's choices (a ``Literal``) or its checked type and bounds."""
    extra = _extra(info)
    kind = _scalar(info.annotation)
    if extra.get("positional"):
        target.add_argument(name, help=_help(info, default, False),
                            **({"nargs": "+"} if get_origin(kind) is list else {}),
                            **({"metavar": extra["metavar"]} if "metavar" in extra else {}))
        return
    flags = [*([extra["short"]] if "short" in extra else []), flag_of(name, info), *extra.get("also", [])]
    if kind is bool:
        target.add_argument(*flags, dest=name, action="store_false" if default else "store_true", default=bool(default),
                            help=_help(info, default, False))
        return
    if get_origin(kind) is list:
        target.add_argument(*flags, dest=name, action="append", default=[], help=_help(info, default, False),
                            metavar=extra.get("metavar"), required=required)
        return
    choices = list(get_args(kind)) if get_origin(kind) is Literal else None
    target.add_argument(*flags, dest=name, default=default, help=_help(info, default, True), required=required,
                        **({"metavar": extra["metavar"]} if "metavar" in extra else {}),
                        **({"choices": choices} if choices else {"type": _parser_for(name, info)}))


@functools.cache
def _declared(cls: type) -> frozenset[str]:
    """The names a class itself annotates. Read once per class: every command's parser asks it of
    each class up the settings tree for each field (thousands of reads for one parser)."""
    return frozenset(inspect.get_annotations(cls))


def _defining_group(model: type[BaseModel], name: str) -> type[BaseModel] | None:
    """The shared group (a class with a ``title``) a field of ``model`` belongs to, also when the
    command redeclares it for a role default; None for the command's own fields."""
    for cls in model.__mro__:
        if "title" in cls.__dict__ and name in _declared(cls):
            return cls
    return None


def _declared_at(model: type[BaseModel], name: str) -> int:
    """How far up the class tree a field is first declared (the command's own class first)."""
    return next((i for i, cls in enumerate(model.__mro__) if name in _declared(cls)), 0)


def add_settings(parser: argparse.ArgumentParser, model: type[Settings]) -> None:
    """Declare every field of ``model`` on ``parser``: the command's own first, then each shared group
    under its title (so ``--help`` reads by topic)."""
    placed: dict[str | None, list[str]] = {}
    for name in sorted(model.model_fields, key=lambda n: _declared_at(model, n)):  # stable: field order kept
        group = _defining_group(model, name)
        # a group titled "" is listed with the command's own options
        placed.setdefault(group.title or None if group is not None else None, []).append(name)  # type: ignore[attr-defined]
    # the command's own fields, then the groups (by title) in the order the class lists them
    titles = [t for t in dict.fromkeys(c.__dict__.get("title") for c in model.__mro__) if t and t in placed]
    for title in [None, *titles]:
        target: Any = parser if title is None else parser.add_argument_group(title)
        for name in placed.get(title, []):
            info = model.model_fields[name]
            default = None if info.is_required() else info.get_default(call_default_factory=True)
            _add_field(target, name, info, default, info.is_required())
    if "run_on" in model.model_fields and "executor" not in model.model_fields:
        # --executor local|ray was where-to-run in earlier versions: a one-line hint, not a second meaning
        parser.add_argument("--executor", action=_OldExecutorSpelling, help=argparse.SUPPRESS)


def add_command(sub: argparse._SubParsersAction[argparse.ArgumentParser], model: type[S], run: Callable[[S], int],
                **parser: Any) -> argparse.ArgumentParser:
    """``murgat … NAME``: the one way a command's parser is made. ``NAME`` is the last word of the
    model's ``command`` (``"media probe"`` → ``probe`` under ``media``); every field of ``model`` is
    declared (:func:`add_settings`), and running the command is ``run`` of the validated settings
    (the handler never sees argparse's namespace). ``parser``: ``help``, ``description`` of the
    subcommand. The model is kept in the parser's defaults (``settings_model``) so that a test can
    check every command's parser against its model."""
    p: argparse.ArgumentParser = sub.add_parser(model.command.split()[-1], **parser)
    add_settings(p, model)

    def handler(args: argparse.Namespace) -> int:
        try:
            settings = model.from_args(args)
        except ValidationError as exc:  # a field's own check (beyond its type and bounds): a usage error, exit 2
            p.error("; ".join(f"argument --{'-'.join(str(x) for x in e['loc'])}: {e['msg'].removeprefix('Value error, ')}"
                              .replace("_", "-") for e in exc.errors()))
        return run(settings)

    p.set_defaults(func=handler, settings_model=model)
    return p


def build(model: type[_Model], args: argparse.Namespace) -> _Model:
    """The typed settings of ``model`` from parsed arguments (fields the command did not offer keep their default)."""
    values = {k: getattr(args, k) for k in model.model_fields if hasattr(args, k)}
    return model.model_validate(values)
