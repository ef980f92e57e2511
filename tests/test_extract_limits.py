"""find_all in time linear in the text on any text, and str subclasses read as their text
(issue 27), on both builds.

Each text of WORST is built to make a scan read the same characters again and again: the
starts inside a run of '10.', a DOI then ';' repeated, candidates refused after their run
was read, escapes cut from a URL's end one by one. 1 MB of each must be read within LIMIT
seconds, several times what the slowest takes on a 2-core machine shared with other work
(1.3 s; a stream, which reads an unfinished DOI again each time the text after it has
doubled, up to twice as long); the quadratic scan took from minutes to hours on the same
texts, and an alarm stops it at the limit. benchmarks/bench_extract_worst.py prints their
time per MB.

Both builds run in this process: find_all as installed (the scan's loop in C where it is
built) and with the pure-Python loop that the C loop follows (_extract._scan_python), as
tests/test_speedups.py holds the two to each other.
"""

from __future__ import annotations

import contextlib
import io
import random
import signal
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest

import doikit
from doikit import _extract

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

LIMIT = 10.0  # seconds for 1 MB (twice that in a stream)
SIZE = 1_000_000
CHUNK = 80  # what a line reader or a socket hands on

pytestmark = pytest.mark.skipif(
    not hasattr(signal, "setitimer"), reason="the time limit needs signal.setitimer (POSIX)"
)


def _tokens() -> str:
    """A line without blanks of every kind of token the scan decides on, from a fixed seed."""
    rng = random.Random(27)
    tokens = [
        *("10.", "10.1000/", "10.1000/a", "1", "a", "/", ".", "-", "(", ")", "[", "]", "<1"),
        *(">", ";", ",", "&amp;", "%", "%2F", "%29", "doi:", "https://doi.org/", "?doi="),
        *("https://x.org/", "&", "=", "\\", "\\@", "$", "$$", "'", "*", ":", "urn:doi:"),
        *("\xad", "xxx", "{a}", "/abstract", ".pdf", "/badge/", "-blue", "v2", "CO;", "2-"),
        "\n",
    ]
    return "".join(rng.choice(tokens) for _ in range(400))


class Worst(NamedTuple):
    """*piece* repeated between *head* and *tail*; the scan finds *each* DOIs per piece and
    *more* besides."""

    head: str
    piece: str
    tail: str = ""
    each: int = 0
    more: int = 0

    def text(self, size: int = SIZE) -> str:
        return self.head + self.piece * self.pieces(size) + self.tail

    def pieces(self, size: int = SIZE) -> int:
        return max(1, (size - len(self.head) - len(self.tail)) // len(self.piece))

    def found(self, size: int = SIZE) -> int:
        return self.each * self.pieces(size) + self.more


WORST = {
    # starts inside a run of digits and dots (the issue's: 80 KB took 40 s)
    "'10.' repeated": Worst("", "10."),
    "'10.1/' repeated": Worst("", "10.1/"),
    "'110.' repeated": Worst("", "110."),
    "'10.1' repeated": Worst("", "10.1"),
    "a registrant of 1 MB of digits": Worst("10.", "1", "/x", more=1),
    "'doi:10.' repeated": Worst("", "doi:10."),
    # trailing punctuation read again for each part of a suffix given back
    "';' repeated after a DOI": Worst("10.1000/a", ";", more=1),
    "';.' repeated after a DOI": Worst("10.1000/a", ";.", more=1),
    # candidates refused or cut after their run was read
    "DOIs joined by '+' before a TeX macro": Worst("", "10.1000/a+", "\\@"),
    "a view after each DOI in one URL": Worst("https://x.org/", "10.1000/a/abstract/", more=1),
    "brackets a DOI opens and never closes": Worst("", "10.1000/a(", more=1),
    # escapes and views cut from a URL's end one by one
    "escaped closers after a DOI in a URL": Worst("https://doi.org/10.1000/a", "%29", more=1),
    "escaped dots after a DOI in a URL": Worst("https://doi.org/10.1000/a", "%2E", more=1),
    "a view repeated across joined lines": Worst(
        "https://x.org/10.1000/a", "/abstract", "/\nb1", more=1
    ),
    # every candidate left to the walk
    "DOIs in query parameters": Worst("", "?doi=10.1000/a&", each=1),
    "a bracket and '$$' after each prefix": Worst("", "10.1000/[$$"),
    "subfield codes before prefixes": Worst("", "$$a10.1000/"),
    "lines that end in '/'": Worst("", "10.1000/a/\n", each=1),
    "spaced names behind markers": Worst("", "doi:10. 1234 / a. ", each=1),
    "character references": Worst("", "10.1000/a&amp;", more=1),
    # one character that matters after another in one long run
    "openers after a prefix": Worst("10.1000/", "("),
    "backslashes after a prefix": Worst("10.1000/", "\\", more=1),
    "references to '/' after a prefix": Worst("10.1000/", "&#47;"),
    "soft hyphens after a prefix": Worst("10.1000/", "\xad"),
    "'/' after a prefix": Worst("10.1000/", "/"),
    "'%' repeated": Worst("", "%"),
    "'doi:' repeated": Worst("", "doi:"),
    "URLs run together": Worst("", "https://doi.org/10.1000/a", more=1),
    "URNs run together": Worst("", "urn:doi:10.1000:", more=1),
    "SICI names run together": Worst(
        "", "10.1002/(SICI)1097-4258(199906)14:2<123::AID-XYZ>3.0.CO;2-", more=1
    ),
    "a suffix of 1 MB": Worst("10.1000/", "a", more=1),
    "blanks after a DOI": Worst("10.1000/a", " ", more=1),
    "every kind of token, no blank": Worst("", _tokens(), each=5),
}
# What a stream's reader waits on at a chunk's end (a DOI that may go on, a start), in
# small chunks; and one through a text file's reads.
STREAMED = (
    "'10.' repeated",
    "';' repeated after a DOI",
    "brackets a DOI opens and never closes",
    "a suffix of 1 MB",
)
READ = "lines that end in '/'"


@pytest.fixture(params=["installed", "pure-python"])
def build(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """find_all as installed, or with the pure-Python scan's loop (whole and streamed)."""
    if request.param == "pure-python":
        monkeypatch.setattr(_extract, "_scan", _extract._scan_python)
    return str(request.param)


class _TooSlow(Exception):  # noqa: N818 - raised by the alarm, caught right here
    pass


@contextlib.contextmanager
def _within(seconds: float) -> Iterator[None]:
    """Raise _TooSlow in the code that runs when *seconds* have passed (the regex engine
    checks for signals as it goes)."""

    def expire(_signal: int, _frame: object) -> None:
        raise _TooSlow

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _count_within(seconds: float, source: str | Iterable[str] | io.StringIO, what: str) -> int:
    try:
        with _within(seconds):
            return sum(1 for _ in doikit.find_all(source))
    except _TooSlow:
        pytest.fail(f"{what}: 1 MB was not read in {seconds} s", pytrace=False)


@pytest.mark.parametrize("name", list(WORST))
def test_the_worst_texts_are_read_in_linear_time(name: str, build: str) -> None:
    worst = WORST[name]
    assert _count_within(LIMIT, worst.text(), f"{name} ({build})") == worst.found()


@pytest.mark.parametrize("name", [*STREAMED, READ])
def test_the_worst_texts_are_read_in_linear_time_in_streams(name: str, build: str) -> None:
    worst = WORST[name]
    text = worst.text()
    if name == READ:
        source: list[str] | io.StringIO = io.StringIO(text)
    else:
        source = [text[at : at + CHUNK] for at in range(0, len(text), CHUNK)]
    found = _count_within(2 * LIMIT, source, f"{name} ({build}, streamed)")
    assert found == worst.found()


def test_every_worst_text_is_about_a_megabyte() -> None:
    for name, worst in WORST.items():
        assert SIZE * 0.99 <= len(worst.text()) <= SIZE, name


# --- str subclasses ------------------------------------------------------------------


class _Text(str):
    __slots__ = ()


class _Lying(str):
    """A str subclass whose methods give other text: the scan must read its characters."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> str:
        return "x"

    def __str__(self) -> str:
        return "10.9999/lie"

    def __add__(self, other: str) -> str:
        return "10.9999/lie"

    def __radd__(self, other: str) -> str:
        return "10.9999/lie"

    def rstrip(self, chars: str | None = None) -> str:  # noqa: ARG002 - it lies whatever
        return "x"

    def lower(self) -> str:
        return "x"


SAMPLE = (
    "See doi:10.1000/ABC, https://doi.org/10.1002/(SICI)1097-4258(199906)14:2%3C123::AID-XYZ"
    "%3E3.0.CO;2-1 and (10.1093/nar/27.2.573), 10.1000/a(b; urn:doi:10.1000:x, 10.1101/"
    "2020.03.22.002386v2.full.pdf, doi:10.\n1162/abc and <a href='https://x.org/doi/10.1111/"
    "j.1365-2486.2009.02000.x/abstract'>x</a> or doi:10/abc1."
)


def _answers(found: Iterable[doikit.Found]) -> list[tuple[str, int, int, str]]:
    answers = []
    for one in found:
        assert type(one.text) is str
        assert type(str(one.doi)) is str
        assert type(one.doi.key) is str
        answers.append((str(one.doi), one.start, one.end, one.text))
    return answers


def _subclasses() -> list[type[str]]:
    kinds: list[type[str]] = [_Text, _Lying]
    with contextlib.suppress(ImportError):
        from markupsafe import Markup  # noqa: PLC0415 - where the extra is installed

        kinds.append(Markup)
    with contextlib.suppress(ImportError):
        import numpy as np  # noqa: PLC0415 - ditto

        kinds.append(np.str_)
    with contextlib.suppress(ImportError):
        from bs4.element import NavigableString  # noqa: PLC0415 - ditto

        kinds.append(NavigableString)
    return kinds


@pytest.mark.parametrize("kind", _subclasses(), ids=lambda kind: kind.__name__)
def test_a_str_subclass_is_read_as_its_text(kind: type[str], build: str) -> None:
    expected = _answers(doikit.find_all(SAMPLE))
    assert len(expected) >= 7
    assert _answers(doikit.find_all(kind(SAMPLE))) == expected, build
    assert doikit.find(kind(SAMPLE)) == doikit.find(SAMPLE)
    chunks = [kind(SAMPLE[at : at + 7]) for at in range(0, len(SAMPLE), 7)]
    assert _answers(doikit.find_all(chunks)) == expected
    assert list(doikit.find_short(kind(SAMPLE))) == list(doikit.find_short(SAMPLE)) != []


@pytest.mark.usefixtures("build")
def test_markup_chunks_joined_to_str_chunks_keep_their_characters() -> None:
    markupsafe = pytest.importorskip("markupsafe")
    # Markup joined to a str escapes the str ('<i>' would be '&lt;i&gt;', moving offsets)
    chunks = [markupsafe.Markup("see <b>10.1000/x</b> "), " and <i>10.1000/y</i>"]
    assert _answers(doikit.find_all(chunks)) == _answers(doikit.find_all("".join(chunks)))


def test_what_is_no_text_is_refused_with_what_it_is() -> None:
    for source in ([b"10.1000/x"], io.BytesIO(b"10.1000/x"), ["10.1000/x ", 5]):
        with pytest.raises(TypeError, match=r"DOIs are found in text: .*not (bytes|int)"):
            list(doikit.find_all(source))  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="not"):
            list(doikit.find_short(source))  # type: ignore[arg-type]
