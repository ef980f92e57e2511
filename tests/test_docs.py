"""The documentation's shell sessions, run for real: every ```console block of the README and
of docs/ is pasted, line by line, into one fresh bash (a block is one session, so a variable
set by one line is there for the next), as a reader would after ``bash scripts/run.sh``:
with ``.venv`` beside it, the default store in a fresh data directory, and ``doikit serve
--demo`` on that store. Each ``$ `` line's output (stdout and stderr, as a terminal shows
them) must be exactly the lines under it. The reader's server listens on port 8000; the
test's on a free port, written in place of ``127.0.0.1:8000`` in commands and output. The
docs' sessions run with ``.venv`` activated, as the README's quick start leaves the shell.

Then the docs are built with Sphinx, warnings as errors, and their links checked
(``scripts/docs.sh``, ``scripts/doclinks.py``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conftest import DOIKIT, start_server, stop_server

if TYPE_CHECKING:
    from collections.abc import Iterator

    from conftest import Server

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```console\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_MARK = "@@doikit-docs-step@@"


def _sessions() -> list[tuple[str, str]]:
    """(where, block) for every console block: the page and the block's first line."""
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            out.append((f"{page.relative_to(ROOT)}:{line}", match.group(1)))
    return out


def _steps(block: str) -> list[tuple[str, list[str]]]:
    """The commands of a block (a line ending in a backslash goes on) and their output."""
    steps: list[tuple[str, list[str]]] = []
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        assert line.startswith("$ "), f"a console block starts with a command: {line!r}"
        command = line[2:]
        while command.endswith("\\"):
            i += 1
            command = command + "\n" + lines[i]
        i += 1
        output = []
        while i < len(lines) and not lines[i].startswith("$ "):
            output.append(lines[i])
            i += 1
        steps.append((command, output))
    return steps


@pytest.fixture(scope="module")
def reader(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Path, dict[str, str], Server]]:
    """A reader's directory (``.venv`` there), environment and running demo server."""
    home = tmp_path_factory.mktemp("reader")
    (home / ".venv").symlink_to(Path(sys.executable).parent.parent)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
    }
    (home / "data" / "doikit").mkdir(parents=True)
    store = f"sqlite:///{home / 'data' / 'doikit' / 'doikit.sqlite3'}"
    running = start_server(store)
    try:
        yield home, env, running
    finally:
        stop_server(running)


@pytest.mark.parametrize(("where", "block"), _sessions(), ids=[w for w, _ in _sessions()])
def test_console_session(
    where: str, block: str, reader: tuple[Path, dict[str, str], Server]
) -> None:
    home, env, server = reader
    address = server.url.removeprefix("http://")
    steps = _steps(block.replace("127.0.0.1:8000", address))
    script = "".join(f"echo {_MARK}\n{command}\n" for command, _ in steps)
    if "source .venv/bin/activate" not in block:  # the docs' sessions come after the README's
        script = "source .venv/bin/activate\n" + script
    for name in ("tests", "src"):  # a page may read the repository's own files
        if not (home / name).exists():
            (home / name).symlink_to(ROOT / name)
    done = subprocess.run(
        ["/bin/bash", "--noprofile", "--norc"],
        input=script,
        cwd=home,
        env=env,
        capture_output=False,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
        timeout=120,
    )
    outputs = done.stdout.split(_MARK + "\n")[1:]
    assert len(outputs) == len(steps), done.stdout
    for (command, expected), got in zip(steps, outputs, strict=True):
        # (a page cannot show blank lines at the end of an output: they are not compared)
        while expected and not expected[-1]:
            expected.pop()
        assert got.rstrip("\n").splitlines() == expected, f"{where}: $ {command}"


def test_the_docs_build_without_warnings(tmp_path: Path) -> None:
    done = subprocess.run(
        ["/bin/bash", str(ROOT / "scripts" / "docs.sh"), str(tmp_path / "html")],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": f"{Path(DOIKIT).parent}:{os.environ['PATH']}"},
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (tmp_path / "html" / "index.html").exists()


def _doclinks(site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "doclinks.py"), str(site)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize(
    ("link", "why"),
    [
        ("b.html#there", ""),
        ("sub/../b.html", ""),
        ("#here", ""),
        ("c.html", "c.html: no such file"),
        ("b.html#nowhere", "b.html#nowhere: no such anchor in b.html"),
        ("#nowhere", "#nowhere: no such anchor in index.html"),
        ("https://example.org/", "https://example.org/: points outside the documentation"),
        ("//example.org/x", "//example.org/x: points outside the documentation"),
        ("mailto:a@example.org", "mailto:a@example.org: points outside the documentation"),
        ("../../etc/passwd", "../../etc/passwd: no such file"),
    ],
)
def test_the_link_check_finds_each_kind_of_broken_link(tmp_path: Path, link: str, why: str) -> None:
    (tmp_path / "index.html").write_text(
        f'<p id="here">Shown, not linked: https://example.org/x</p><a href="{link}">x</a>'
    )
    (tmp_path / "b.html").write_text('<h1 id="there">B</h1>')
    done = _doclinks(tmp_path)
    if why:
        assert done.returncode == 1
        assert done.stderr == f"doclinks: index.html: {why}\n"
    else:
        assert (done.returncode, done.stderr) == (0, "")
