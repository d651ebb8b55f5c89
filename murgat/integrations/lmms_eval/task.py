"""The functions murgat's lmms-eval task names in its YAML (``tasks/_murgat_cited_video_yaml``).

*Asking.* :func:`doc_to_messages` (chat backends, ``openai_compatible`` among them) sends the media
of a document as murgat sends it to its own models (:func:`murgat.integrations.media_parts.media_pieces`)
and then murgat's citation prompt (:func:`murgat.judging.answering.generate_prompt`). ``media`` (a
task kwarg, ``lmms_eval_specific_kwargs``) is one of

``frames`` (default)
    frames at ``fps`` (at most ``max_frames``), each after its time label ``(frame at 3.00 s)``: every
    OpenAI-compatible server takes images, and a model can only cite a time it was told;
``frames+audio``
    the same, then the whole sound track as a WAV ``data:`` URL (lmms-eval sends it as ``audio_url``:
    servers such as vLLM take that; others drop it);
``video``
    the file's path as lmms-eval's own video content: lmms-eval then samples it (``qwen_vl_utils``) or,
    with ``pass_video_url=True``, hands the server the path.

An audio-only file is sent as its sound in every mode. :func:`doc_to_visual` and :func:`doc_to_text`
serve lmms-eval's simple backends (``--force_simple``): the images or the video path, and the prompt
with the frame times written out before it.

*Scoring.* :func:`process_results` scores nothing: it returns the payload of
:mod:`murgat.commands.imports.lmms_samples` for each metric, so lmms-eval's samples log holds what
``murgat import lmms-eval`` needs. The aggregations score all samples in **one** ``murgat.score``
call (:func:`run_of`, once per set of answers, whichever metric asks first): the same judges,
settings, cache and run folder as ``murgat score``, written to ``OUTPUT_PATH/murgat/TASK-HASH/``
(``--output_path``; the hash is of the answers scored, so a rerun on the same answers resumes that
folder). The metrics are murgat's figures as its ``summary.json`` has them: ``murgat_s``,
``accuracy``, ``attributed_accuracy`` (answer right and MURGAT-S ≥ the threshold) and each one's
bootstrap 95% CI as a ``[low, high]`` pair (``…_ci``). A figure over no item is ``None`` (lmms-eval
prints N/A), never 0. lmms-eval's own ``_stderr`` column is N/A for them: it bootstraps only its
built-in aggregations, and the CI is murgat's.
"""

from __future__ import annotations

import base64
import hashlib
import io
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from murgat.commands.imports.lmms_samples import MARKER, info_of, items_of, payload, settings_of, write_input
from murgat.commands.imports.samples import input_text
from murgat.core.inputs import InputError
from murgat.core.schema import Item
from murgat.integrations.media_parts import MediaPiece, check_media_as, media_pieces

#: the metrics of the task, in the order its YAML lists them (each gets the same payload per sample)
METRICS = ("murgat_s", "murgat_s_ci", "accuracy", "accuracy_ci", "attributed_accuracy", "attributed_accuracy_ci")
_RUNS: dict[tuple[str, str], dict[str, Any]] = {}


def _kwargs(kw: dict[str, Any] | None) -> tuple[str, float, int]:
    kw = kw or {}
    media = str(kw.get("media", "frames"))
    check_media_as(media)
    if media == "video+audio":
        raise ValueError("media 'video+audio' is inspect's; for lmms-eval choose frames, frames+audio or video")
    return media, float(kw.get("fps", 1.0)), int(kw.get("max_frames", 32))


@lru_cache(maxsize=8)
def _pieces(path: str, media: str, fps: float, max_frames: int) -> tuple[MediaPiece, ...]:
    return tuple(media_pieces(Path(path), media, fps, max_frames))


def _doc_pieces(doc: dict[str, Any], kw: dict[str, Any] | None) -> tuple[MediaPiece, ...]:
    media, fps, max_frames = _kwargs(kw)
    path = str(doc.get("media_path") or "")
    if not path or not Path(path).is_file():
        raise InputError(f"document {doc.get('id')!r}: media file {path!r} not found")
    return _pieces(path, media, fps, max_frames)


def _prompt(doc: dict[str, Any]) -> str:
    from murgat.judging.answering import generate_prompt

    info = info_of(doc)
    item = Item.model_validate({**info["item"], "id": str(doc.get("id"))})
    return generate_prompt(item, info.get("mode", "cite"))


def _content(piece: MediaPiece) -> dict[str, Any]:
    if piece.kind == "text":
        return {"type": "text", "text": piece.text or ""}
    if piece.kind == "image":
        from PIL import Image

        return {"type": "image", "url": Image.open(io.BytesIO(piece.data or b"")).convert("RGB")}
    if piece.kind == "video":
        return {"type": "video", "url": str(piece.path)}
    data = base64.b64encode(Path(str(piece.path)).read_bytes()).decode("ascii")
    return {"type": "audio", "url": f"data:audio/{piece.format or 'wav'};base64,{data}"}


def doc_to_messages(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One user turn: the media pieces, then murgat's prompt (see the module docstring)."""
    content = [_content(p) for p in _doc_pieces(doc, lmms_eval_specific_kwargs)]
    content.append({"type": "text", "text": _prompt(doc)})
    return [{"role": "user", "content": content}]


def doc_to_visual(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> list[Any]:
    """The images (or the video path) for lmms-eval's simple backends; they take no sound."""
    return [_content(p)["url"] for p in _doc_pieces(doc, lmms_eval_specific_kwargs) if p.kind in ("image", "video")]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """murgat's prompt, after the frame times when frames are sent (a simple backend shows no labels)."""
    labels = [p.text or "" for p in _doc_pieces(doc, lmms_eval_specific_kwargs) if p.kind == "text"]
    frames = [t.removeprefix("(frame at ").removesuffix(")") for t in labels if t.startswith("(frame at ")]
    lead = f"The {len(frames)} images are frames of the video at {', '.join(frames)}.\n\n" if frames else ""
    return lead + _prompt(doc)


def doc_to_target(doc: dict[str, Any]) -> str:
    """The gold answer (an option letter or text), ``""`` when the dataset has none."""
    return str(info_of(doc)["item"].get("gold") or "")


def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
    """The same payload for every metric (scoring waits for the aggregation: one batch for the run)."""
    answers = results[0] if results and isinstance(results[0], list) else results
    value = payload(doc, answers)
    return dict.fromkeys(METRICS, value)


def _out_root(args: Any) -> Path:
    out = getattr(args, "output_path", None)
    if out:
        return Path(out) / "murgat"
    root = Path(tempfile.gettempdir()) / "murgat-lmms-eval"
    print(f"murgat: no --output_path: the murgat run goes under {root}", file=sys.stderr)
    return root


def run_of(values: list[Any], args: Any = None) -> dict[str, Any]:
    """The ``summary.json`` of the murgat run over every answer in ``values`` (the task's payloads),
    scored once per distinct set of answers and judge (see the module docstring)."""
    from murgat.api import score

    items: list[Item] = []
    skipped: list[dict[str, Any]] = []
    for n, v in enumerate(values):
        got, left = items_of(v, f"sample {n}")
        items += got
        skipped += left
    settings = {repr(settings_of(v)) for v in values}
    if len(settings) > 1:
        raise InputError(f"the samples name {len(settings)} different judges or media roots; murgat scores one per run")
    s = settings_of(values[0]) if values else {}
    text = input_text(items)
    key = (hashlib.sha256(text.encode()).hexdigest(), repr(s))
    if key in _RUNS:
        return _RUNS[key]
    if not items:
        raise InputError(f"no answer to score: {len(skipped)} request(s) failed in lmms-eval")
    folder = _out_root(args) / f"{s.get('task') or 'murgat'}-{key[0][:12]}"
    path = write_input(folder, items, {"made_by": "murgat lmms-eval task", "task": s.get("task"), "skipped": skipped})
    res = score(str(path), judge=str(s["judge"]), judge_option=list(s.get("judge_option") or []),
                media_root=s.get("media_root"), out=str(folder), quiet=True)
    summary = dict(res.summary)
    print(f"murgat: {summary.get('n_items')} answers scored into {folder} ({summary.get('n_errors')} error records; "
          f"{len(skipped)} failed requests left out, listed in {folder / MARKER}); murgat view {folder}", file=sys.stderr)
    _RUNS[key] = summary
    return summary


def _figure(name: str, values: list[Any], args: Any) -> float | None:
    iv = run_of(values, args).get(name)
    return None if not isinstance(iv, dict) or iv.get("value") is None else float(iv["value"])


def _ci(name: str, values: list[Any], args: Any) -> list[float | None]:
    iv = run_of(values, args).get(name)
    if not isinstance(iv, dict):
        return [None, None]
    return [None if iv.get(k) is None else float(iv[k]) for k in ("ci_low", "ci_high")]


def agg_murgat_s(values: list[Any], args: Any = None) -> float | None:
    """MURGAT-S of the run (mean over answers)."""
    return _figure("murgat_s", values, args)


def agg_murgat_s_ci(values: list[Any], args: Any = None) -> list[float | None]:
    """MURGAT-S's bootstrap 95% CI, ``[low, high]``."""
    return _ci("murgat_s", values, args)


def agg_accuracy(values: list[Any], args: Any = None) -> float | None:
    """Answer accuracy over the answers with a gold answer (``None`` when none has one)."""
    return _figure("accuracy", values, args)


def agg_accuracy_ci(values: list[Any], args: Any = None) -> list[float | None]:
    """Accuracy's bootstrap 95% CI."""
    return _ci("accuracy", values, args)


def agg_attributed_accuracy(values: list[Any], args: Any = None) -> float | None:
    """Strict attributed accuracy: the answer is right and its MURGAT-S reaches the threshold."""
    return _figure("attributed_accuracy", values, args)


def agg_attributed_accuracy_ci(values: list[Any], args: Any = None) -> list[float | None]:
    """Attributed accuracy's bootstrap 95% CI."""
    return _ci("attributed_accuracy", values, args)
