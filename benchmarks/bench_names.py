"""Throughput of DOI parsing against idutils.normalize_doi, in the same run.

    python benchmarks/bench_names.py [--n 1000000] [--rounds 5]

Inputs: N mixed presentation strings (bare, ``doi:``, ``DOI: ``, doi.org and dx.doi.org
URLs, some with percent-escapes, and URN forms), built from a fixed seed. Each round times
idutils, ``DOI(s).key`` and ``doikit.normalize(s)`` on each block of 10,000 inputs, back to
back, so that a noisy neighbour's burst hits every candidate alike; the figure is the median
of the block ratios. Each candidate runs in its own loop as its users write it, no wrapper
around any. idutils only strips a prefix (and raises AttributeError on the URN and ``%2F``
forms it cannot read, which its loop catches); doikit validates, decodes and folds.
Targets (issue 2): DOI(s).key >= 0.8x, normalize(s) >= 1.0x.

It measures the build in use: with the C accelerator where it is built, the pure-Python one
under ``DOIKIT_PURE_PYTHON=1``; the first line says which.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from typing import TYPE_CHECKING

import idutils

import doikit
from doikit import DOI
from doikit._doi import BUILD

if TYPE_CHECKING:
    from collections.abc import Callable


def _name(rng: random.Random) -> str:
    n = rng.randrange(1, 10**6)
    shape = rng.randrange(6)
    if shape == 0:
        return f"10.1016/j.cell.2020.{n % 12 + 1:02d}.{n:03d}"
    if shape == 1:
        return f"10.1002/(SICI)1097-4258(199906)14:2<{n}::AID-XYZ>3.0.CO;2-{n % 10}"
    if shape == 2:
        return f"10.1007/978-3-642-{n:05d}-3_{n % 9}"
    if shape == 3:
        return f"10.1038/nature{n:05d}"
    if shape == 4:
        return f"10.1371/journal.pone.{n:07d}"
    return f"10.5061/dryad.{n:x}"


def _presentation(rng: random.Random) -> str:
    doi = DOI(_name(rng))
    form = rng.random()
    if form < 0.30:
        return str(doi)
    if form < 0.45:
        return "doi:" + str(doi)
    if form < 0.50:
        return "DOI: " + str(doi)
    if form < 0.75:
        return doi.to_url()  # the Handbook's escapes: SICI names get %3C and %3E
    if form < 0.85:
        return "https://doi.org/" + doi.prefix + "%2F" + doi.to_url().split("/", 4)[4]
    if form < 0.90:
        return doi.to_url("http://dx.doi.org/")
    return doi.to_urn()


def make_inputs(n: int, seed: int = 26324) -> list[str]:
    """N presentation strings, the same for the same seed."""
    rng = random.Random(seed)
    return [_presentation(rng) for _ in range(n)]


def _idutils(text: str) -> str | None:
    try:
        return str(idutils.normalize_doi(text))
    except AttributeError:  # idutils's answer to a form it cannot read
        return None


# Each candidate loops over the inputs itself, written as its users write it, so that no
# candidate pays for a wrapper the others do not (a Python call is ~50 ns here).
def _loop_idutils(texts: list[str]) -> None:
    normalize_doi = idutils.normalize_doi
    for text in texts:
        try:  # noqa: SIM105 - suppress() would add a context manager's cost to the baseline
            normalize_doi(text)
        except AttributeError:  # idutils's answer to a form it cannot read
            pass


def _loop_key(texts: list[str]) -> None:
    for text in texts:
        _ = DOI(text).key


def _loop_normalize(texts: list[str]) -> None:
    normalize = doikit.normalize
    for text in texts:
        normalize(text)


CANDIDATES: dict[str, Callable[[list[str]], None]] = {
    "idutils.normalize_doi": _loop_idutils,
    "doikit DOI(s).key": _loop_key,
    "doikit.normalize(s)": _loop_normalize,
}


def _time(loop: Callable[[list[str]], None], inputs: list[str]) -> float:
    start = time.perf_counter()
    loop(inputs)
    return time.perf_counter() - start


def _form(text: str) -> str:
    """Which presentation *text* is, for the per-form table."""
    lowered = text.lower()
    for head, label in (
        ("10.", "bare"),
        ("urn:", "urn:doi:"),
        ("doi: ", "DOI: (label)"),
        ("doi:", "doi:"),
        ("http://dx.", "dx.doi.org URL"),
    ):
        if lowered.startswith(head):
            return label
    if "%2f" in lowered[:30]:
        return "URL with %2F"
    return "URL with %3C%3E" if "%3c" in lowered else "URL"


#: The escapes harvested URLs carry in their suffixes (issue 15); bench_bulk.py uses them too.
ESCAPES = ["%3C", "%3E", "%3B", "%28", "%29", "%3A"]


def many_escapes(n: int, seed: int = 15) -> list[str]:
    """doi.org URLs whose suffixes carry 3 to 10 escapes each, as harvested URLs do (issue
    15): a form of its own in the table, not part of the mix."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        suffix = f"(SICI)1097-4258(1999{rng.randrange(100):02d})14"
        for _ in range(rng.randrange(3, 11)):
            suffix += rng.choice(ESCAPES) + str(rng.randrange(1000))
        out.append(f"https://doi.org/10.1002/{suffix}")
    return out


def by_form(inputs: list[str], candidates: dict[str, Callable[[list[str]], None]]) -> None:
    """Print nanoseconds per input for each presentation form (best of 5, interleaved)."""
    groups: dict[str, list[str]] = {}
    for text in inputs:
        groups.setdefault(_form(text), []).append(text)
    groups["URL, 3-10 escapes"] = many_escapes(max(len(inputs) // 20, 1))
    print(f"{'form':18} {'share':>6} " + " ".join(f"{name[:22]:>23}" for name in candidates))
    for form, texts in sorted(groups.items()):
        best = dict.fromkeys(candidates, float("inf"))
        for _ in range(5):
            for name, function in candidates.items():
                best[name] = min(best[name], _time(function, texts))
        costs = [seconds / len(texts) * 1e9 for seconds in best.values()]
        cells = " ".join(f"{cost:>20,.0f} ns" for cost in costs)
        share = "extra" if form == "URL, 3-10 escapes" else f"{len(texts) / len(inputs):.0%}"
        print(f"{form:18} {share:>6} {cells}")


def identity(inputs: list[str]) -> None:
    """Print what set() and sorted() of DOI values cost against the same of their keys as
    plain str (best of 5, interleaved): matching datasets spends its time hashing and
    comparing DOIs. Then what a full collection costs with the values alive."""
    values = [DOI(text) for text in inputs]
    keys = [value.key for value in values]
    for label, work in (("set()", set), ("sorted()", sorted)):
        best = {"DOI values": float("inf"), "their keys (str)": float("inf")}
        for _ in range(5):
            for name, items in (("DOI values", values), ("their keys (str)", keys)):
                start = time.perf_counter()
                work(items)
                best[name] = min(best[name], time.perf_counter() - start)
        ratio = best["their keys (str)"] / best["DOI values"]
        print(
            f"{label:9} of {len(values):,} DOI values: "
            f"{best['DOI values'] * 1e9 / len(values):,.0f} ns each, "
            f"x{ratio:.2f} of the same on their keys as str"
        )
    # DOI values hold two strings: the C build keeps them out of the cycle collector.
    start = time.perf_counter()
    gc.collect()
    with_values = time.perf_counter() - start
    del values
    gc.collect()
    start = time.perf_counter()
    gc.collect()
    keys_only = time.perf_counter() - start
    print(
        f"gc.collect() with the {len(keys):,} DOI values alive: {with_values * 1e3:,.1f} ms "
        f"(with only their keys: {keys_only * 1e3:,.1f} ms)"
    )


def main() -> None:
    """Run the benchmark and print one line per candidate."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--by-form", action="store_true", help="also time each form apart")
    parser.add_argument("--identity", action="store_true", help="also time set(), sorted(), gc")
    args = parser.parse_args()
    inputs = make_inputs(args.n)
    unreadable = sum(_idutils(text) is None for text in inputs)
    candidates = CANDIDATES
    # Each block of inputs is timed with every candidate, back to back, so that a noisy
    # neighbour's burst hits all alike; the figure is the median of the block ratios.
    block = 10_000
    seconds: dict[str, float] = dict.fromkeys(candidates, 0.0)
    ratios: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(args.rounds):
        for at in range(0, len(inputs), block):
            part = inputs[at : at + block]
            times = {name: _time(function, part) for name, function in candidates.items()}
            for name, took in times.items():
                seconds[name] += took
                ratios[name].append(times["idutils.normalize_doi"] / took)
    print(
        f"build: {BUILD}; {args.n:,} inputs in blocks of {block:,}, {args.rounds} rounds; "
        f"idutils could not read {unreadable:,}"
    )
    for name, spent in seconds.items():
        quartiles = statistics.quantiles(ratios[name], n=4)
        print(
            f"{name:24} {args.n * args.rounds / spent:>12,.0f}/s   "
            f"x{statistics.median(ratios[name]):.2f} of idutils "
            f"(quartiles of the block ratios {quartiles[0]:.2f}-{quartiles[2]:.2f})"
        )
    if args.by_form:
        by_form(inputs[:100_000], candidates)
    if args.identity:
        identity(inputs)


if __name__ == "__main__":
    main()
