"""Time per MB of doikit.find_all on the worst texts found for it (issue 27), beside ordinary
prose, against a bare re.finditer scan of the same text in the same run.

    python benchmarks/bench_extract_worst.py [--mb 1] [--rounds 3] [--stream] [--python-loop]

The worst texts are tests/test_extract_limits.py's WORST, which holds each under a time
limit: a piece repeated to about --mb MB, built to make a scan read the same characters
again and again (the starts inside a run of '10.', a DOI then ';' repeated, candidates
refused after their run was read, escapes cut from a URL's end one by one). The ordinary
text is bench_extract.py's prose (a DOI about every 300 bytes). Each text is scanned by
find_all and, back to back, by the baseline of bench_extract.py (``re.finditer`` with
Crossref's recommended pattern, which only matches); the figures are the medians of the
rounds: seconds per MB for both, and find_all's speed as a fraction of the baseline's
(x0.3 on the prose is issue 3's target; on the worst texts the walk decides candidate after
candidate in Python, and the fraction shows how far from the prose each is).

``--stream`` reads each text in 80-character chunks as well (an unfinished DOI is read
again each time the text after it has doubled); ``--python-loop`` times the pure-Python
loop over the pattern's matches too (``_extract._scan_python``, which the C accelerator's
loop replaces; ``DOIKIT_PURE_PYTHON=1`` runs the whole pure-Python build).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import doikit
from bench_extract import CROSSREF, make_text
from doikit._doi import BUILD
from doikit._extract import _scan_python

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_extract_limits import WORST

CHUNK = 80


def baseline(source: str | list[str]) -> int:
    """The bare scan: Crossref's pattern over the text, or over each chunk."""
    chunks = [source] if isinstance(source, str) else source
    return sum(1 for chunk in chunks for _ in CROSSREF.finditer(chunk))


def ours(source: str | list[str]) -> int:
    return sum(1 for _ in doikit.find_all(source))


def python_loop(source: str | list[str]) -> int:
    assert isinstance(source, str)  # noqa: S101 - the loop reads a whole text
    return sum(1 for _ in _scan_python(source, 0, None))


def seconds(scan: Callable[[str | list[str]], int], source: str | list[str]) -> float:
    start = time.perf_counter()
    scan(source)
    return time.perf_counter() - start


def timed(
    texts: Iterable[tuple[str, str]], rounds: int, *, stream: bool, with_python_loop: bool
) -> Iterator[tuple[str, float, float, float | None]]:
    """For each named text: the median seconds per MB of find_all, of the baseline and
    (*with_python_loop*) of the pure-Python loop."""
    for name, text in texts:
        source: str | list[str] = (
            [text[at : at + CHUNK] for at in range(0, len(text), CHUNK)] if stream else text
        )
        found: list[float] = []
        bare: list[float] = []
        loop: list[float] = []
        for _ in range(rounds):
            bare.append(seconds(baseline, source))
            found.append(seconds(ours, source))
            if with_python_loop and not stream:
                loop.append(seconds(python_loop, text))
        megabytes = len(text) / 1e6
        yield (
            name,
            statistics.median(found) / megabytes,
            statistics.median(bare) / megabytes,
            statistics.median(loop) / megabytes if loop else None,
        )


def main() -> None:
    """Print a row for the prose and for each worst text."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stream", action="store_true", help="also in 80-character chunks")
    parser.add_argument("--python-loop", action="store_true", help="also the pure-Python loop")
    args = parser.parse_args()
    size = round(args.mb * 1e6)
    sum(1 for _ in doikit.find_all("doi:10.1000/1"))  # compile the pattern first
    texts = [("ordinary prose (bench_extract.py)", make_text(args.mb))]
    texts += [(name, worst.text(size)) for name, worst in WORST.items()]
    print(f"build: {BUILD}; {args.mb:g} MB per text, median of {args.rounds} rounds")
    print(f"  {'text':44} {'find_all':>10} {'finditer':>10} {'ratio':>9}")
    for stream in (False, True) if args.stream else (False,):
        if stream:
            print(f"in {CHUNK}-character chunks:")
        for name, found, bare, loop in timed(
            texts, args.rounds, stream=stream, with_python_loop=args.python_loop
        ):
            row = f"  {name:44} {found:8.3f} s {bare:8.4f} s  x{bare / found:.4f}"
            if loop is not None:
                row += f"   pure-Python loop {loop:.3f} s (x{bare / loop:.4f})"
            print(row + "   (per MB)")


if __name__ == "__main__":
    main()
