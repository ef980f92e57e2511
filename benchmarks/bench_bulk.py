"""DOI names in bulk: ``doikit.normalize_many`` against idutils's loop, in the same run.

    python benchmarks/bench_bulk.py [--names 10000000] [--rounds 3] [--mix issue|real]

Inputs (``--mix issue``, the default): the mix users with web-harvested data have (issue
15): a sixth are ``https://doi.org/`` URLs whose suffixes carry several escapes each (``%3C
%3E %3B %28 %29 %3A``), the rest bare names, ``doi:``, ``DOI: `` and ``http://dx.doi.org/``
URLs, from a fixed seed. ``--mix real`` (issue 30): real DOI names instead (see
:func:`real_names`), each in one of six presentations, with 1% junk and 1% nulls
(:func:`make_real_inputs`). Each round times, on the same names, idutils's loop
(``normalize_doi`` per name, its errors caught, as its users write it), doikit's per-name
loop (``normalize`` per name), the bulk call (``normalize_many``, one call for the whole
list), CPython's own ``list(map(str.lower, names))`` (a new string per name and nothing
read: a floor for any list of new strings) and the column paths: ``doikit.arrow.normalize``
on a chunked array, the Polars namespace on a frame and DuckDB's ``doi_normalize`` on an
Arrow table, and beside it DuckDB's floor: an Arrow UDF that answers nulls without reading
anything; the best round counts.
Prints names/s, the ratio to idutils, and the memory the bulk answer takes (its list and
strings, measured by tracemalloc on a slice of 100,000 names, scaled).

It measures the build in use (the first line says which); target (issue 15): the bulk call
>= 10x idutils on 10,000,000 names.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import time
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING

import idutils

import doikit
from bench_names import ESCAPES
from doikit._doi import BUILD

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    Texts = Sequence[str | None]


def _suffix(rng: random.Random) -> str:
    n = rng.randrange(1, 10**6)
    shape = rng.randrange(4)
    if shape == 0:
        return f"j.cell.2020.{n % 12 + 1:02d}.{n:03d}"
    if shape == 1:
        return f"978-3-642-{n:05d}-3_{n % 9}"
    if shape == 2:
        return f"nature{n:05d}"
    return f"journal.pone.{n:07d}"


def _escaped(rng: random.Random) -> str:
    """A SICI-like suffix written with 3 to 10 escapes, as harvested URLs carry them."""
    n = rng.randrange(1, 10**6)
    parts = [f"(SICI)1097-4258(1999{n % 100:02d})14", f"2{n}", "AID-XYZ", "3.0.CO", f"2-{n % 10}"]
    out = parts[0]
    for part in parts[1:]:
        out += rng.choice(ESCAPES) + part
    for _ in range(rng.randrange(0, 6)):
        out += rng.choice(ESCAPES) + str(rng.randrange(10))
    return out


def make_inputs(n: int, seed: int = 15) -> list[str]:
    """N presentation strings in the issue's mix, the same for the same seed."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        form = rng.randrange(6)
        if form == 0:
            out.append(f"https://doi.org/10.1002/{_escaped(rng)}")
            continue
        name = f"10.{rng.choice(['1016', '1007', '1038', '1371'])}/{_suffix(rng)}"
        heads = ["", "doi:", "DOI: ", "http://dx.doi.org/", ""]
        out.append(heads[form - 1] + name)
    return out


# The real names (issue 30): the labels of the repository's corpora of third-party text, each
# file naming the sources of its snippets (wild.jsonl: 574 sources, 2,603 snippets, their
# licences; pdf/labels.jsonl: the publishers' sample PDFs), and the names the peers' own test
# suites expect (peer_vectors.json: each case names its repository and file).
TESTS = Path(__file__).resolve().parent.parent / "tests"
REAL_SOURCES = ("corpus/wild.jsonl", "corpus/pdf/labels.jsonl", "vectors/peer_vectors.json")

# Junk, as columns of references hold it: empty cells, placeholders, other identifiers, a
# prefix alone, another site's URL, an unfinished name.
JUNK = (
    "",
    " ",
    "N/A",
    "n/a",
    "-",
    "null",
    "none",
    "TBD",
    "PMID: 31452104",
    "PMC6711247",
    "arXiv:2101.00001",
    "ISBN 978-3-16-148410-0",
    "https://www.ncbi.nlm.nih.gov/pubmed/31452104",
    "https://example.org/article/1234",
    "10.1038",
    "doi:",
    "10.1000/",
    "hdl:1721.1/123",
    "see the supplement",
)


def real_names() -> list[str]:
    """The distinct real DOI names of :data:`REAL_SOURCES`, sorted."""
    names: set[str] = set()
    for line in (TESTS / REAL_SOURCES[0]).read_text(encoding="utf-8").splitlines():
        names.update(json.loads(line)["dois"])
    for line in (TESTS / REAL_SOURCES[1]).read_text(encoding="utf-8").splitlines():
        names.update(json.loads(line)["dois"])
    vectors = json.loads((TESTS / REAL_SOURCES[2]).read_text(encoding="utf-8"))
    names.update(
        case["expected"]
        for case in vectors["cases"]
        if case["kind"] == "parse" and str(case["expected"]).startswith("10.")
    )
    return sorted(names)


def _present(name: str, form: int) -> str:
    """*name* in one of six presentations, as harvested columns have them: bare, ``doi:``
    URIs (escaped), ``DOI: `` labels, doi.org URLs (escaped), dx.doi.org URLs as people paste
    them (not escaped) and URNs."""
    doi = doikit.DOI(name)
    if form == 0:
        return "".join(name)  # (a str of its own, as each cell of a real column is)
    if form == 1:
        return doi.to_uri()
    if form == 2:
        return f"DOI: {name}"
    if form == 3:
        return doi.to_url()
    if form == 4:
        return f"http://dx.doi.org/{name}"
    return doi.to_urn()


def make_real_inputs(n: int, seed: int = 30) -> list[str | None]:
    """N cells of real names (each a new str) in the six presentations, 1% junk and 1%
    nulls, the same for the same seed."""
    rng = random.Random(seed)
    names = real_names()
    out: list[str | None] = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.01:
            out.append(None)
        elif roll < 0.02:
            out.append("".join(rng.choice(JUNK)))
        else:
            out.append(_present(rng.choice(names), rng.randrange(6)))
    return out


# Each keeps its answers in a list, as a column needs them (a loop that drops each answer
# at once lets the allocator reuse its memory, which no real use does).
def _loop_idutils(texts: Texts) -> None:
    normalize_doi = idutils.normalize_doi
    out: list[object] = []
    append = out.append
    for text in texts:
        if text is None:  # (a null cell: idutils reads str only)
            append(None)
            continue
        try:
            append(normalize_doi(text))
        except AttributeError:  # idutils's answer to a form it cannot read
            append(None)


def _loop_normalize(texts: Texts) -> None:
    normalize = doikit.normalize
    invalid = doikit.InvalidDOI
    out: list[str | None] = []
    append = out.append
    for text in texts:
        if text is None:
            append(None)
            continue
        try:
            append(normalize(text))
        except invalid:
            append(None)


def _bulk(texts: Texts) -> None:
    doikit.normalize_many(texts)


def _new_strings(texts: Texts) -> None:
    """CPython's own loop that makes a new str of each text and reads nothing: a floor for
    any answer made of Python strings (a list of them, as normalize_many's)."""
    list(map(str.lower, filter(None, texts)))  # (nulls and empty cells left out)


def _columns(texts: Texts) -> dict[str, Callable[[Texts], None]]:
    """The column paths, each on its own column of the same names, built before the clock
    starts (as a user's column is there already)."""
    import duckdb  # noqa: PLC0415 - the column libraries are extras
    import polars as pl  # noqa: PLC0415
    import pyarrow as pa  # noqa: PLC0415
    from duckdb.func import ARROW, SPECIAL  # noqa: PLC0415
    from duckdb.sqltypes import VARCHAR  # noqa: PLC0415

    import doikit.duckdb  # noqa: PLC0415
    import doikit.polars  # noqa: PLC0415 - registers the namespace
    from doikit import arrow  # noqa: PLC0415

    column = pa.chunked_array(
        [pa.array(texts[i : i + 1_000_000]) for i in range(0, len(texts), 1_000_000)]
    )
    frame = pl.DataFrame({"ref": texts})
    con = duckdb.connect()
    doikit.duckdb.register(con)
    refs = pa.Table.from_arrays([column], names=["ref"])
    con.register("refs", refs)
    # DuckDB's floor for any Arrow UDF: one that answers nulls at once, so that its time is
    # DuckDB's scan, its exchange with Python per vector of 2,048 rows and the fetch.
    con.create_function(
        "nothing",
        lambda texts: pa.nulls(len(texts), pa.string()),
        [VARCHAR],
        VARCHAR,
        type=ARROW,
        null_handling=SPECIAL,
    )

    def polars_normalize(_: Texts) -> None:
        frame.select(pl.col("ref").doi.normalize())  # type: ignore[attr-defined]

    return {
        "doikit.arrow.normalize": lambda _: arrow.normalize(column),
        "polars: pl.col(ref).doi.normalize()": polars_normalize,
        "duckdb: doi_normalize(ref)": lambda _: con.sql(
            "SELECT doi_normalize(ref) FROM refs"
        ).to_arrow_table(),
        "duckdb: a UDF answering nulls": lambda _: con.sql(
            "SELECT nothing(ref) FROM refs"
        ).to_arrow_table(),
    }


CANDIDATES: dict[str, Callable[[Texts], None]] = {
    "idutils.normalize_doi, a loop": _loop_idutils,
    "doikit.normalize, a loop": _loop_normalize,
    "doikit.normalize_many": _bulk,
    "list(map(str.lower, names))": _new_strings,
}


def _best(loop: Callable[[Texts], None], inputs: Texts, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        start = time.perf_counter()
        loop(inputs)
        best = min(best, time.perf_counter() - start)
    return best


def _memory(inputs: Texts) -> float:
    """Bytes per name that normalize_many's answer holds (list slot and key strings)."""
    part = inputs[:100_000]
    tracemalloc.start()
    answer = doikit.normalize_many(part)
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del answer
    return size / len(part)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--mix",
        choices=["issue", "real"],
        default="issue",
        help="the issue's generated mix, or real names (issue 30)",
    )
    parser.add_argument(
        "--spark", type=int, default=0, metavar="N", help="also time doikit.spark on N rows"
    )
    args = parser.parse_args()
    inputs = make_inputs(args.names) if args.mix == "issue" else make_real_inputs(args.names)
    print(f"build: {BUILD}; {args.names:,} names ({args.mix} mix), best of {args.rounds} rounds")
    base = None
    for label, loop in {**CANDIDATES, **_columns(inputs)}.items():
        seconds = _best(loop, inputs, args.rounds)
        base = base or seconds
        print(f"{label:<32}{args.names / seconds:>14,.0f} names/s{base / seconds:>8.2f}x")
    per_name = _memory(inputs)
    print(
        f"normalize_many's answer: {per_name:.0f} bytes per name"
        f" ({per_name * args.names / 2**20:,.0f} MiB for {args.names:,})"
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10  # KiB on Linux
    print(f"the process's peak resident memory: {peak:,.0f} MiB (inputs, columns, answers)")
    if args.spark:
        _spark(inputs[: args.spark])


def _spark(inputs: Texts) -> None:
    """doikit.spark.normalize on a local[2] Spark, the JVM's start and the frame's creation
    left out: rows per second and the cost per row."""
    import os  # noqa: PLC0415
    import sys  # noqa: PLC0415

    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession  # noqa: PLC0415

    from doikit import spark as doi  # noqa: PLC0415

    session = (
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    frame = session.createDataFrame([(text,) for text in inputs], "ref string").cache()
    frame.count()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        frame.select(doi.normalize("ref").alias("key")).agg({"key": "count"}).collect()
        best = min(best, time.perf_counter() - start)
    session.stop()
    print(
        f"spark local[2], doikit.spark.normalize: {len(inputs) / best:,.0f} rows/s,"
        f" {best / len(inputs) * 1e9:,.0f} ns per row ({len(inputs):,} rows)"
    )


if __name__ == "__main__":
    main()
