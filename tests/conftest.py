"""Shared test fixtures: where the real media and annotations live, and small helpers.

The suite passes in a clone with nothing beside it: the real files it needs whose licence
allows copying are in the repository — ``examples/media`` (the demo's media) and
``tests/data/real`` (the rest; ``tests/data/real/LICENSES.md`` lists each file, its origin and
licence). Files that may not be copied (unlicensed, non-commercial or AGPL data) are optional:
a test that needs one skips, naming the file and ``MURGAT_REAL_DATA``, the folder to look in
(laid out as the team's ``shared/data/real``: ``media/``, ``annotations/``). Without the
variable, ``../shared/data/real`` beside the clone is used when it is there.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: OpenMP threads that wait for work sleep instead of spinning: the suite runs one worker per core and
#: CTranslate2 (ASR) computes with two OpenMP threads of its own, so spinning threads take the cores the other
#: worker's threads need (measured on 2 cores: two labelled-claims runs side by side take 92 s each with
#: libgomp's default spin and 49 s passive). Set before any test loads the library; children inherit it.
#: The wait policy decides how idle threads wait, never what they compute, so no result depends on it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
EXAMPLE_MEDIA = EXAMPLES / "media"
#: the real files bundled with the tests (see its LICENSES.md)
BUNDLED = ROOT / "tests" / "data" / "real"
#: the 24-question NExT-GQA sample in the official formats (MIT), bundled
NEXTGQA_SAMPLE = BUNDLED / "nextgqa-sample"
#: optional real data that may not be copied into the repository
REAL = Path(os.environ.get("MURGAT_REAL_DATA") or ROOT.parent / "shared" / "data" / "real")


def _optional(what: str, rel: str) -> str:
    return (f"optional real {what} {rel!r} is not bundled (its licence does not allow copying it into the "
            f"repository; see tests/data/real/LICENSES.md) and not found under {REAL}: set MURGAT_REAL_DATA to a "
            "folder laid out as shared/data/real (media/, annotations/) to run this test")


def real_media(name: str) -> Path:
    """A real media file: the bundled copy (``examples/media``, ``tests/data/real/media``), else the
    optional folder; a test skips (naming the file and ``MURGAT_REAL_DATA``) when it is nowhere."""
    for p in (EXAMPLE_MEDIA / name, BUNDLED / "media" / name, REAL / "media" / name):
        if p.exists():
            return p
    pytest.skip(_optional("media", name))


def real_annotation(rel: str) -> Path:
    """A real annotation file (``rel`` under ``annotations/``): bundled, else the optional folder, else a skip."""
    for p in (BUNDLED / "annotations" / rel, REAL / "annotations" / rel):
        if p.exists():
            return p
    pytest.skip(_optional("annotation", rel))


@pytest.fixture(scope="session")
def example_media() -> Path:
    return EXAMPLE_MEDIA


@pytest.fixture(scope="session")
def friday() -> Path:
    return real_media("friday.mp4")


@pytest.fixture(scope="session")
def nasa() -> Path:
    return real_media("nasa_13013.mp4")


@pytest.fixture(scope="session")
def bikes() -> Path:
    return real_media("bikes.mp4")


@pytest.fixture(scope="session")
def jfk() -> Path:
    return real_media("jfk.flac")


@pytest.fixture(scope="session")
def long_tone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 minutes of a 64x36, 1 fps test pattern with a 440 Hz tone (8 kHz AAC), made in about two
    seconds: longer than ``murgat.media.audio.LONG_AUDIO_S``, so every long-file path runs (audio read in
    chunks, windowed text channels, sampled audio over the 5-minute request cap)."""
    import subprocess

    out = tmp_path_factory.mktemp("long") / "long12.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=64x36:rate=1", "-f", "lavfi",
                    "-i", "sine=frequency=440:sample_rate=8000", "-t", "720", "-c:v", "libx264", "-preset", "ultrafast",
                    "-g", "10", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "16k", "-ac", "1", str(out)], check=True)
    return out


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep the test session's media cache out of the user's home, for every process the session starts.

    Set for the whole session, before any module- or session-scoped fixture runs: a Ray instance a
    module starts (and the workers it forks) reads the variable once, when it starts, so a per-test
    setting left them on ``~/.cache/murgat/cache``. The xdist workers of one session share the folder:
    the cache is content-addressed and safe across processes (``murgat.media.cache``), so a file one
    worker transcribed is not transcribed again by the other. A test that needs a cold cache sets its
    own ``MURGAT_CACHE_DIR``."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the session's folder, above each worker's own (popen-gw0, ...)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MURGAT_CACHE_DIR", str(base / "murgat-cache"))
        yield


# ---------------------------------------------------------------- test tiers

#: the tiers, cheapest first: ``unit`` starts nothing (``make test-fast`` runs it), ``integration``
#: starts servers or subprocesses (the CLI in a child process, a stand-in HTTP judge), ``e2e`` runs
#: Ray, a browser, ASR / OCR / sound models or a real model. ``make test`` runs all three.
TIERS = ("unit", "integration", "e2e")

#: a file's tier when most of its tests start the same thing (paths relative to ``tests/``); a file
#: not named here is ``unit``. One table, so a file's tier is read in one place and changed in one.
FILE_TIERS: dict[str, str] = {
    # Ray, browsers, ASR / OCR / sounds / real models
    "judges/test_embedded.py": "e2e", "judges/test_embedded_channels.py": "e2e", "judges/test_embedded_no_needs_evidence.py": "e2e",
    "judges/test_hf.py": "e2e", "judges/test_embedded_voices_real.py": "e2e", "judges/test_real_servers.py": "e2e",
    "human_eval/test_embeddings.py": "e2e",
    "media/test_asr_ocr.py": "e2e", "media/test_sounds.py": "e2e", "media/test_windowed_text.py": "e2e",
    "engine/test_asr_preflight.py": "e2e", "engine/test_probing.py": "e2e",
    "commands/generate/test_generate.py": "e2e", "integrations/test_inspect_ai.py": "e2e",
    "integrations/test_lmms_eval.py": "integration",
    "engine/scaleout/test_ray.py": "e2e", "engine/scaleout/test_ray_commands.py": "e2e",
    "engine/scaleout/test_services_pause.py": "e2e", "engine/scaleout/test_core_without_ray.py": "e2e",
    "commands/score/test_performance_paths.py": "e2e", "commands/annotate/test_annotate.py": "e2e",
    "report/test_viewer_browser.py": "e2e", "report/test_viewer_gold.py": "e2e",
    "report/test_viewer_heard.py": "e2e", "programs/test_find.py": "e2e", "commands/judge_check/test_judge_check.py": "e2e",
    "programs/test_program_engine.py": "e2e", "test_readme_commands.py": "e2e",
    # servers (the stand-in judge on 127.0.0.1) and subprocesses (the CLI, a second process)
    "judges/test_account.py": "integration", "judges/test_budget.py": "integration",
    "judges/test_cache.py": "integration", "judges/test_gemini_recorder.py": "integration",
    "judges/test_openai_answers.py": "integration", "media/test_probe.py": "integration",
    "media/test_voices.py": "integration",
    "engine/test_newcomer_faults.py": "integration", "engine/test_outputs.py": "integration",
    "commands/reflect/test_reflect.py": "integration", "commands/generate/test_long_sound.py": "integration",
    "commands/ground/test_ground_answers.py": "integration", "commands/gold/test_importers.py": "integration",
    "commands/ground/test_run.py": "integration", "commands/score/test_cache_compat.py": "integration",
    "commands/score/test_disk_full.py": "integration", "commands/score/test_hardening.py": "integration",
    "commands/score/test_judge_faults.py": "integration", "commands/score/test_long_media.py": "integration",
    "commands/score/test_resume_and_bad_items.py": "integration", "test_cli.py": "integration",
    "commands/export/test_export.py": "integration", "commands/media/test_media_cli.py": "integration",
    "commands/media/test_media_cli_limits.py": "integration", "engine/test_runlock.py": "integration",
    "commands/view/test_view_corrected.py": "integration", "report/test_viewer_files.py": "integration",
    "judging/probes/test_media.py": "integration", "judging/probes/test_probes_standin.py": "integration",
    "programs/test_hostile.py": "integration", "judges/test_http_client.py": "integration", "judges/test_body_cap.py": "integration",
    "engine/test_interrupt.py": "integration", "engine/test_interrupt_cold.py": "e2e",
    # no server or subprocess, but whole runs or long media decoding in process: seconds per test, so not
    # in the quick tier (measured: each of these files' tests takes over 2 s on average on a loaded machine)
    "media/test_clips_cache.py": "integration", "media/test_limits.py": "integration",
    "media/test_long_audio.py": "integration", "media/test_seekframes.py": "integration",
    "commands/calibrate/test_calibrate_faithfulness.py": "integration",
    "commands/faithfulness/test_faithfulness.py": "integration",
    "commands/faithfulness/test_faithfulness_answers.py": "integration",
    "commands/faithfulness/test_faithfulness_by.py": "integration", "judging/test_channels.py": "integration",
    "commands/score/test_repeats.py": "integration", "commands/score/test_score_answers.py": "integration",
    "commands/score/test_score_by.py": "integration", "commands/annotate/test_annotate_damaged.py": "integration",
    "test_layers.py": "integration",
}

#: what a test starts, read from the fixtures it uses wherever its file is: a test that asks for
#: one of these is at least that tier
FIXTURE_TIERS: dict[str, str] = {"browser": "e2e", "ray_instance": "e2e", "ray_runs": "e2e", "tiny_qwen": "e2e"}


#: files whose tests share one expensive instance, by the group that keeps them in one xdist worker
#: (``--dist loadgroup``, the Makefile's; :func:`pytest_xdist_make_scheduler`): the scale-out tests share one session Ray instance
#: (``tests/engine/scaleout/conftest.py``), started once instead of once per module and worker, and
#: never two Ray instances at once on the machine's cores
FILE_GROUPS: dict[str, str] = {"engine/scaleout/test_ray.py": "ray", "engine/scaleout/test_ray_commands.py": "ray"}


def _in_tests(path: Path) -> str | None:
    """A test file's path relative to ``tests/``, as the tables here name it (None: not under tests/)."""
    try:
        return path.resolve().relative_to(ROOT / "tests").as_posix()
    except ValueError:
        return None


def tier_of(item: pytest.Item) -> str:
    """The one tier of a collected test: the highest of its file's, its fixtures' and ``slow``'s
    (real ASR/OCR/model work is ``e2e``)."""
    found = [FILE_TIERS.get(_in_tests(Path(str(item.fspath))) or "", "unit")]
    found += [FIXTURE_TIERS[f] for f in getattr(item, "fixturenames", ()) if f in FIXTURE_TIERS]
    if item.get_closest_marker("slow") is not None:
        found.append("e2e")
    return max(found, key=TIERS.index)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test with its tier; a tier written on a test by hand is refused (the tables here
    are the one place tiers are assigned, so that ``-m unit`` means one thing)."""
    for item in items:
        by_hand = [t for t in TIERS if item.get_closest_marker(t) is not None]
        if by_hand:
            raise pytest.UsageError(f"{item.nodeid}: marked {by_hand[0]!r} by hand; tiers are assigned in "
                                    "tests/conftest.py (FILE_TIERS, FIXTURE_TIERS)")
        item.add_marker(getattr(pytest.mark, tier_of(item)))


def group_of(config: pytest.Config, nodeid: str) -> str:
    """The scheduling unit of a test id: its file's group (:data:`FILE_GROUPS`), else the test alone."""
    return FILE_GROUPS.get(_in_tests(config.rootpath / nodeid.split("::", 1)[0]) or "", nodeid)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, which the dev extra installs
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` with the groups of :data:`FILE_GROUPS`: xdist's own loadgroup reads
    ``xdist_group`` marks through a test-id suffix that pytest 9.2 no longer keeps
    (pytest-dev/pytest-xdist#1386: every test is then scheduled alone), so the groups are given to
    its scheduler here, from the table, by test id. Other ``--dist`` modes are xdist's own."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class FileGroupScheduling(LoadGroupScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return group_of(self.config, nodeid)

    return FileGroupScheduling(config, log)


def _hypothesis_profiles() -> None:
    """Property tests run with no deadline anywhere (a deadline is a wall-clock limit that a loaded
    machine breaks) and, under CI, derandomized: the same examples on every run, so a red CI run is
    the code's doing and reproduces. ``HYPOTHESIS_PROFILE`` picks one by name."""
    try:
        from hypothesis import settings
    except ImportError:  # the dev extra is not installed: no property test can run anyway
        return
    settings.register_profile("murgat", deadline=None)
    settings.register_profile("ci", deadline=None, derandomize=True, database=None, print_blob=True)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "murgat"))


_hypothesis_profiles()
