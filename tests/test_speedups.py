"""The optional C accelerator (src/doikit/_c/) against its pure-Python reference.

doikit._doi.DOIState is the definition; doikit._speedups.DOIState must behave the same for
every input: the same name and key, or the same error with the same code, position and
message. Both are real: the C type is the one `pip install` compiled.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import itertools
import json
import pickle
import random
import sys
import threading
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import doikit
from doikit import DOI, Found, InvalidDOI, _doi, _extract, _present
from doikit._doi import DOIState
from test_extract import EDGES as EXTRACT_EDGES
from test_extract import PIECES as EXTRACT_PIECES
from test_properties import _answer, _one

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

PURE = _doi.PURE_PYTHON_WANTED

try:
    from doikit import _speedups
except ImportError:  # pragma: no cover - only where no C compiler was at hand
    if not PURE:
        pytest.fail(
            "doikit._speedups did not build (see pip's output). Install a C compiler, or "
            "set DOIKIT_PURE_PYTHON=1 to test the pure-Python build on purpose.",
            pytrace=False,
        )
    pytest.skip("the pure-Python build, on purpose", allow_module_level=True)

C = _speedups.DOIState


# what _extract hands the C loop: the trailing punctuation, a URL candidate's odd last letters
SETS = (_extract._TRAIL_CHARS, _extract._GLUED_FILE_LAST)


class _Scan(Protocol):
    def __call__(
        self, text: str, position: int, resume: list[int] | None, base: int = ..., /
    ) -> Iterator[Found]: ...


# Text shaped like the presentations, so that most draws reach the quick path, the
# escapes, the URN forms and the full parser's errors, not only "not a DOI".
PIECES = st.sampled_from(
    [
        "10.",
        "1000",
        "1000.10",
        "/",
        "182",
        "ABC",
        "%2F",
        "%2f",
        "%3C",
        "%3E",
        "%25",
        "%",
        "%E2%80%90",
        "%FF",
        "doi:",
        "DOI: ",
        "info:doi/",
        "hdl:",
        "urn:doi:",
        ":",
        "https://doi.org/",
        "HTTP://DX.DOI.ORG/",
        "doi.org/",
        "https://hdl.handle.net/",
        "?",
        "#",
        " ",
        "\t",
        "\u00e9",
        "\u212a",
        "\u2010",
        "\u200b",
        "\U0001f600",
        "\ud800",
    ]
)
PRESENTATIONS = st.lists(st.one_of(PIECES, st.text(max_size=3)), max_size=8).map("".join)


def _outcome(make: Callable[..., object], value: object) -> tuple[object, ...]:
    try:
        state = make(value)
    except InvalidDOI as exc:
        return ("InvalidDOI", exc.code, exc.position, str(exc), exc.text)
    except TypeError as exc:
        return ("TypeError", str(exc))
    if isinstance(state, str):  # parse() and normalize()
        return ("ok", state, type(state))
    return ("ok", str(state), state.key, type(state.key))  # type: ignore[attr-defined]


@given(st.one_of(PRESENTATIONS, st.text()))
@example("10.1000/182")
@example("10.1000/ABC")
@example("https://doi.org/10.1002/(SICI)1097-4258(199906)14:2%3C1::AID-XYZ%3E3.0.CO;2-1")
@example("https://doi.org/10.1000%2FABC")
@example("urn:doi:10.123:456ABC%2Fzyz")
@example("doi:10.1/%")
@example("10.1000/caf\u00e9")
@example("  doi:10.1000/182  ")
@example("")
def test_same_name_key_or_error_as_the_reference(text: str) -> None:
    assert _outcome(C, text) == _outcome(DOIState, text)


@given(st.one_of(PRESENTATIONS, st.text()))
@example("10.1000/ABC")
@example("https://doi.org/10.1000%2FABC")
@example("urn:doi:10.123:456ABC%2Fzyz")
@example("10.1000/caf\u00c9")
@example("doi:10.1/%")
def test_parse_and_normalize_agree_with_the_reference(text: str) -> None:
    assert _outcome(_speedups.parse, text) == _outcome(_present.parse, text)
    assert _outcome(_speedups.normalize, text) == _outcome(_doi._py_normalize, text)


# The C reader checks and copies a suffix eight bytes at a time, and its last partial word
# as an overlapping one: every suffix length around the word size, with the character that
# decides (refused, an escape, a capital) at the end, at the start and nowhere.
_WORD_EDGES = (
    [
        head + "10.1000/" + body
        for head in ["", "doi:", "https://doi.org/"]
        for length in range(20)
        for body in (
            "a" * length,
            "a" * length + "#",
            "a" * length + "%3C",
            "a" * length + "Q",
            "#" + "a" * length,
            "Q" + "a" * length,
            "a" * length + " ",
            "a" * length + "\x7f",
        )
    ]
    + [
        # The C reader counts a name's escapes as it checks the text and writes the name eight
        # bytes at a time up to the next one: escapes whole, cut short, doubled, or decoding to
        # what no name holds, at each place around the word size.
        head + "10.1000" + separator + "a" * length + escape + "b" * after
        for head in ["doi:", "https://doi.org/", "urn:doi:"]
        for separator in ["/", "%2F", ":"]
        for length in (0, 1, 6, 7, 8, 9, 15, 16, 17)
        for escape in ("%", "%4", "%41", "%%", "%%41", "%4%41", "%41%", "%zz", "%7F", "%1F", "%20")
        for after in (0, 1, 8)
    ]
    + [
        # More '%' than a name of escapes could hold, after a long prefix: the name's length as
        # counted is shorter than the prefix (a review's overflow: the URN's prefix was copied
        # before any check).
        head + "10." + "1" * digits + separator + "%" * percents
        for head in ["urn:doi:", "doi:", "https://doi.org/"]
        for separator in [":", "/", "%2F"]
        for digits in (1, 4, 9, 40)
        for percents in (1, 2, 3, 4, 5, 9, 17, 41, 60)
    ]
)


@pytest.mark.parametrize("text", _WORD_EDGES)
def test_suffixes_around_the_word_size_agree_with_the_reference(text: str) -> None:
    assert _outcome(C, text) == _outcome(DOIState, text)
    assert _outcome(_speedups.normalize, text) == _outcome(_doi._py_normalize, text)


OTHER_TYPES = [DOI("10.1000/ABC"), None, 10, b"10.1000/182", ["10.1000/182"], DOIState("10.1/x")]


@pytest.mark.parametrize("value", OTHER_TYPES)
def test_same_answer_for_other_types(value: object) -> None:
    assert _outcome(C, value) == _outcome(DOIState, value)
    assert _outcome(_speedups.parse, value) == _outcome(_present.parse, value)
    assert _outcome(_speedups.normalize, value) == _outcome(_doi._py_normalize, value)


def test_str_subclass_is_read_as_its_text() -> None:
    class Text(str):
        __slots__ = ()

    assert _outcome(C, Text("doi:10.1000/ABC")) == _outcome(DOIState, Text("doi:10.1000/ABC"))
    # The answers are exact str objects, as Python's are (the C reader leaves subclasses to
    # the pattern; it returned the subclass object itself once, a review found).
    quiet = False  # (None for an invalid text, not its InvalidDOI)
    for text in (Text("10.1000/abc"), Text("10.1000/ABC"), Text("doi:10.1000/ABC")):
        for answer in (
            _speedups.parse(text),
            _speedups.normalize(text),
            *_speedups.normalize_many([text], quiet),
            *_speedups.parse_many([text], quiet),
        ):
            assert type(answer) is str


def test_the_arrow_reader_refuses_buffers_that_do_not_hold_the_array() -> None:
    """arrow_many is handed buffers and numbers: numbers that overflow are refused, not
    read past the buffers (a review's crash: an offset near 2**63)."""
    wide, key = False, True
    with pytest.raises(ValueError, match="too short"):
        _speedups.arrow_many(b"\xff", b"\0" * 8, b"", 2**63 - 8, 1, wide, key)
    with pytest.raises(ValueError, match="too short"):
        _speedups.arrow_many(None, b"\0" * 8, b"", 1, 1, wide, key)
    with pytest.raises(ValueError, match="too short"):
        _speedups.arrow_many(b"", b"\0" * 12, b"", 0, 2, wide, key)


@given(st.one_of(PRESENTATIONS, st.text()))
def test_known_names_agree(name: str) -> None:
    if not doikit.is_valid(name):
        return
    name = doikit.validate(name)
    fast, reference = C._known(name), DOIState._known(name)
    assert (str(fast), fast.key) == (str(reference), reference.key)


@given(PRESENTATIONS, PRESENTATIONS)
@example("10.1/A", "10.1/a")
@example("10.1/a", "10.1/B")
@example("10.1/\u00c9", "10.1/\u00e9")
def test_identity_agrees(a: str, b: str) -> None:
    try:
        pair_c = (C(a), C(b))
        pair_py = (DOIState(a), DOIState(b))
    except InvalidDOI:
        return
    _orders_by_key(*pair_c)
    _orders_by_key(*pair_py)
    assert (pair_c[0] == pair_c[1]) == (pair_py[0] == pair_py[1])


def _orders_by_key(left: Any, right: Any) -> None:
    assert hash(left) == hash(left.key)
    assert (left == right) == (left.key == right.key)
    assert (left != right) == (left.key != right.key)
    assert (left < right) == (left.key < right.key)
    assert (left <= right) == (left.key <= right.key)
    assert (left > right) == (left.key > right.key)
    assert (left >= right) == (left.key >= right.key)


def test_compares_only_with_doi_values() -> None:
    value: object = C("10.1000/182")
    assert value != "10.1000/182"
    assert value.__eq__("10.1000/182") is NotImplemented
    with pytest.raises(TypeError):
        _ = value < "10.1000/182"  # type: ignore[operator]


def test_read_only() -> None:
    value = C("10.1000/ABC")
    with pytest.raises(AttributeError):
        value.key = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        value._DOI__name = "x"  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        value._DOI__key = "x"  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        del value.key
    with pytest.raises(AttributeError):
        value.anything = 1  # type: ignore[attr-defined]
    assert (str(value), value.key) == ("10.1000/ABC", "10.1000/abc")


def test_arguments_are_checked() -> None:
    with pytest.raises(TypeError, match="exactly one argument"):
        C()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="exactly one argument"):
        C("10.1/a", "10.1/b")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="keyword"):
        C(text="10.1/a")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes a str"):
        C._known(b"10.1/a")  # type: ignore[arg-type]


def test_doi_stands_on_the_build_that_was_asked_for() -> None:
    assert DOI.__mro__[1] is (DOIState if PURE else C)
    assert doikit.normalize is (_doi._py_normalize if PURE else _speedups.normalize)
    assert vars(_doi)["parse"] is (_present.parse if PURE else _speedups.parse)
    assert doikit.validate("doi:10.1000/ABC") == "10.1000/ABC"
    assert doikit.is_valid("doi:10.1000/ABC")
    assert not doikit.is_valid("doi:10.1000")
    value = DOI("https://doi.org/10.1000/ABC%23x")
    assert pickle.loads(pickle.dumps(value)) == value  # noqa: S301 - our own data
    assert isinstance(value, DOI)


def test_signature_is_the_same() -> None:
    for state in (C, DOIState, DOI):
        (parameter,) = inspect.signature(state).parameters.values()
        assert (parameter.name, parameter.kind) == ("text", parameter.POSITIONAL_ONLY)


def test_values_stay_out_of_the_cycle_collector() -> None:
    # Two strings can form no cycle: the collector need not walk a million DOIs in a list.
    for value in (C("10.1000/182"), C("urn:doi:10.123:456"), C._known("10.1/x")):
        assert not gc.is_tracked(value)
    if not PURE:
        assert not gc.is_tracked(DOI("10.1000/182"))
        assert not gc.is_tracked(DOI.from_parts(prefix="10.1", suffix="x"))


def test_no_reference_leaks() -> None:
    # Every path of DOIState.__new__ in C (quick, escapes, URN, errors, other types, keys
    # through fold()) run many times on new objects: a lost reference per call would keep
    # thousands of blocks alive; the interpreter's own caches account for a few.
    texts = [
        "10.1000/ABC",
        "10.1000/abc",
        "https://doi.org/10.1000%2FABC",
        "urn:doi:10.123:456ABC%2Fzyz",
        "10.1000/caf\u00e9",
        "doi:10.1/%",
        "not a doi",
        "10.1000/\u200b",
    ]

    def run() -> None:
        for _ in range(2000):
            for text in texts:
                fresh = text[:1] + text[1:]  # a new object each time
                for value in (fresh, DOI("10.1000/X" + fresh[-1:].strip("\u200b")), None):
                    with contextlib.suppress(InvalidDOI, TypeError):
                        C(value)
                if doikit.is_valid(fresh):
                    C._known(doikit.validate(fresh))
                for function in (_speedups.parse, _speedups.normalize):
                    with contextlib.suppress(InvalidDOI, TypeError):
                        function(fresh)
            # The bulk loop: every kind of item, reported and not, and a TypeError midway.
            fresh_texts = [t[:1] + t[1:] for t in texts]
            for bulk in (_speedups.parse_many, _speedups.normalize_many):
                for report in (False, True):
                    bulk([*fresh_texts, None], report)
                    with contextlib.suppress(TypeError):
                        bulk([fresh_texts[0], 5, fresh_texts[1]], report)
            # The scan in C: decided DOIs, those _decide answers, streams, an early drop.
            text = " ".join(fresh_texts) + " (doi:10.1000/x). 10.1000/y%2Fz 10.1101/123456v2"
            list(doikit.find_all(text))
            list(doikit.find_all([text[:20], text[20:]]))
            next(doikit.find_all(text))

    run()
    gc.collect()
    before = sys.getallocatedblocks()
    run()
    gc.collect()
    assert sys.getallocatedblocks() - before < 1000


# --- the extractor's scan in C (_speedups.Scan) against _extract._scan_python ----------


def _c_scan(text: str, position: int, resume: list[int] | None, base: int = 0) -> Iterator[Found]:
    """The scan in C, whichever build find_all runs (in the pure-Python one, DOI is no
    subtype of the C state, so its values are the C state's)."""
    finditer = _extract._candidates().finditer
    doi = C if PURE else DOI
    return cast(
        "Iterator[Found]",
        _speedups.Scan(
            finditer,
            text,
            position,
            resume,
            base,
            doi,
            Found,
            _extract._decide,
            _extract._walked,
            256,
            *SETS,
        ),
    )


def _scanned(text: str, chunks: list[str] | None, scan: _Scan) -> list[tuple[str, int, int, str]]:
    """What *scan* finds in *text*, whole or over *chunks* (as find_all streams them)."""
    if chunks is None:
        return [(str(f.doi), f.start, f.end, f.text) for f in scan(text, 0, None)]

    def chunk_scan(
        buffer: str, scan_from: int, base: int, *, final: bool
    ) -> tuple[Iterator[Found], Callable[[], int]]:
        resume: list[int] = []
        final = final or len(buffer) - scan_from > _extract._MAX_CARRY
        found = scan(buffer, scan_from, None if final else resume, base)
        return found, lambda: resume[0] if resume else len(buffer)

    found = _extract._chunked(chunks, chunk_scan, _extract._LOOKBACK)
    return [(str(f.doi), f.start, f.end, f.text) for f in found]


def _agree(text: str, size: int) -> None:
    python = _extract._scan_python
    assert _scanned(text, None, _c_scan) == _scanned(text, None, python)
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    assert _scanned(text, chunks, _c_scan) == _scanned(text, chunks, python)


@given(st.lists(EXTRACT_EDGES | EXTRACT_PIECES, max_size=24).map("".join), st.integers(1, 40))
@example("(doi:10.1000/182). https://doi.org/10.1000/a%3Cb%3E/abstract 10.1101/2020.0322v2", 7)
@example("'10.1000/182'. doi:10.1000/x* 10.1000/y!?", 5)
@example("\u00e9 https://doi.org/10.1000/x.pdf \U0001f600 10.1000/y.html, 10.1000/z;", 3)
# (session 24's review: resolver URLs whose name _url_name gives go to _decide, not the walk)
@example("see https://doi.org/10.1000/pdf here, https://doi.org/10.1000/Full.", 9)
@example("see https://doi.org/10.1016/S0049237X%2809)70189-2 x", 11)
@example("see 10.10020/. and 10.1002\\/. or 5: 45-10.1000/abc x", 13)
def test_the_scan_in_c_finds_what_the_python_scan_finds(text: str, size: int) -> None:
    _agree(text, size)
    _agree(text, len(text) + 1)


def test_the_scan_in_c_finds_what_the_python_scan_finds_in_every_corpus() -> None:
    texts = [
        json.loads(line)["text"]
        for corpus in ("wild.jsonl", "extract_corpus.jsonl", "extract_written.jsonl")
        for line in (Path(__file__).parent / "corpus" / corpus).read_text("utf-8").splitlines()
    ]
    for vectors in ("extract_wild.json", "extract_prose.json"):
        cases = json.loads((Path(__file__).parent / "vectors" / vectors).read_text("utf-8"))
        texts += [case["input"] for case in cases["cases"]]
    for text in texts:
        _agree(text, 97)


def test_the_scan_in_c_is_the_one_find_all_runs() -> None:
    kinds = {type(cast("object", doikit.find_all(s))) for s in ("10.1000/182", ["10.1/x"])}
    # a str is scanned at once; a stream's chunks each by a scan, chained
    assert kinds == {types.GeneratorType if PURE else _speedups.Scan, itertools.chain}


def test_the_scan_in_c_checks_its_arguments() -> None:
    scan_type: Any = _speedups.Scan  # called with wrong arguments on purpose
    finditer = _extract._candidates().finditer
    good = (
        finditer,
        "10.1000/1",
        0,
        None,
        0,
        C,
        Found,
        _extract._decide,
        _extract._walked,
        256,
        *SETS,
    )
    assert [str(f[0]) for f in scan_type(*good)] == ["10.1000/1"]
    for at, wrong in ((1, b"10.1000/1"), (3, ()), (5, str), (6, list), (10, None)):
        with pytest.raises(TypeError):
            scan_type(*good[:at], wrong, *good[at + 1 :])
    with pytest.raises(ValueError, match="ASCII"):
        scan_type(*good[:11], "\u2026")
    for at, number in ((2, -1), (4, -1), (4, sys.maxsize)):
        with pytest.raises(ValueError, match="out of range"):
            scan_type(*good[:at], number, *good[at + 1 :])
    with pytest.raises(TypeError, match="no iterator"):
        next(scan_type(lambda *_: 5, *good[1:]))
    with pytest.raises(TypeError, match="keyword"):
        scan_type(*good, x=1)

    # What _decide raises reaches the caller, and the scan can be dropped midway (a URN:
    # neither C path reads it).
    def broken(*_: object) -> tuple[None, int, int]:
        raise ValueError("decide")

    scan = scan_type(
        finditer,
        "10.1000/1 ver urn:doi:10.1000/2",
        0,
        None,
        0,
        C,
        Found,
        broken,
        broken,
        256,
        *SETS,
    )
    assert next(scan).text == "10.1000/1"
    with pytest.raises(ValueError, match="decide"):
        next(scan)
    assert list(scan) == []  # finished, as a generator that raised is

    # _decide runs Python code: a next() on the same scan from inside it is refused, as a
    # running generator refuses it (another thread could call it there).
    def reentrant(*_: object) -> tuple[None, int, int]:
        next(again)
        return None, 0, 2

    again = scan_type(
        finditer, "x urn:doi:10.1000/2", 0, None, 0, C, Found, reentrant, reentrant, 256, *SETS
    )
    with pytest.raises(ValueError, match="already running"):
        next(again)


# The bulk loop on long lists: from 16,384 items on it reads with a second thread
# (src/doikit/_c/python/helper.c), so these lists are longer than that, and not a whole
# number of the reader's chunks.
LONG = 70_001
QUIET, REPORT = False, True  # the bulk functions' second argument: InvalidDOI as None, or itself


QUICK_FORMS = [
    "10.1000/abc",
    "10.1000/ABC",
    "doi:10.1000/ABC",
    "DOI: 10.1000/x.y",
    "https://doi.org/10.1002/(SICI)1097%3C1%3E2.0.CO%3B2-Q",
    "http://dx.doi.org/10.1000%2F182",
    "urn:doi:10.1000:ABC",
]


def _answers(got: Sequence[object]) -> list[tuple[str, object]]:
    """The bulk functions' answers as test_properties compares them with the per-name
    functions' (_one), each name an exact str."""
    assert all(
        type(item) is str for item in got if item is not None and not isinstance(item, InvalidDOI)
    )
    return [_answer(cast("str | InvalidDOI | None", item)) for item in got]


@settings(max_examples=12, deadline=None)
@given(
    st.lists(st.one_of(st.none(), PRESENTATIONS, st.text()), min_size=1, max_size=40),
    st.integers(0, 2**32),
)
def test_long_lists_get_exactly_the_per_name_answers(texts: list[str | None], seed: int) -> None:
    # Hypothesis's texts among names the C reader decides, one in fifty or so: those it
    # does not decide are set aside and read after the C loop. (The order comes from the
    # seed, not from Hypothesis's data: too long for it.)
    rng = random.Random(seed)
    texts = [*texts, *QUICK_FORMS * 50]
    long = [texts[rng.randrange(len(texts))] for _ in range(LONG)]
    for many, one in (
        (_speedups.normalize_many, _doi._py_normalize),
        (_speedups.parse_many, _present.parse),
    ):
        answers = {text: _one(one, text) for text in texts}
        expected = [answers[text] for text in long]
        assert _answers(many(long, REPORT)) == expected
        assert _answers(many(tuple(long), REPORT)) == expected
        assert many(long, QUIET) == [answer if kind == "ok" else None for kind, answer in expected]


@pytest.mark.parametrize("size", [16_383, 16_384, 16_385, 4096 * 17 + 1])
def test_long_lists_of_every_size_around_the_thresholds(size: int) -> None:
    forms = [
        "doi:10.1000/ABC",
        "10.1000/abc",
        "10.1000/Abc",
        "https://doi.org/10.1000%2Fx%3Cy",
        "10.1000/caf\u00e9",
        "not a doi",
        None,
        "urn:doi:10.1000:Q",
    ]
    long = [forms[i % len(forms)] for i in range(size)]
    for place in range(4095, size, 5000):  # (a text that overflowed the reader's block once)
        long[place] = "urn:doi:10." + "1" * 300 + ":" + "%" * 300
    expected = [_one(_doi._py_normalize, text) for text in long]
    assert _answers(_speedups.normalize_many(long, REPORT)) == expected


def test_an_item_that_is_no_text_stops_a_long_list_cleanly() -> None:
    long = ["doi:10.1000/ABC"] * LONG
    long[50_000] = 5  # type: ignore[call-overload]
    for report in (QUIET, REPORT):
        with pytest.raises(TypeError, match="item 50000 is a int, not a str or None"):
            _speedups.normalize_many(long, report)
    assert _speedups.normalize_many(long[:50_000], QUIET) == ["10.1000/abc"] * 50_000


def test_a_long_list_changed_while_it_is_read() -> None:
    """Texts the Python parser reads let another thread run and change the list meanwhile:
    the loop must neither crash nor answer for an object the list no longer holds. Each
    answer is one of the answers of what the list held at that place at some time."""
    forms = ["doi:10.1000/ABC", "10.1000/caf\u00e9", "https://doi.org/10.1000%2FX", "10.1/x"]
    answers = {_doi._py_normalize(text) for text in forms}
    texts = [forms[i % len(forms)] for i in range(LONG)]
    stop = threading.Event()

    def change() -> None:
        rng = random.Random(7)
        while not stop.is_set():
            place = rng.randrange(len(texts) - 10)
            texts[place] = "".join(rng.choice(forms))  # a new object
            if rng.random() < 0.05:
                texts.append(rng.choice(forms))
            if rng.random() < 0.05:
                texts.pop()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    changer = threading.Thread(target=change)
    changer.start()
    try:
        for _ in range(4):
            got = _speedups.normalize_many(texts, QUIET)
            assert set(got) <= answers
            assert abs(len(got) - LONG) < LONG // 2
    finally:
        stop.set()
        changer.join()
        sys.setswitchinterval(interval)
