"""``report.html``: the viewer page of one or more run folders, with the media and cited evidence
it shows (what ``murgat score`` writes after a run and ``murgat view`` rewrites)."""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from murgat.core.terminal import for_terminal

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from murgat.core.schema import ResponseResult

MAX_ITEMS = 3000  # items shown in full detail; larger runs say so on the page


def folder_name(text: str, key: str | None = None) -> str:
    """A file name for ``text`` that is readable, bounded and collision-free: up to 40 of its
    characters (others than letters, digits, ``-`` and ``_`` become ``_``) and 12 hex digits of
    the SHA-256 of ``key`` (default ``text``). ``p/q`` and ``p_q`` differ; a 300-character id fits
    a file system's 255-byte name limit."""
    prefix = "".join(ch if (ch.isascii() and ch.isalnum()) or ch in "-_" else "_" for ch in text[:40])
    return f"{prefix}-{hashlib.sha256((text if key is None else key).encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


def save_evidence(run: Path, results: list[Any], media_root: Path | None, input_path: str | None = None,
                  allow_outside_root: bool = False) -> dict[str, dict[str, list[str]]]:
    """What the judge was sent, per cited segment: every frame (JPEG, in order) of a visual segment,
    the audio of an audio segment (WAV; one per excerpt of a long one the run's evidence limits
    sampled), saved under ``RUN/evidence/<item>/`` for the viewer
    (paths returned relative to ``RUN``). Media are found as scoring found them, root check included."""
    from murgat.core.inputs import MediaOutsideRoot, resolve_media
    from murgat.core.schema import Item
    from murgat.engine.outputs import claim_output
    from murgat.media.errors import MediaError
    from murgat.media.evidence import EvidenceConfig, build_evidence
    from murgat.media.limits import EvidenceLimits

    run_cfg = read_config(run).get("config") or {}
    ev_cfg = EvidenceConfig.model_validate(run_cfg.get("evidence") or {})
    # the run's evidence limits (a long audio citation was sent as excerpts: those are saved)
    limits = EvidenceLimits.model_validate(run_cfg.get("evidence_limits") or {})
    out: dict[str, dict[str, list[str]]] = {}
    root: Any = None  # RUN/evidence, claimed when the first segment is saved
    for r in results:
        if r.error or not r.video:
            continue
        try:
            media = resolve_media(Item(id=r.id, media=r.video), media_root, input_path,
                                  allow_outside_root=allow_outside_root)
        except (MediaOutsideRoot, ValueError):
            media = None
        if media is None:
            continue
        cites = {(c.modality, c.start, c.end): c for sr in r.sentences for f in sr.facts for c in f.citations if c.valid}
        if not cites:
            continue
        try:
            ev = build_evidence(media, list(cites.values()), ev_cfg, limits=limits)
        except MediaError:
            continue
        if root is None:
            root = claim_output(run / "evidence", role="folder", what=f"{run / 'evidence'}")
        out[r.id] = _save_segments(root, folder_name(r.id), ev, list(cites.values()))
    return out


def _save_segments(root: Any, folder: str, ev: Any, cites: list[Any]) -> dict[str, list[str]]:
    """Each available segment's files under ``RUN/evidence/<folder>/`` through the evidence folder's
    claim ``root``: every frame sent (JPEG), or each audio piece heard (WAV); paths relative to RUN."""
    from murgat.media.audio import wav_bytes
    from murgat.media.frames import encode_image

    got: dict[str, list[str]] = {}
    for seg, c in zip(sorted(ev.segments, key=lambda s: s.citation_index), cites, strict=True):
        if not seg.available:
            continue
        name = f"{seg.modality}_{c.start}_{c.end}".replace(".", "p")
        if seg.modality == "visual" and seg.frames:
            # every frame the judge was sent, not one per segment: a claim about motion or a
            # short event can hinge on a frame the middle one does not show
            shots = []
            for k, fr in enumerate(seg.frames):
                shot = f"{name}_{k:02d}_t{fr.time:.2f}".replace(".", "p") + ".jpg"
                root.file(f"{folder}/{shot}").write_bytes(encode_image(fr.image, "jpeg"))
                shots.append(f"evidence/{folder}/{shot}")
            got[f"{c.modality}|{c.start}|{c.end}"] = shots
        elif seg.modality == "audio" and seg.audio is not None:
            # one WAV per piece the judge heard: the whole segment, or each excerpt of a sampled one
            pieces = seg.audio_pieces()
            wavs = []
            for k, (a, b, x) in enumerate(pieces):
                wav = name if len(pieces) == 1 else f"{name}_{k:02d}_t{a:.2f}-{b:.2f}".replace(".", "p")
                root.file(f"{folder}/{wav}.wav").write_bytes(wav_bytes(x, seg.sr))
                wavs.append(f"evidence/{folder}/{wav}.wav")
            got[f"{c.modality}|{c.start}|{c.end}"] = wavs
    return got


def place_evidence(run: Path, evidence: dict[str, dict[str, list[str]]], report_dir: Path,
                   copy: bool) -> dict[str, dict[str, list[str]]]:
    """Evidence paths (relative to ``run``) as the report at ``report_dir`` must name them: as they
    are when the report is in the run folder; else copied to ``report_dir/evidence/<run>/`` with
    ``copy`` (the folder is portable, like ``--copy-media``), or linked by relative path."""
    if report_dir.resolve() == run.resolve():
        return evidence
    base = Path("evidence") / folder_name(run.name, str(run.resolve()))

    from murgat.engine.outputs import claim_output

    def place(ref: str) -> str:
        if copy:
            dest = report_dir / base / Path(ref).relative_to("evidence")
            claim_output(dest, role="file", inputs=[run / ref]).copy_from(run / ref)
            return dest.relative_to(report_dir).as_posix()
        return Path(os.path.relpath((run / ref).resolve(), report_dir.resolve())).as_posix()

    return {item: {key: [place(ref) for ref in files] for key, files in refs.items()} for item, refs in evidence.items()}


def run_labels(runs: Sequence[Path]) -> list[str]:
    """Each run's folder name, with as many of its parent folders as it takes to tell the runs apart
    (a sweep's ``effort-low/run`` and ``effort-high/run``, not ``run`` and ``run``)."""
    parts = [Path(os.path.abspath(r)).parts for r in runs]
    distinct, longest = len(set(parts)), max((len(p) for p in parts), default=0)
    for k in range(1, longest + 1):
        labels = ["/".join(p[-k:]) for p in parts]
        if len(set(labels)) == distinct:
            return labels
    return [str(r) for r in runs]


def title_names(runs: Sequence[Path]) -> list[str]:
    """The runs as a page title names them: :func:`run_labels`, each with at least its parent folder, so
    that the pages of one sweep (``effort-low/run``, ``effort-high/run``, each viewed alone) are not
    all titled "run" in a row of browser tabs."""
    out = []
    for label, run in zip(run_labels(runs), runs, strict=True):
        parts = Path(os.path.abspath(run)).parts
        out.append(label if "/" in label or len(parts) < 3 else "/".join(parts[-2:]))
    return out


def read_config(run: Path) -> dict[str, Any]:
    """``RUN/config.json`` as a JSON object (``{}`` when there is none); a damaged one is
    :class:`~murgat.engine.runs.RunUnreadable`, named, instead of a traceback."""
    from murgat.engine.runs import read_summary

    return read_summary(run, "config.json")


def read_score_summary(run: Path) -> Any:
    """``RUN/summary.json`` as a :class:`~murgat.core.schema.RunSummary`, or :class:`RunUnreadable` naming
    the file and why (missing, cut short, not a score run's summary): :func:`murgat.engine.folder.score_summary`."""
    from murgat.engine.folder import score_summary

    return score_summary(run)


@dataclass
class _Page:
    """What every run's part of one page is built with (see :func:`build_report`)."""

    out: Path
    copy_media: bool
    media_root: str | None
    with_evidence: bool
    allow_outside_root: bool
    by: tuple[str, ...]
    fields_of: Callable[[ResponseResult], Mapping[str, Any]] | None
    #: the media refusals of every run, said once each after the page is built
    refused: list[str]
    #: runs whose folder the caller holds open (``score``'s own, just compacted): read from its scan
    open_folders: Mapping[Path, Any]


def _run_page(page: _Page, run: Path, label: str, cfg: dict[str, Any], summary: Any,
              ids: set[str] | None) -> tuple[dict[str, Any], list[ResponseResult], list[str]]:
    """One run's part of the page: its document, its records (slim) and the lines of its results
    file that are not records. ``ids``: only these items (``murgat annotate --sample``)."""
    from murgat.engine.folder import RunFolder
    from murgat.report.viewer import breakdown_views, grounding_docs, run_doc

    held = page.open_folders.get(run)
    rd = held if held is not None else RunFolder(run, repair=False)
    seen = len(rd.notices) if held is not None else 0  # what the holder was told is its run's, not the page's
    root = Path(page.media_root) if page.media_root else (Path(cfg["media_root"]) if cfg.get("media_root") else None)
    slim = rd.latest_results(slim=True)  # every item, without per-sentence detail (memory stays flat)
    if ids is not None:
        slim = [r for r in slim if r.id in ids]
    order = {r.id: k for k, r in enumerate(slim[:MAX_ITEMS])}
    # full records stream from the file one at a time (3,000 of them held at once doubled the
    # peak memory of a 10,000-item run); only the page's item dicts are kept
    input_path = cfg.get("input")  # scoring's media root when it had no --media-root
    evidence = None
    if page.with_evidence:
        evidence = place_evidence(run, save_evidence(run, list(rd.iter_latest(set(order))), root, input_path,
                                                     page.allow_outside_root), page.out.parent, page.copy_media)
    settings: dict[str, Any] = {k: cfg.get(k) for k in ("judge_entail", "judge_verify", "precision_mode", "empty_policy",
                                                         "evidence", "verify_variant", "decompose_variant",
                                                         "entail_variant") if k in cfg}
    grounding, gold_note = grounding_docs(run)
    doc = run_doc(label, summary, rd.iter_latest(set(order)), report_dir=page.out.parent, media_root=root,
                  copy_media=page.copy_media, config=settings, evidence=evidence, input_path=input_path,
                  allow_outside_root=page.allow_outside_root, refused=page.refused, grounding=grounding)
    if gold_note:
        doc["notes"] = ((doc.get("notes") or "") + " " + gold_note).strip()
    notices = rd.notices[seen:]
    if notices:  # lines that are not records: on the page and on stderr, never dropped silently
        doc["notes"] = ((doc.get("notes") or "") + " " + " ".join(notices)).strip()
    doc["items"].sort(key=lambda d: order.get(d["id"], len(order)))
    if page.by:  # only when asked: a page without --by is the page it always was
        from murgat.core.breakdown import UnknownField, check_by, fields_available, record_fields

        try:
            check_by(page.by, fields_available(map(page.fields_of or record_fields, slim)))
        except UnknownField as exc:
            raise UnknownField([f"{n} (in {run})" for n in exc.unknown], exc.available) from None
        doc["breakdowns"] = breakdown_views(slim, page.by, summary, page.fields_of)
    if len(slim) > MAX_ITEMS:
        doc["notes"] = (doc.get("notes") or "") + f" The page shows the first {MAX_ITEMS} of {len(slim)} items."
    return doc, slim, list(notices)


def _digest_items(items: list[dict[str, Any]]) -> None:
    """The labelling page's digests of what is labelled (the response, each sentence and fact), which
    every exported label line carries so that ``murgat calibrate`` can tell labels of other text."""
    from murgat.human_eval.labels import response_digest, text_digest

    for it in items:
        sents = it.get("sentences") or []
        it["digest"] = response_digest([s["text"] for s in sorted(sents, key=lambda s: s["index"])])
        for s in sents:
            s["digest"] = text_digest(s["text"])
            for f in s.get("facts") or []:
                f["digest"] = text_digest(f["text"])


def build_report(runs: list[Path], out: Path, *, copy_media: bool = False, media_root: str | None = None,
                 with_evidence: bool = False, allow_outside_root: bool = False, annotator: str | None = None,
                 sample: dict[str, Any] | None = None, corrected: dict[str, Any] | None = None,
                 by: Sequence[str] = (),
                 fields_of: Callable[[ResponseResult], Mapping[str, Any]] | None = None,
                 open_folders: Mapping[Path, Any] | None = None) -> Path:
    """Write the page for one or more runs (with ``annotator``, the labelling page of the first run:
    ``murgat annotate``; with ``sample`` = ``{"ids", "design"}`` only the sampled items, the design
    shown and exported with every label; ``corrected``: the first run's human-valid figures,
    ``murgat view --human``; ``by``: each run's figures per group of these item fields, read from the
    records with ``fields_of`` (default :func:`murgat.core.breakdown.record_fields`), ``--by``);
    ``open_folders``: the :class:`~murgat.engine.folder.RunFolder` of a run the caller holds (``score``'s
    page of its own run reads the records it already scanned instead of reading 100,000 lines again).
    ``--copy-media`` and ``--save-evidence`` find media as scoring did (``--media-root``, else the input's
    folder) and refuse what scoring refused; each refusal is one
    ``warning:`` line on stderr, and so is each line of a results file that is not a record.

    ``out`` is claimed first (:mod:`murgat.engine.outputs`: not a run's own file, not an input,
    no link out of its folder, a device streamed into), so a refused page costs no work; a
    damaged ``summary.json`` or ``config.json`` is :class:`~murgat.engine.runs.RunUnreadable`."""
    from murgat.engine.outputs import claim_output
    from murgat.report.viewer import comparison_doc, write_viewer

    configs = [read_config(run).get("config") or {} for run in runs]
    summaries = [read_score_summary(run) for run in runs]
    inputs: list[str | Path | None] = [run / "results.jsonl" for run in runs] + [c.get("input") for c in configs]
    claim = claim_output(out, role="file", inputs=inputs, what=f"the report {out}")
    docs, all_results = [], []
    refused: list[str] = []
    notices: list[str] = []
    page = _Page(out=out, copy_media=copy_media, media_root=media_root, with_evidence=with_evidence,
                 allow_outside_root=allow_outside_root, by=tuple(by), fields_of=fields_of, refused=refused,
                 open_folders=open_folders or {})
    for run, label, cfg, summary in zip(runs, run_labels(runs), configs, summaries, strict=True):
        ids = set(sample["ids"]) if sample is not None and run == runs[0] else None
        doc, slim, run_notices = _run_page(page, run, label, cfg, summary, ids)
        all_results.append(slim)
        notices.extend(run_notices)
        docs.append(doc)
    # every later run against the first: the page's list shows all runs per item, these give the paired CIs
    comparison = {"pairs": [comparison_doc(all_results[0], all_results[k], (docs[0]["name"], docs[k]["name"]))
                            for k in range(1, len(docs))]} if len(docs) > 1 else None
    title = "murgat — " + " vs ".join(title_names(runs))
    for why in dict.fromkeys(refused):
        print(for_terminal(f"warning: {why}"), file=sys.stderr)
    if corrected is not None:
        docs[0]["corrected"] = corrected
    for note in dict.fromkeys(notices):
        print(for_terminal(f"warning: {note}"), file=sys.stderr)
    if annotator is not None:
        docs[0]["annotate"] = {"annotator": annotator, **({"sample": sample["design"]} if sample else {})}
        _digest_items(docs[0]["items"])
        title = f"murgat labels — {docs[0]['name']} — {annotator}"
    return write_viewer(claim, docs, comparison, title)


def run_media_root(run: Path, given: str | None) -> str | None:
    """Where a faithfulness, reflect or program run read its media: ``--media-root`` when given, else
    what its ``config.json`` records (:func:`murgat.engine.preflight.recorded_media_root`)."""
    from murgat.engine.preflight import recorded_media_root
    from murgat.report.pages import read_config

    return given or recorded_media_root(read_config(run).get("config") or {})
