"""``murgat media …``: probe, transcribe, read on-screen text, and dump judge evidence."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from murgat.engine.options import add_command
from murgat.settings.media import MediaEvidenceSettings, MediaOcrSettings, MediaProbeSettings, MediaTranscribeSettings

if TYPE_CHECKING:
    from murgat.engine.outputs import Claim
    from murgat.media.evidence import EvidenceConfig, EvidenceSegment
    from murgat.media.limits import EvidenceLimits

S = TypeVar("S")


def _fail(exc: Exception) -> int:
    print(f"error: {exc}", file=sys.stderr)
    return 2


def _media_errors_exit_2(run: Callable[[S], int]) -> Callable[[S], int]:
    """A ``media`` action whose typed :class:`~murgat.media.errors.MediaError` (no such stream, not
    a media file, …) is its answer: said on stderr, exit 2, no traceback. One home for what each
    action would otherwise wrap around its every read of the file."""
    @functools.wraps(run)
    def guarded(args: S) -> int:
        from murgat.media.errors import MediaError

        try:
            return run(args)
        except MediaError as exc:
            return _fail(exc)

    return guarded


@_media_errors_exit_2
def _probe(args: MediaProbeSettings) -> int:
    from murgat.media.streams import probe

    info = probe(args.file)
    if args.print_json:
        print(info.model_dump_json())
        return 0
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"{args.file} ({info.format}, {info.duration or 0:.3f} s)")
    for col in ("index", "type", "codec", "duration", "detail", "used"):
        t.add_column(col)
    for s in info.streams:
        detail = (f"{s.width}x{s.height} @ {s.fps:.3f} fps" if s.type == "video" and s.fps
                  else f"{s.sample_rate} Hz x{s.channels}" if s.type == "audio" else "")
        used = "visual" if s.index == info.video_stream else "audio" if s.index == info.audio_stream else ""
        t.add_row(str(s.index), s.type, str(s.codec), f"{s.duration:.3f}" if s.duration else "-", detail, used)
    Console().print(t)
    print(f"has_audio={info.has_audio} visual={info.video_duration} s audio={info.audio_duration} s")
    return 0


@_media_errors_exit_2
def _transcribe(args: MediaTranscribeSettings) -> int:
    from murgat.media.asr import transcribe

    tr = transcribe(args.file, args.asr_model, language=args.language, backend=args.backend)
    if args.print_json:
        print(json.dumps({"model": tr.model, "language": tr.language,
                          "words": [w.model_dump() for w in tr.words],
                          "segments": [s.model_dump() for s in tr.segments]}, ensure_ascii=False))
    else:
        print(words_table(tr))
    return 0


def words_table(tr: Any) -> str:
    """The transcript for people as the command promises it: every word with its start and end
    time, one per line, under the segment it belongs to (a segment alone hides where in its
    seconds a word was said, which is what a citation must point at)."""
    lines: list[str] = []
    words = sorted(tr.words, key=lambda w: (w.start, w.end))
    k = 0
    for seg in tr.segments:
        lines.append(f"[{seg.start:7.2f} – {seg.end:7.2f}] {seg.text.strip()}")
        while k < len(words) and words[k].start < seg.end:
            w = words[k]
            prob = f"  p={w.probability:.2f}" if w.probability is not None else ""
            lines.append(f"    {w.start:7.2f} – {w.end:7.2f}  {w.word.strip()}{prob}")
            k += 1
    for w in words[k:]:  # words after the last segment (or a transcript with words only)
        prob = f"  p={w.probability:.2f}" if w.probability is not None else ""
        lines.append(f"    {w.start:7.2f} – {w.end:7.2f}  {w.word.strip()}{prob}")
    if not words:
        lines.append("(no words with times: the model gave segments only)" if tr.segments else "(no speech found)")
    return "\n".join(lines)


@_media_errors_exit_2
def _ocr(args: MediaOcrSettings) -> int:
    from murgat.media.ocr import screen_text

    st = screen_text(args.file, fps=args.fps)
    if args.print_json:
        print(st.model_dump_json())
    else:
        for ln in st.lines:
            print(f"[{ln.time:7.2f}] {ln.text} ({ln.score:.2f})")
    return 0


@_media_errors_exit_2
def _evidence(args: MediaEvidenceSettings) -> int:
    from murgat.core.citations import check_durations, parse_citations
    from murgat.engine.outputs import claim_output
    from murgat.judges.evidence import fit_request
    from murgat.media.evidence import EvidenceConfig, build_evidence, describe
    from murgat.media.streams import probe

    info = probe(args.file)
    cites = check_durations(parse_citations(args.citations), info.durations())
    if not cites:
        return _fail(ValueError(f"no citation found in {args.citations!r}"))
    cfg = EvidenceConfig(pad_s=args.pad, fps=args.fps, max_frames=args.max_frames,
                         visual_as="clip" if args.clips else "frames")
    try:
        limits = _evidence_limits(args)
    except ValueError as exc:
        return _fail(ValueError(f"evidence limits: {exc}"))
    out = Path(args.out)
    # a plain output folder: never a run folder, never the media itself; unwritable is said before any decoding
    folder = claim_output(out, role="folder", inputs=[args.file], what=f"--out {out}")
    ev = build_evidence(args.file, cites, cfg, limits=limits)
    if args.provider:
        ev = fit_request(ev, limits)
    manifest: list[dict[str, Any]] = describe(ev)
    for k, (seg, row) in enumerate(zip(ev.segments, manifest, strict=True)):
        row["files"] = _write_segment(folder, f"{k:02d}_{seg.modality}_{row['start']:.2f}-{row['end']:.2f}", seg, cfg)
    notes = [n.model_dump() for n in ev.notes]
    folder.file("manifest.json").write_text(json.dumps({"media": ev.media_path, "citations": args.citations,
                                                        "config": cfg.model_dump(), "limits": limits.model_dump(),
                                                        "segments": manifest, "notes": notes}, indent=2))
    for row in manifest:
        status = "ok" if row["available"] else f"NO EVIDENCE: {row['reason']}"
        print(f"{row['label']:<24} {status:<12} {', '.join(row.get('files', []))}")
    for n in ev.notes:  # never silent: what was cited, what is sent instead, which limit
        print(f"note: {n.label or 'the request'}: {n.text}")
    print(f"wrote {out / 'manifest.json'}")
    return 0


def _evidence_limits(args: MediaEvidenceSettings) -> EvidenceLimits:
    """The limits a run with ``--judge PROVIDER`` applies (segments, then the one request they
    make), with this command's overrides; without a provider, murgat's own defaults with them.
    A bad override raises ``ValueError``."""
    from murgat.judges.evidence import limits_for
    from murgat.media.limits import EvidenceLimits

    overrides = {k: v for k, v in (("max_audio_s", args.max_audio_s), ("audio_excerpt_s", args.audio_excerpt_s),
                                   ("over_limit", args.over_limit)) if v is not None}
    return limits_for(args.provider, overrides) if args.provider else EvidenceLimits.model_validate(overrides)


def _write_segment(folder: Claim, stem: str, seg: EvidenceSegment, cfg: EvidenceConfig) -> list[str]:
    """The files of one segment as the judge gets them, named from ``stem``: one WAV per piece it
    hears (each excerpt of a sampled span), one image per frame, the clip. Returns their names."""
    from murgat.media.audio import wav_bytes
    from murgat.media.frames import encode_image

    files = []
    pieces = seg.audio_pieces() if seg.available else []
    for j, (a, b, x) in enumerate(pieces):
        name = f"{stem}.wav" if len(pieces) == 1 else f"{stem}_excerpt{j:02d}_{a:.2f}-{b:.2f}.wav"
        folder.file(name).write_bytes(wav_bytes(x, seg.sr))
        files.append(name)
    for fr in seg.frames:
        name = f"{stem}_frame{fr.index:05d}_{fr.time:.3f}s.{cfg.image_format.replace('jpeg', 'jpg')}"
        folder.file(name).write_bytes(encode_image(fr.image, cfg.image_format))
        files.append(name)
    if seg.clip_path:
        name = f"{stem}.mp4"
        folder.file(name).copy_from(seg.clip_path)
        files.append(name)
    return files


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    media = sub.add_parser("media", help="media tools: probe, transcribe, ocr, evidence")
    msub = media.add_subparsers(dest="media_command", metavar="ACTION", required=True)

    add_command(msub, MediaProbeSettings, _probe, help="streams, durations and which streams murgat uses")
    add_command(msub, MediaTranscribeSettings, _transcribe, help="ASR with word timestamps (local model only)")
    add_command(msub, MediaOcrSettings, _ocr, help="on-screen text of sampled frames")
    add_command(msub, MediaEvidenceSettings, _evidence, help="write exactly what a judge would be sent for CITATIONS")
