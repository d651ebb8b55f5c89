"""murgat in lmms-eval: a task that asks a model for cited answers about the videos of a dataset and
scores them with MURGAT-S (its CI, accuracy, attributed accuracy), tested with lmms-eval 0.7.3.

::

    python -m murgat.integrations.lmms_eval task questions.jsonl --media-root media --judge embedded --out tasks
    lmms-eval --model openai_compatible --model_args model=M,base_url=URL --tasks murgat_cited_video \\
        --include_path tasks --log_samples --output_path out

``task`` writes ``tasks/murgat_cited_video.yaml`` and its dataset (``.jsonl``: each item with its media
resolved now, as ``murgat score`` would resolve it); the YAML includes murgat's template
(:func:`task_folder`, ``tasks/_murgat_cited_video_yaml``), whose functions are
:mod:`murgat.integrations.lmms_eval.task`. ``python -m murgat.integrations.lmms_eval`` alone prints
that folder, for a YAML written by hand (``include: FOLDER/_murgat_cited_video_yaml``).
``murgat import lmms-eval SAMPLES.jsonl --out DIR`` turns the samples log into a murgat input.

Nothing here imports lmms_eval: lmms-eval imports these functions.
"""

from __future__ import annotations

from pathlib import Path

TEMPLATE = "_murgat_cited_video_yaml"


def task_folder() -> Path:
    """The folder of murgat's task template and its ``utils.py``."""
    return Path(__file__).resolve().parent / "tasks"
