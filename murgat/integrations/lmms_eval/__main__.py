"""``python -m murgat.integrations.lmms_eval [task DATA --media-root DIR --judge J --out FOLDER]``.

Alone it prints murgat's task folder (:func:`~murgat.integrations.lmms_eval.task_folder`). ``task``
writes an lmms-eval task for a dataset (any that ``murgat generate`` reads): ``FOLDER/NAME.jsonl``, one
document per item with its media file resolved inside ``--media-root`` (an item whose media is not
found stops it, named), and ``FOLDER/NAME.yaml``, which includes murgat's template and names that
dataset; point ``lmms-eval --include_path`` at ``FOLDER``. The judge's options are checked now as
``murgat score``'s settings; the judge itself is first built when lmms-eval aggregates (after the model ran).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from murgat.commands.imports.lmms_samples import doc_of
from murgat.core.inputs import InputError
from murgat.integrations.lmms_eval import TEMPLATE, task_folder

HEADER = "# an lmms-eval task written by python -m murgat.integrations.lmms_eval task"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m murgat.integrations.lmms_eval",
                                description="print murgat's lmms-eval task folder, or write a task for a dataset")
    sub = p.add_subparsers(dest="cmd")
    t = sub.add_parser("task", help="write NAME.yaml and NAME.jsonl into --out (then lmms-eval --include_path OUT)")
    t.add_argument("data", help="the questions: murgat JSONL/JSON, CSV, hf:FOLDER, videommmu:, nextgqa:, worldsense:")
    t.add_argument("--media-root", default=None, help="folder the media names resolve in (default: the data's folder)")
    t.add_argument("--judge", required=True, help="murgat score's --judge, e.g. embedded, gemini:gemini-2.5-flash")
    t.add_argument("--judge-option", action="append", default=[], metavar="K=V", help="murgat score's --judge-option")
    t.add_argument("--out", required=True, help="folder for the task files")
    t.add_argument("--name", default="murgat_cited_video", help="the task's name (default murgat_cited_video)")
    t.add_argument("--mode", choices=("cite", "base"), default="cite", help="ask for citations (cite) or not (base)")
    t.add_argument("--media", choices=("frames", "frames+audio", "video"), default="frames", help="what the model is sent")
    t.add_argument("--fps", type=float, default=1.0, help="frames per second sent (frames modes)")
    t.add_argument("--max-frames", type=int, default=32, help="most frames sent per video")
    return p


def write_task(a: argparse.Namespace) -> Path:
    """Write the task's dataset and YAML (see the module docstring); the YAML's path."""
    from murgat.core.datasets import dataset_path, load_dataset
    from murgat.core.inputs import media_roots, resolve_media
    from murgat.engine.folder import write_atomic
    from murgat.settings.score import ScoreSettings

    ScoreSettings.model_validate({"input": "-", "out": "-", "judge": a.judge, "judge_option": a.judge_option})
    root = media_roots(a.media_root, dataset_path(a.data))[0].resolve()
    docs, missing = [], []
    for it in load_dataset(a.data):
        path = resolve_media(it, root)
        if path is None:
            missing.append(it.id)
            continue
        docs.append(doc_of(it, root, path.resolve(), a.mode, a.judge, a.judge_option, a.name))
    if missing:
        raise InputError(f"{len(missing)} item(s) whose media is not in {root}: {', '.join(missing[:10])}")
    out = Path(a.out).resolve()
    yaml_path = out / f"{a.name}.yaml"
    if yaml_path.exists() and not yaml_path.read_text(encoding="utf-8").startswith(HEADER):
        raise InputError(f"{yaml_path} exists and was not written by this command: not written over")
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / f"{a.name}.jsonl", "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs))
    kwargs = {"media": a.media, "fps": a.fps, "max_frames": a.max_frames}
    write_atomic(yaml_path, "\n".join([
        HEADER, f"include: {json.dumps(str(task_folder() / TEMPLATE))}", f"task: {json.dumps(a.name)}",
        "dataset_kwargs:", "  data_files:", f"    test: {json.dumps(str(out / (a.name + '.jsonl')))}",
        "lmms_eval_specific_kwargs:", f"  default: {json.dumps(kwargs)}", ""]))
    return yaml_path


def main(argv: list[str] | None = None) -> int:
    a = _parser().parse_args(argv)
    if a.cmd is None:
        print(task_folder())
        return 0
    try:
        path = write_task(a)
    except (InputError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path} and its dataset; run: lmms-eval --include_path {path.parent} --tasks {a.name} "
          f"--log_samples --output_path OUT ...")
    return 0


if __name__ == "__main__":
    sys.exit(main())
