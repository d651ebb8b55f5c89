"""The judge probes of a run, and the account of its judges that its summary keeps.

Between a command's ``open`` (its judges made, its configuration final) and its first item, the
engine asks the probes (:mod:`murgat.judging.probes`) of the paths the command declares
(:meth:`Command.probe_paths <murgat.engine.command.Command.probe_paths>`), as ``--probes`` says
(:func:`murgat.judging.probes.runner.paths_to_probe`: ``auto`` asks the judges that are models, ``on`` and
``require`` every judge, ``off`` nothing). This module is the one place that does it for every
command:

* :func:`probe_before_run` asks them on the run's own judges (same objects, same response cache,
  same request settings), on an event loop of its own: the providers' clients are closed after it,
  and the item loop opens its own. Their call pools join the run's, so the probes' requests are
  counted in ``this_invocation`` with the items' (their cost too: they are the same judges). A
  ``require`` run whose probes failed stops here with exit 2; nothing of the items was started.
* :func:`judge_account` is what the summary records beside the command's figures: ``probes`` (the
  report), ``judge_identity`` (each judge as the provider named itself) and ``sent_media`` (what this
  invocation's requests carried: images, pixels, audio and clip seconds, bytes).

Neither enters a fingerprint (the probes decide nothing about the items), so a folder resumes with
any ``--probes``, and ``--probes off`` sends exactly the requests of a run without probes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from murgat.core.jsonl import loads_line
from murgat.engine.errors import SettingsError
from murgat.engine.scaleout.driver import summed_stats
from murgat.judges.account import SentTotals, sent_totals
from murgat.judging.probes.results import ProbeReport, Setting
from murgat.judging.probes.runner import gate_exit, paths_to_probe, probes_before_run, require_message
from murgat.media import stages
from murgat.media.interrupt import run_async

if TYPE_CHECKING:
    from murgat.engine.run_state import Run
    from murgat.judging.probes.paths import ProbePath


def recorded_probes(config_path: Path) -> dict[str, Any] | None:
    """The probe report a folder's ``config.json`` holds from an earlier invocation (``None``: none,
    or no readable config). It is kept there until new probes replace it: a resume with ``--probes
    off``, or a ``require`` run refused before its items, does not erase what was found before."""
    try:
        doc = loads_line(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = doc.get("config", {}).get("probes") if isinstance(doc, dict) and isinstance(doc.get("config"), dict) else None
    return found if isinstance(found, dict) else None


def probe_before_run(probe_paths: Callable[[], Sequence[ProbePath]], run: Run) -> ProbeReport | None:
    """The probes of the paths the command declares (``probe_paths``: its
    :meth:`~murgat.engine.command.Command.probe_paths`, asked only when probes are asked), before the first item
    (see the module docstring); ``None`` when none is asked (``--probes off``, a dry run, or no path to ask)."""
    s = run.s
    setting: Setting = getattr(s, "probes", "off")
    if setting == "off" or run.outputs.scratch or getattr(s, "dry_run", False):  # a dry run sends nothing
        return None
    paths = paths_to_probe(setting, list(probe_paths()))
    if not paths:
        return None
    stages.stage(f"asking the judge probes ({len(paths)} judge path(s)) before the first item")

    async def ask() -> ProbeReport | None:
        try:
            return await probes_before_run(setting, paths, seed=getattr(s, "probe_seed", 0))
        finally:
            await run.judges.aclose()  # the clients belong to this event loop; the item loop opens its own

    report = run_async(ask())
    run.pools.extend({id(p.pool): p.pool for p in paths}.values())  # counted with the run's (a shared pool once)
    if report is not None and gate_exit(report) == 2:
        raise SettingsError(require_message(report))
    return report


def _media_of_ray(run: Run) -> SentTotals:
    """The media account the Ray workers sent back (their judges' flat ``sent_*`` counters; image
    sizes and audio parts are counted only where the judge lives)."""
    total = SentTotals()
    for report in run.ray:
        for st in summed_stats(report)[2].values():
            total.merge(SentTotals(requests=st.sent_requests, images=st.sent_images, pixels=st.sent_pixels,
                                   unlabelled_images=st.sent_unlabelled_images, audio_s=st.sent_audio_s,
                                   video_s=st.sent_video_s, request_bytes=st.sent_bytes,
                                   media_warnings=st.media_warnings))
    return total


def judge_account(run: Run) -> dict[str, Any]:
    """``probes``, ``judge_identity`` and ``sent_media`` of this invocation (see the module docstring)."""
    made = [getattr(j, "inner", j) for j in run.judges.made]  # a recording wrapper's judge is the one asked
    media = sent_totals(made)
    if run.ray:
        media.merge(_media_of_ray(run))
    out: dict[str, Any] = {
        "judge_identity": [j.identity().model_dump(mode="json") for j in made if callable(getattr(j, "identity", None))],
        "sent_media": media.model_dump(mode="json"),
    }
    if run.probes is not None:
        out["probes"] = run.probes.model_dump(mode="json")
    return out


def with_judge_account(summary: Any, run: Run) -> Any:
    """``summary`` with :func:`judge_account` in it: in ``extra`` of a score run's summary, at the top of
    the other commands' summary documents."""
    account = judge_account(run)
    extra = getattr(summary, "extra", None)
    if isinstance(extra, dict):
        extra.update(account)
    elif isinstance(summary, dict):
        summary.update(account)
    return summary


def identity_lines(run: Run) -> list[str]:
    """The judges' identity warnings (a floating alias, a name answered by another model, a model or
    serving configuration that changed mid-run) as a run prints them after its summary: they were in
    ``summary.json`` only. Those the probes already printed (same words) are not repeated."""
    said = set(run.probes.identity_warnings()) if run.probes is not None else set()
    made = [getattr(j, "inner", j) for j in run.judges.made]
    out: list[str] = []
    for j in made:
        if not callable(getattr(j, "identity", None)):
            continue
        for w in j.identity().warnings:
            line = f"warning: {w}"
            if w not in said and line not in out:
                out.append(line)
    return out


def probe_lines(report: ProbeReport | None) -> list[str]:
    """What a run prints about its probes after its summary: the loud warning again when one failed,
    else one line saying they passed."""
    if report is None:
        return []
    return report.warning_lines() or [f"note: {report.headline()}"]
