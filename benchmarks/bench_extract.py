"""Speed of doikit.find_all against a bare re.finditer scan, in the same run.

    python benchmarks/bench_extract.py [--mb 50] [--rounds 3] [--stream-gb 0] [--hostile]
        [--corpus | --documents]

Text: English-like prose with about one DOI per 300 bytes (sentences around DOIs of every
shape in make_extract_corpus.NAMES, written bare, as doi: and as URLs), from a fixed seed,
in blocks of about 1 MB. The baseline is ``re.finditer`` with Crossref's recommended
pattern, which only matches: it validates, decodes and balances nothing. Each block is
scanned by both, back to back, ``--rounds`` times; a block's ratio is of each one's best
time, and the figure is the median of the block ratios (a shared machine's noise comes in
bursts, which a whole-text ratio takes in whole).
``--stream-gb N`` also writes an N GB file to a temporary directory and streams it through
``find_all(open(...))`` and, in lockstep, through the baseline read the same way (finditer
over each 64 Ki-character chunk), timing each 16 MB segment with both: it reports
throughput, the median segment ratio and peak memory (max RSS). Target (issue 3): >= 0.3x
of the baseline, kept in stream mode on 1 GB.

``--corpus`` (issue 30): third-party text instead of ours, the snippets of the wild corpus
(tests/corpus/wild.jsonl: 2,603 snippets from 574 sources, each naming its source and
licence; 1.4 MB), one after the other with a blank line between, in a new order from
the seed each time round until the text has ``--mb`` MB, cut into blocks of about 1 MB at
snippet ends.

``--documents`` (issue 30): third-party documents whole, at the density of DOIs they have
(about 0.4 a kilobyte; the wild corpus's snippets, cut around DOIs, hold eight times as
many): the text of each page of the real PDFs of tests/corpus/pdf/ as doikit.pdf reads it
(the ``pdf`` extra) and the BibTeX files beside them (labels.jsonl names each source and
licence), one after the other, repeated in blocks of about 1 MB.

``--python-loop`` also times, block by block against the baseline again, the pure-Python
loop over the pattern's matches (``_extract._scan_python``), which the C accelerator's loop
(``_speedups.Scan``) replaces: the ratio of each to the baseline.

``--hostile`` times texts built to make a scanner re-read what it has read (long runs of
candidates that are refused, DOIs joined by ';' on one line, binary-like input) at two sizes:
the time should double when the size doubles (linear), not quadruple.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import doikit
from doikit import DOI
from doikit._doi import BUILD
from doikit._extract import _scan_python
from make_extract_corpus import NAMES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

CROSSREF = re.compile(r"10.\d{4,9}/[-._;()/:A-Z0-9]+", re.IGNORECASE)
WORDS = [
    "the",
    "results",
    "of",
    "this",
    "study",
    "show",
    "that",
    "temperature",
    "affects",
    "growth",
    "rates",
    "in",
    "several",
    "species",
    "and",
    "that",
    "further",
    "work",
    "is",
    "needed",
    "to",
    "confirm",
    "these",
    "findings",
    "across",
    "regions",
]


def make_text(megabytes: float, seed: int = 300) -> str:
    """Prose with a DOI about every 300 bytes."""
    return "".join(make_blocks(megabytes, seed))


def make_blocks(megabytes: float, seed: int = 300, block: float = 1e6) -> list[str]:
    """make_text's prose, cut into blocks of about *block* bytes at sentence ends."""
    rng = random.Random(seed)
    blocks: list[str] = []
    parts: list[str] = []
    size = 0
    while size < megabytes * 1e6:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(35, 45)))
        name = rng.choice(NAMES)
        form = rng.random()
        if form < 0.4:
            cited = f"(doi:{name})"
        elif form < 0.7:
            cited = DOI(name).to_url()
        else:
            cited = name
        piece = f"{sentence.capitalize()} {cited}. "
        parts.append(piece)
        size += len(piece.encode())
        if size >= (len(blocks) + 1) * block:
            blocks.append("".join(parts))
            parts = []
    if parts:
        blocks.append("".join(parts))
    return blocks


WILD = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "wild.jsonl"
DOCUMENTS = WILD.parent / "pdf"


def corpus_blocks(megabytes: float, seed: int = 300, block: float = 1e6) -> list[str]:
    """The wild corpus's snippets, reshuffled each time round, in blocks of about *block*
    bytes, *megabytes* in all."""
    snippets = [json.loads(line)["text"] for line in WILD.read_text(encoding="utf-8").splitlines()]
    rng = random.Random(seed)
    blocks: list[str] = []
    parts: list[str] = []
    size = 0
    while size < megabytes * 1e6:
        rng.shuffle(snippets)
        for snippet in snippets:
            parts.append(snippet + "\n\n")
            size += len(snippet.encode()) + 2
            if size >= (len(blocks) + 1) * block:
                blocks.append("".join(parts))
                parts = []
            if size >= megabytes * 1e6:
                break
    if parts:
        blocks.append("".join(parts))
    return blocks


def _best_ratios(
    blocks: list[str], rounds: int, scan: Callable[[str], Iterable[object]], size: int, name: str
) -> list[float]:
    """For each block, the baseline's best time over *scan*'s, each timed *rounds* times on
    the block, the two back to back (so that both read it from the caches alike, and a
    noisy neighbour hits both alike); prints their speeds by their best times."""
    ratios = []
    best_baseline = best_scan = 0.0
    for block in blocks:
        best = [float("inf"), float("inf")]
        runs: tuple[Callable[[str], Iterable[object]], ...] = (CROSSREF.finditer, scan)
        for _ in range(rounds):
            for which, run in enumerate(runs):
                start = time.perf_counter()
                sum(1 for _ in run(block))
                best[which] = min(best[which], time.perf_counter() - start)
        ratios.append(best[0] / best[1])
        best_baseline += best[0]
        best_scan += best[1]
    print(
        f"  best times: finditer {size / best_baseline / 1e6:,.0f} MB/s, "
        f"{name} {size / best_scan / 1e6:,.1f} MB/s"
    )
    return ratios


def document_blocks(megabytes: float, block: float = 1e6) -> list[str]:
    """The third-party documents of tests/corpus/pdf/ whole (each PDF's pages as doikit.pdf
    reads them, each BibTeX file), one after the other, repeated in blocks of about *block*
    bytes, *megabytes* in all."""
    from doikit.pdf import page_texts  # noqa: PLC0415 - the pdf extra, for this mode only

    texts = ["\n".join(page_texts(path)) for path in sorted(DOCUMENTS.glob("*.pdf"))]
    for path in sorted(DOCUMENTS.glob("*.bib.gz")):
        data = gzip.decompress(path.read_bytes())
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:  # (econ-example.bib is 8-bit text: read byte for byte)
            texts.append(data.decode("latin-1"))
    whole = "\n\n".join(texts) + "\n\n"
    repeats = max(1, round(block / len(whole.encode())))
    count = max(1, round(megabytes * 1e6 / (len(whole.encode()) * repeats)))
    return [whole * repeats for _ in range(count)]


HOSTILE = {
    "DOIs joined by ';' on one line": "10.1000/a;",
    "DOIs joined by ',' on one line": "10.1000/a,",
    "starts glued to a word": "a10.1000/",
    "ratios (refused numbers)": "10.5/",
    "control characters after a prefix": "10.1000/\x00",
    "unassigned code points after a prefix": "10.1000/\U000e0fff",
    "empty suffixes": "10.1000/. ",
    "unclosed brackets": "(10.1000/a",
    "brackets a DOI opens and never closes": "10.1000/a(",
    "DOIs in unclosed brackets, run together": "10.1000/a[10.1000/b(",
    "character references": "10.1000/a&amp;",
    "a URL of broken escapes": "https://x.org/10.1000/%ZZ",
    "placeholders run together": "10.1000/{a}10.1000/xxx$",
    "spaced names behind markers": "doi:10. 1234 / a. ",
    # (the pattern decides a DOI before a tag or a blank line: its look-ahead reads on)
    "DOIs before tags never closed": "10.1000/a<b ",
    "DOIs before tags with long attributes": "10.1000/a<b " + "c=d " * 50 + ">",
    "DOIs before blank lines": "10.1000/a.\n \n",
}


# Streamed in 80-character chunks: an unfinished DOI waits for the next chunk, and a scan
# that re-read it with every small chunk would be quadratic up to _MAX_CARRY.
STREAMED = {  # (what starts the text, what is repeated after it)
    "a run without blanks, in small chunks": ("", "10.1000/a("),
    "a DOI before stray tags, in small chunks": ("10.1000/a", "<b"),
}


def hostile(repeats: int = 20_000) -> None:
    """Print the seconds for each hostile text at two sizes, and their ratio."""
    shapes = [(label, "", piece, False) for label, piece in HOSTILE.items()]
    shapes += [(label, head, piece, True) for label, (head, piece) in STREAMED.items()]
    for label, head, piece, streamed in shapes:
        seconds = []
        for size in (repeats, 2 * repeats):
            text = head + piece * size
            source = [text[i : i + 80] for i in range(0, len(text), 80)] if streamed else text
            start = time.perf_counter()
            sum(1 for _ in doikit.find_all(source))
            seconds.append(time.perf_counter() - start)
        print(
            f"  {label:40} {seconds[0]:6.3f} s, twice the size {seconds[1]:6.3f} s "
            f"(x{seconds[1] / seconds[0]:.1f})"
        )


def main() -> None:
    """Print the ratio, and the stream figures with --stream-gb."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stream-gb", type=float, default=0)
    parser.add_argument("--hostile", action="store_true", help="time texts built to be slow")
    parser.add_argument("--python-loop", action="store_true", help="also time the pure-Python loop")
    parser.add_argument(
        "--corpus", action="store_true", help="third-party text: the wild corpus's snippets"
    )
    parser.add_argument(
        "--documents", action="store_true", help="third-party documents whole (tests/corpus/pdf)"
    )
    args = parser.parse_args()
    if args.hostile:
        hostile()
        return
    if args.documents:
        blocks = document_blocks(args.mb)
    else:
        blocks = corpus_blocks(args.mb) if args.corpus else make_blocks(args.mb)
    size = sum(map(len, blocks))
    sum(1 for _ in doikit.find_all(blocks[0][:1000]))  # compile the pattern first
    # Each block is timed with both, back to back, --rounds times, and its ratio is of
    # their best times; the figure is the median of the block ratios. The pure-Python loop
    # is timed against the baseline again, apart. (Timed once a block in each round over
    # all the blocks, the baseline read each block first, from memory, and after the last
    # block's find_all and Python loop: in some minutes of the machine it ran at half its
    # speed and the ratio doubled with it; session 24, BENCHMARKS.md.)
    ratios = _best_ratios(blocks, args.rounds, doikit.find_all, size, "find_all")
    python_ratios = (
        _best_ratios(blocks, args.rounds, lambda b: _scan_python(b, 0, None), size, "the loop")
        if args.python_loop
        else []
    )
    found = sum(sum(1 for _ in doikit.find_all(block)) for block in blocks)
    baseline = sum(sum(1 for _ in CROSSREF.finditer(block)) for block in blocks)
    quartiles = statistics.quantiles(ratios, n=4)
    print(
        f"build: {BUILD}; {'wild corpus, ' if args.corpus else ''}"
        f"{'third-party documents, ' if args.documents else ''}{size / 1e6:.0f} MB in "
        f"{len(blocks)} blocks, {found:,} DOIs found "
        f"({baseline:,} finditer matches); find_all = x{statistics.median(ratios):.3f} of finditer "
        f"(median of {len(ratios)} blocks' best-time ratios; quartiles "
        f"{quartiles[0]:.3f}-{quartiles[2]:.3f})"
    )
    if python_ratios:
        print(
            f"the pure-Python loop (_scan_python) = x{statistics.median(python_ratios):.3f} "
            "of finditer, timed apart"
        )
    if args.stream_gb:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "prose.txt"
            block = make_text(64)
            with path.open("w", encoding="utf-8") as out:
                for _ in range(max(1, round(args.stream_gb * 1e9 / len(block)))):
                    out.write(block)
            size = path.stat().st_size
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            print(stream_ratio(path, size, before))


def stream_ratio(path: Path, size: int, before: int) -> str:
    """Stream *path* through find_all and, in lockstep, through the baseline (finditer over
    each 64 Ki-character chunk, read and decoded the same way): each 16 MB segment is timed
    with both, back to back, and the figure is the median of the segment ratios."""
    segment = 16 << 20
    ratios: list[float] = []
    count = matches = 0
    ours = 0.0
    with path.open(encoding="utf-8") as plain, path.open(encoding="utf-8") as stream:
        finds = doikit.find_all(stream)
        pending = None  # a DOI read past the end of the segment
        offset = 0
        while True:
            start = time.perf_counter()
            read = 0
            chunk = "x"
            while read < segment and chunk:
                chunk = plain.read(1 << 16)
                read += len(chunk)
                matches += sum(1 for _ in CROSSREF.finditer(chunk))
            middle = time.perf_counter()
            offset += read
            if pending is not None and pending.start < offset:
                count += 1
                pending = None
            if pending is None:
                for found in finds:
                    if found.start >= offset:
                        pending = found
                        break
                    count += 1
            if read < segment:  # the last segment: what find_all has left, untimed
                count += sum(1 for _ in finds) + (pending is not None)
                break
            end = time.perf_counter()
            ours += end - middle
            ratios.append((middle - start) / (end - middle))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    quartiles = statistics.quantiles(ratios, n=4)
    return (
        f"stream: {size / 1e9:.2f} GB, {count:,} DOIs ({matches:,} finditer matches), "
        f"find_all {len(ratios) * segment / ours / 1e6:.1f} MB/s = "
        f"x{statistics.median(ratios):.3f} of finditer "
        f"over the same chunks (median of {len(ratios)} 16 MB segments; quartiles "
        f"{quartiles[0]:.3f}-{quartiles[2]:.3f}); max RSS {peak / 1024:.0f} MB (before the "
        f"stream: {before / 1024:.0f} MB)"
    )


if __name__ == "__main__":
    main()
