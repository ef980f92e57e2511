"""The accelerator's C reader (src/doikit/_c/lib/reader.c) alone, with no Python in it.

Built with the C compiler at hand into check_reader (src/doikit/_c/fuzz/check_reader.c), the
libFuzzer target's check without libFuzzer: the reader must agree with its oracle
(fuzz/oracle.c) on every input, and wherever it decides, with the Python parser too. Runs on
both builds, since it needs no extension; skipped where no C compiler is at hand.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from doikit import InvalidDOI, _doi, _present

ROOT = Path(__file__).resolve().parent.parent
C = ROOT / "src" / "doikit" / "_c"
CORPUS = sorted((C / "fuzz" / "corpus").iterdir())
COMPILER = shutil.which(os.environ.get("CC", "cc"))

pytestmark = pytest.mark.skipif(COMPILER is None, reason="no C compiler")

HEADS = [
    "",
    "doi:",
    "DOI: ",
    "doi ",
    "info:doi/",
    "hdl:",
    "urn:doi:",
    "https://doi.org/",
    "HTTP://DX.DOI.ORG/",
    "www.doi.org/",
    "https://hdl.handle.net/",
    "https://example.org/",
]
PREFIXES = ["1000", "1000.5", "1.2.3", "12.", ".5", ""]
SEPARATORS = ["/", ":", "%2F", "%2f", "%2", ""]
PIECES = ["10.", "1000", "/", ":", "%2F", "%41", "%7e", "%0A", "%4", "%", "%%", "a", "Z", " "]
PIECES += ["#", "?", "~", "-", ".", "é", "\t", "abcdefghij", "XYZ" * 4, "a%20b", "x/y"]


@pytest.fixture(scope="module")
def check_reader(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """check_reader, with AddressSanitizer and UBSan where the compiler has them."""
    assert COMPILER is not None
    binary = tmp_path_factory.mktemp("reader") / "check_reader"
    sources = [C / "lib" / "reader.c", *(C / "fuzz" / n for n in ("oracle.c", "fuzz_reader.c"))]
    command = [COMPILER, "-std=c11", "-O1", "-g", "-Wall", "-Wextra", f"-I{C / 'lib'}"]
    command += [*map(str, sources), str(C / "fuzz" / "check_reader.c"), "-o", str(binary)]
    sanitized = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
    for flags in (sanitized, []):
        built = subprocess.run([*command, *flags], capture_output=True, text=True, check=False)
        if built.returncode == 0 and _runs(binary):
            return binary
    pytest.fail(f"check_reader did not build:\n{built.stderr[-3000:]}")


def _runs(binary: Path) -> bool:
    """Whether the binary runs here (a sanitizer's runtime may not, in some sandboxes)."""
    done = subprocess.run([binary], capture_output=True, check=False, timeout=60)
    return done.returncode == 0


def _answers(binary: Path, texts: list[str], tmp_path: Path) -> list[tuple[str, str] | None]:
    lines = tmp_path / "lines.txt"
    lines.write_bytes("\n".join(texts).encode() + b"\n")
    done = subprocess.run(
        [binary, "-p", "-l", lines], capture_output=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    printed = done.stdout.decode("ascii").split("\n")[:-1]
    assert len(printed) == len(texts)
    return [None if line == "-" else _pair(line) for line in printed]


def _pair(line: str) -> tuple[str, str]:
    name, key = line.split("\t")
    return name, key


def _python(text: str) -> tuple[str, str] | None:
    try:
        return _present.parse(text), _doi._py_normalize(text)
    except InvalidDOI:
        return None


def _vector_strings() -> list[str]:
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted((ROOT / "tests" / "vectors").glob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return [text for text in found if "\n" not in text and "\r" not in text]


def test_the_reader_agrees_with_its_oracle_on_the_fuzz_corpus(check_reader: Path) -> None:
    done = subprocess.run(
        [check_reader, *CORPUS], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert f"{len(CORPUS)} inputs" in done.stderr


def test_what_the_reader_decides_the_python_parser_answers_alike(
    check_reader: Path, tmp_path: Path
) -> None:
    """On the spec vectors and on random texts made of heads and the pieces of names: the
    oracle agrees (check_reader aborts otherwise), and every decided name and key is the
    Python parser's."""
    rng = random.Random(2026)
    texts = _vector_strings()
    for _ in range(20_000):
        head, prefix, separator = rng.choice(HEADS), rng.choice(PREFIXES), rng.choice(SEPARATORS)
        suffix = "".join(rng.choices(PIECES, k=rng.randint(0, 6)))
        texts.append(f"{head}10.{prefix}{separator}{suffix}")
    answers = _answers(check_reader, texts, tmp_path)
    decided = 0
    for text, answer in zip(texts, answers, strict=True):
        if answer is not None:
            decided += 1
            assert answer == _python(text), text
    assert decided > 1_000  # the common shapes are there, and decided
