"""The package as pip builds it: a wheel with the C accelerator where a C compiler is at
hand, and a pure-Python wheel that works where none is (setup.py marks the extension
optional). Built from a copy of the checkout with setuptools, the project's build backend,
and imported with nothing but the standard library beside it (``python -S``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYTHON = os.path.abspath(sys.executable)  # noqa: PTH100 - the venv's own, symlink kept
BUILD = "import sys\nfrom setuptools import build_meta\nprint(build_meta.build_wheel(sys.argv[1]))"
USE = """
import sys
sys.path.insert(0, sys.argv[1])
import doikit, doikit._doi
assert doikit.__file__.startswith(sys.argv[1]), doikit.__file__
print(doikit._doi.ACCELERATED, doikit.normalize("https://doi.org/10.1000%2FABC"),
      sorted({doikit.DOI("doi:10.1000/ABC"), doikit.DOI("10.1000/abc")}))
"""


def _checkout_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "checkout"
    copy.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        shutil.copy(ROOT / name, copy / name)
    shutil.copytree(
        ROOT / "src" / "doikit",
        copy / "src" / "doikit",
        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"),
    )
    return copy


def _build_and_use(tmp_path: Path, environment: dict[str, str]) -> tuple[list[str], str]:
    checkout = _checkout_copy(tmp_path)
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [PYTHON, "-c", BUILD, str(wheels)],
        cwd=checkout,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = wheels / built.stdout.strip().splitlines()[-1]
    unpacked = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        archive.extractall(unpacked)
    used = subprocess.run(
        [PYTHON, "-S", "-c", USE, str(unpacked)],
        env={key: value for key, value in environment.items() if key != "DOIKIT_PURE_PYTHON"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert used.returncode == 0, used.stderr
    return names, used.stdout.strip()


def _expected(*, accelerated: bool) -> str:
    return f"{accelerated} 10.1000/abc [DOI('10.1000/ABC')]"


@pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")
def test_wheel_with_a_compiler_holds_the_accelerator(tmp_path: Path) -> None:
    names, answer = _build_and_use(tmp_path, dict(os.environ))
    assert any(name.startswith("doikit/_speedups.") and name.endswith(".so") for name in names)
    assert "doikit/_speedups.pyi" in names
    assert "doikit/py.typed" in names
    assert "doikit/_speedups.c" not in names
    assert answer == _expected(accelerated=True)


def test_wheel_without_a_compiler_is_pure_python_and_works(tmp_path: Path) -> None:
    # setuptools compiles with $CC: `false` fails every compilation, as a missing compiler does.
    names, answer = _build_and_use(tmp_path, {**os.environ, "CC": "false"})
    assert not any("_speedups." in name and not name.endswith(".pyi") for name in names)
    assert "doikit/_doi.py" in names
    assert answer == _expected(accelerated=False)
