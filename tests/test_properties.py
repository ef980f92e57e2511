"""Hypothesis properties: round trips, totality, and the hash/eq contract."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import doikit
from doikit import DOI, InvalidDOI
from doikit._syntax import fold

# Unicode Graphic: L, M, N, P, S and Zs (004 ch. 2). Weighted towards the characters that
# matter to the encoders: '/', '.', '%', '#', '?', spaces, combining marks, astral planes.
GRAPHIC = st.characters(categories=["L", "M", "N", "P", "S", "Zs"])
TRICKY = st.sampled_from(
    [
        "/",
        ".",
        "..",
        "/./",
        "/../",
        "%",
        "%25",
        "%2F",
        "#",
        "?",
        " ",
        "\u3000",
        "\u0301",
        "\U0001f600",
        "\U00020000",
        ":",
        ";",
        "<",
        ">",
        '"',
        "+",
        "\\",
        "&",
        "=",
        "urn:doi:",
    ]
)
SUFFIX = st.lists(st.one_of(GRAPHIC, TRICKY), min_size=1).map("".join)
REGISTRANT = st.from_regex(r"\A[0-9]{1,6}(\.[0-9]{1,3}){0,2}\Z")


@st.composite
def dois(draw: st.DrawFn) -> DOI:
    return DOI.from_parts(prefix="10." + draw(REGISTRANT), suffix=draw(SUFFIX))


@given(dois(), st.sampled_from(["recommended", "mandatory"]))
@example(DOI.from_parts(prefix="10.1", suffix="./.."), "recommended")
@example(DOI.from_parts(prefix="10.1", suffix=" a "), "mandatory")
def test_url_round_trip(doi: DOI, encoding: str) -> None:
    url = doi.to_url(encoding="mandatory" if encoding == "mandatory" else "recommended")
    back = DOI(url)
    assert back == doi
    assert str(back) == str(doi)
    # No dot segment survives for a URL library or browser to collapse.
    segments = url.split("?")[0].split("/")[3:]
    assert "." not in segments
    assert ".." not in segments


@given(dois())
def test_uri_and_urn_round_trip(doi: DOI) -> None:
    for text in (doi.to_uri(), doi.to_urn(), "https://doi.org/" + doi.to_urn()):
        assert str(DOI(text)) == str(doi)
    assert doi.to_uri().isascii()
    assert doi.to_urn().isascii()


@given(dois())
def test_str_repr_pickle_round_trip(doi: DOI) -> None:
    assert eval(repr(doi), {"DOI": DOI}) == doi  # noqa: S307 - repr must round-trip
    assert str(eval(repr(doi), {"DOI": DOI})) == str(doi)  # noqa: S307
    assert str(pickle.loads(pickle.dumps(doi))) == str(doi)  # noqa: S301 - our own data
    if str(doi) == str(doi).strip():
        assert str(DOI(str(doi))) == str(doi)


@given(st.text())
@example("10.1000/182")
@example("https://doi.org/10.1000/%E0%A4%A")
@example("urn:doi:")
@example("doi:10.1/%")
def test_any_str_parses_or_raises_invalid_doi(text: str) -> None:
    _parses_or_raises(text)


@given(st.text(alphabet=st.sampled_from("10./%:#?doiurnhtps ABC\u212a\u00e9\t")))
def test_structured_text_parses_or_raises(text: str) -> None:
    _parses_or_raises(text)


def _parses_or_raises(text: str) -> None:
    try:
        doi = DOI(text)
    except InvalidDOI as exc:
        assert exc.code in doikit.ERROR_CODES
        assert exc.position is None or 0 <= exc.position <= len(text)
        assert not doikit.is_valid(text)
    else:
        assert doikit.is_valid(text)
        assert doikit.normalize(text) == doi.key
        doi.warnings()


@given(dois(), dois())
def test_equal_implies_same_hash(a: DOI, b: DOI) -> None:
    if a == b:
        assert hash(a) == hash(b)
    assert (a == b) == (a.key == b.key)


@given(SUFFIX)
def test_ascii_case_changes_are_equivalent(suffix: str) -> None:
    upper = "".join(c.upper() if c.isascii() else c for c in suffix)
    assert DOI.from_parts(prefix="10.1", suffix=suffix) == DOI.from_parts(
        prefix="10.1", suffix=upper
    )


@given(dois())
def test_fast_path_agrees_with_full_parser(doi: DOI) -> None:
    from doikit._present import _parse_slow, parse  # noqa: PLC0415 - internal check

    for text in (str(doi), doi.to_url(), doi.to_uri(), doi.to_urn(), "doi: " + str(doi)):
        try:
            slow = _parse_slow(text)
        except InvalidDOI:
            with pytest.raises(InvalidDOI):
                parse(text)
            continue
        assert parse(text) == slow
        assert doikit.normalize(text) == fold(slow)


PRESENTATION_PIECES = st.sampled_from(
    [
        "10.",
        "1000",
        "10.1000/",
        "/",
        "%2F",
        "%2f",
        "%3C",
        "%3e",
        "%41",
        "%",
        "?",
        "#",
        ":",
        "doi:",
        "DOI: ",
        "urn:doi:",
        "https://doi.org/",
        "HTTP://DX.DOI.ORG/",
        "info:doi/",
        "hdl:",
        "A",
        "b",
        " ",
        ".",
        "é",
        "\x00",
        "%25",
        "%20",
        "%C3%A9",
        "%C3",
        "%3A",
        "%3F",
        "DOI ",
        "doi.org/",
        "www.doi.org/",
        "hdl.handle.net/",
        "urn:doi:10.1000:",
        "1.2",
        "\t",
        "-",
    ]
)


@given(st.lists(PRESENTATION_PIECES, max_size=12).map("".join))
def test_fast_paths_agree_with_the_full_parser(text: str) -> None:
    from doikit._present import _parse_slow  # noqa: PLC0415 - internal check

    try:
        slow = _parse_slow(text)
    except InvalidDOI:
        with pytest.raises(InvalidDOI):
            doikit.normalize(text)
        with pytest.raises(InvalidDOI):
            DOI(text)
        assert not doikit.is_valid(text)
        return
    assert doikit.normalize(text) == fold(slow)
    assert doikit.validate(text) == str(DOI(text)) == slow
    assert DOI(text).key == fold(slow)


def _one(parse: object, text: str | None) -> tuple[str, object]:
    """What a per-name function gives for *text*: ('ok', answer) or ('invalid', details)."""
    if text is None:
        return ("ok", None)
    try:
        return ("ok", parse(text))  # type: ignore[operator]
    except InvalidDOI as exc:
        return ("invalid", (exc.code, exc.position, str(exc)))


def _answer(item: str | InvalidDOI | None) -> tuple[str, object]:
    if isinstance(item, InvalidDOI):
        return ("invalid", (item.code, item.position, str(item)))
    return ("ok", item)


@given(
    st.lists(
        st.one_of(
            st.none(),
            st.text(),
            st.lists(PRESENTATION_PIECES, max_size=12).map("".join),
            dois().map(lambda d: d.to_url()),
        ),
        max_size=20,
    )
)
def test_the_bulk_functions_give_exactly_the_per_name_answers(texts: list[str | None]) -> None:
    """normalize_many and parse_many (one C loop on the accelerated build) answer each item
    as normalize and validate do: the same key or name, None for None, and for an invalid
    text None or, reported, an InvalidDOI with the same code, position and message."""
    for many, one in (
        (doikit.normalize_many, doikit.normalize),
        (doikit.parse_many, doikit.validate),
    ):
        expected = [_one(one, text) for text in texts]
        reported = [_answer(item) for item in many(texts, errors="report")]
        assert reported == expected
        quiet = many(iter(texts))  # any iterable
        assert quiet == [answer if kind == "ok" else None for kind, answer in expected]


def test_the_bulk_functions_refuse_what_is_no_text() -> None:
    with pytest.raises(TypeError, match="item 1 is a int, not a str or None"):
        doikit.normalize_many(["10.1000/1", 5])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="errors must be 'none' or 'report'"):
        doikit.parse_many([], errors="raise")  # type: ignore[call-overload]
