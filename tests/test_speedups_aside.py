"""The accelerator's bulk paths on columns of real names with junk among them (issue 30).

Two things the C reader does for such columns, each held to the Python parser here:
a text it leaves undecided is set aside and read by the Python parser after the C loop
(normalize_many and parse_many, as arrow_many did already), so one such text no longer
stops the helper thread for the texts around it; and an ASCII text with neither ``%`` nor
``10.`` is answered None (null in Arrow) without the Python parser, where the answer is
None (``errors="none"``), since no presentation of a name can be written without either.
"""

from __future__ import annotations

import random
import string
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doikit import InvalidDOI, _doi, _present
from test_properties import _answer, _one

if TYPE_CHECKING:
    from types import ModuleType


def _built() -> ModuleType | None:
    try:
        from doikit import _speedups  # noqa: PLC0415
    except ImportError:  # pragma: no cover - only where no C compiler was at hand
        return None
    return _speedups


_speedups = _built()

needs_c = pytest.mark.skipif(_speedups is None, reason="the C accelerator is not built")

QUIET, REPORT = False, True  # the bulk functions' second argument
LONG = 70_001  # longer than the helper's threshold (16,384), not a whole number of chunks

# Junk as columns of references hold it, and texts the C reader leaves to the Python parser:
# valid ones (a '#' after a non-URL head, a fragment, non-ASCII) and invalid ones.
JUNK = ["", " ", "N/A", "-", "PMID: 31452104", "ISBN 978-3-16-148410-0", "hdl:1721.1/123"]
JUNK += ["https://example.org/a/1", "see p. 10", "1O.1000/x", "doi:", "DOI:%20"]
UNDECIDED = ["10.1038", "10.1000/", "DOI: 10.1002/x;2-#", "http://dx.doi.org/10.1/a#b"]
UNDECIDED += ["10.1016/caf\u00e9", "doi:10.1000/a?b", " 10.1000/182 ", "10.1000/%zz"]
NAMES = ["10.1016/S0370-2693(00)00889-3", "urn:doi:10.1109:TASE.2025.3614472"]
NAMES += ["https://doi.org/10.1002/(SICI)1097-4636(199706)35:4%3C433::AID-JBM4%3E3.0.CO;2-H"]
NAMES += ["doi:10.31234/osf.io%2Fr9w34", "DOI: 10.1214/09-SS054", "10.1371/journal.pone.1"]

ASCII_TEXT = st.text(alphabet=string.printable, max_size=40)
PIECES = st.sampled_from(["1", "0", ".", "10", "0.", "doi:", "/", "%", "1O.", " ", "x"])
NEAR_NAMES = st.lists(st.one_of(PIECES, ASCII_TEXT), max_size=8).map("".join)


@given(st.one_of(ASCII_TEXT, NEAR_NAMES))
def test_no_name_without_a_percent_or_10_dot(text: str) -> None:
    """The rule the C reader answers junk by (dk_surely_no_name), held to the Python parser:
    an ASCII text with neither '%' nor '10.' is no DOI in any presentation."""
    if "%" in text or "10." in text:
        return
    for one in (_present.parse, _doi._py_normalize):
        with pytest.raises(InvalidDOI):
            one(text)


PREFIXES = st.lists(st.integers(0, 10**9).map(str), min_size=1, max_size=3).map(".".join)


@given(PREFIXES, st.sampled_from(["", "/"]))
def test_no_name_in_a_prefix_alone(prefix: str, end: str) -> None:
    """The other rule of dk_surely_no_name, held to the Python parser: a prefix alone,
    with or without its '/' ("10.1038", "10.1000/"), is no DOI."""
    for one in (_present.parse, _doi._py_normalize):
        with pytest.raises(InvalidDOI):
            one(f"10.{prefix}{end}")


def _column(rng: random.Random, extra: list[str | None]) -> list[str | None]:
    """LONG texts: the names, with junk, undecided texts and *extra* spread through (a few
    in every block of the helper's 256)."""
    pool: list[str | None] = [*NAMES * 20, None, *JUNK, *UNDECIDED, *extra]
    return [pool[rng.randrange(len(pool))] for _ in range(LONG)]


@needs_c
@settings(max_examples=8, deadline=None)
@given(st.lists(st.one_of(st.none(), NEAR_NAMES, st.text(max_size=12)), max_size=20), st.integers())
def test_texts_set_aside_get_the_per_name_answers(extra: list[str | None], seed: int) -> None:
    assert _speedups is not None
    long = _column(random.Random(seed), extra)
    for many, one in (
        (_speedups.normalize_many, _doi._py_normalize),
        (_speedups.parse_many, _present.parse),
    ):
        answers = {text: _one(one, text) for text in set(long)}
        expected = [answers[text] for text in long]
        assert [_answer(item) for item in many(long, REPORT)] == expected
        quiet = [answer if kind == "ok" else None for kind, answer in expected]
        assert many(long, QUIET) == quiet
        assert many(tuple(long), QUIET) == quiet


@needs_c
@settings(max_examples=8, deadline=None)
@given(st.lists(st.one_of(st.none(), NEAR_NAMES, st.text(max_size=12)), max_size=20), st.integers())
def test_arrow_answers_junk_as_the_per_name_functions(extra: list[str | None], seed: int) -> None:
    pa = pytest.importorskip("pyarrow")
    from doikit import arrow  # noqa: PLC0415 - an extra

    long = _column(random.Random(seed), extra)[:5_000]
    for function, one in ((arrow.normalize, _doi._py_normalize), (arrow.validate, _present.parse)):
        answers = [_one(one, text) for text in long]
        expected = [answer if kind == "ok" else None for kind, answer in answers]
        assert function(pa.array(long)).to_pylist() == expected
        assert function(pa.array(long, pa.large_string())).to_pylist() == expected


@needs_c
def test_an_error_among_the_texts_set_aside_comes_before_a_later_type_error() -> None:
    """The texts set aside are read before an item that is no text refuses the call, so the
    first error in order is the one raised, as when the Python parser ran in place."""
    assert _speedups is not None

    class Broken(str):
        __slots__ = ()

        def strip(self, _: str | None = None) -> str:
            raise ValueError("strip")

    long: list[object] = ["doi:10.1000/ABC"] * LONG
    long[10] = Broken("not a doi")
    long[50_000] = 5
    for report in (QUIET, REPORT):
        with pytest.raises(ValueError, match="strip"):
            _speedups.normalize_many(long, report)
    long[10] = "not a doi"
    for report in (QUIET, REPORT):
        with pytest.raises(TypeError, match="item 50000 is a int"):
            _speedups.normalize_many(long, report)


@needs_c
@pytest.mark.parametrize(
    "places",
    [[0], [-1], [0, 1, 2], [0, -1], [5, 6, 100, -2, -1], "all"],
    ids=["first", "last", "first-three", "both-ends", "runs", "all"],
)
def test_arrow_puts_the_texts_set_aside_back_in_their_places(places: list[int] | str) -> None:
    """The answers of the texts set aside go into the column in place: those before the
    first stay, the others move right by the answers put before them (put_aside_back in
    arrow.c), at the ends, in runs and when every text was set aside; on slices too."""
    pa = pytest.importorskip("pyarrow")
    from doikit import arrow  # noqa: PLC0415 - an extra

    rng = random.Random(30)
    texts: list[str | None] = [rng.choice([*NAMES, None, "N/A"]) for _ in range(300)]
    undecided = [t for t in UNDECIDED if _one(_doi._py_normalize, t)[0] == "ok"]
    spots = list(range(len(texts))) if isinstance(places, str) else places
    for k, place in enumerate(spots):
        texts[place] = undecided[k % len(undecided)] if k % 3 else UNDECIDED[k % len(UNDECIDED)]
    for function, one in ((arrow.normalize, _doi._py_normalize), (arrow.validate, _present.parse)):
        for kind in (pa.string(), pa.large_string()):
            column = pa.array(texts, kind)
            for start, stop in ((0, len(texts)), (1, len(texts)), (6, 101), (0, 1)):
                answers = [_one(one, text) for text in texts[start:stop]]
                expected = [answer if got == "ok" else None for got, answer in answers]
                assert function(column[start:stop]).to_pylist() == expected
