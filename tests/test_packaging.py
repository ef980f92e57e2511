"""The package as pip builds it: a wheel with the C accelerator where a C compiler is at
hand, and a pure-Python wheel that works where none is (setup.py marks the extension
optional). Built from a copy of the checkout with setuptools, the project's build backend,
and imported with nothing but the standard library beside it (``python -S``).
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYTHON = os.path.abspath(sys.executable)  # noqa: PTH100 - the venv's own, symlink kept
BASH = shutil.which("bash") or "/bin/bash"
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


def _build_wheel(tmp_path: Path, environment: dict[str, str]) -> Path:
    """A wheel of a copy of the checkout, built in tmp_path/wheels by the build backend."""
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
    return wheels / built.stdout.strip().splitlines()[-1]


def _build_and_use(tmp_path: Path, environment: dict[str, str]) -> tuple[list[str], str]:
    wheel = _build_wheel(tmp_path, environment)
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


def _wheel_of_installed(name: str, into: Path) -> Path:
    """A wheel of the distribution *name* as installed here, for an offline install: the
    suite never reaches PyPI, so a fresh venv gets its dependencies from these."""
    dist = importlib.metadata.distribution(name)
    version = dist.version
    wheel = into / f"{name}-{version}-py3-none-any.whl"
    files = [
        f
        for f in dist.files or []
        if "__pycache__" not in f.parts
        and f.suffix != ".pyc"
        and f.name not in {"INSTALLER", "REQUESTED", "direct_url.json"}
    ]
    with zipfile.ZipFile(wheel, "w") as archive:
        for f in files:
            archive.write(f.locate(), str(f))
    return wheel


def test_a_plain_install_runs_the_core_commands_and_names_each_missing_extra(
    tmp_path: Path,
) -> None:
    """`pip install doikit` with no extra, in a fresh venv: the core commands run; each
    command of an optional layer says in one line which extra to install; no traceback."""
    wheel = _build_wheel(tmp_path, dict(os.environ))
    _wheel_of_installed("click", wheel.parent)
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    installed = subprocess.run(
        [
            venv / "bin" / "python",
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--find-links",
            str(wheel.parent),
            str(wheel),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    exe = venv / "bin" / "doikit"

    def run(*args: str, stdin: bytes = b"") -> tuple[int, str, str]:
        done = subprocess.run(
            [exe, *args], input=stdin, capture_output=True, check=False, timeout=60
        )
        return done.returncode, done.stdout.decode(), done.stderr.decode()

    library = subprocess.run(
        [
            venv / "bin" / "python",
            "-c",
            "import sys, doikit; print(sorted(set(sys.modules) & {'click'}))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert library.stdout == "[]\n"  # the library itself imports nothing beyond the stdlib
    assert run("check", "10.1000/182") == (0, "", "")
    assert run("convert", "--to", "uri", "10.1000/182") == (0, "doi:10.1000/182\n", "")
    assert run("compare", "doi:10.1000/ABC", "10.1000/abc") == (0, "equivalent\n", "")
    code, out, _ = run("inspect", "10.1000/182")
    assert code == 0
    assert "prefix:     10.1000" in out
    assert run("extract", stdin=b"see doi:10.1000/182.\n") == (0, "10.1000/182\n", "")
    # deposit is the core's own client: here it only finds no server to talk to.
    records = tmp_path / "r.csv"
    records.write_text("doi,url\n10.5555/1,https://example.org/1\n")
    code, _, err = run("deposit", str(records), "--server", "http://127.0.0.1:9", "--token", "t")
    assert code == 2
    assert err.startswith("doikit: cannot reach the server")
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(b"%PDF-1.4\n%%EOF\n")
    for args, extra in [
        (("serve",), "server"),
        (("token", "create", "--prefix", "10.5555"), "server"),
        (("admin", "create", "--prefix", "10.5555", "300:10.5555/ADMIN"), "server"),
        (("resolve", "10.1000/182"), "client"),
        (("which-ra", "10.1000/182"), "client"),
        (("cite", "10.1000/182"), "client"),
        (("extract", str(pdf)), "pdf"),
    ]:
        code, out, err = run(*args)
        assert code == 2, (args, err)
        assert out == ""
        assert err.count("\n") == 1, (args, err)
        assert f"needs the {extra} extra: pip install '.[{extra}]'" in err, (args, err)


def _scripts_copy(tmp_path: Path) -> Path:
    checkout = _checkout_copy(tmp_path)
    shutil.copytree(ROOT / "scripts", checkout / "scripts")
    return checkout


def _fake_python(path: Path, version: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{version} /somewhere/else'\nexit 0\n")
    path.chmod(0o755)
    return path


def test_the_scripts_refuse_an_old_python_in_one_line(tmp_path: Path) -> None:
    checkout = _scripts_copy(tmp_path)
    old = _fake_python(tmp_path / "old" / "python3", "3.8.10")
    old.write_text("#!/bin/sh\nexit 1\n")  # sys.version_info < (3, 11): the check fails
    for script in ("run.sh", "test.sh"):
        done = subprocess.run(
            [BASH, f"scripts/{script}"],
            cwd=checkout,
            env={**os.environ, "PYTHON": str(old)},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2
        assert done.stderr.startswith("doikit needs Python 3.11 or newer; ")
        assert done.stderr.count("\n") == 1
        assert not (checkout / ".venv").exists()


def test_the_scripts_rebuild_a_venv_that_another_python_made(tmp_path: Path) -> None:
    """A .venv left by another Python is rebuilt, not run (it broke every later run). The
    install after the rebuild is kept offline here: it fails, after the check."""
    checkout = _scripts_copy(tmp_path)
    _fake_python(checkout / ".venv" / "bin" / "python", "3.10.4")
    done = subprocess.run(
        [BASH, "scripts/run.sh", "--version"],
        cwd=checkout,
        env={**os.environ, "PYTHON": sys.executable, "PIP_NO_INDEX": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stderr.startswith("rebuilding .venv: it was made by 3.10.4 /somewhere/else, not ")
    rebuilt = subprocess.run(
        [checkout / ".venv" / "bin" / "python", "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert rebuilt.stdout == f"{sys.version_info[:2]}\n"
