"""doikit.handle: the value codec against the reference's examples, filters, 10320/loc."""

from __future__ import annotations

import contextlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import doikit.handle as h

VECTORS = json.loads((Path(__file__).parent / "vectors/handle/values.json").read_text("utf-8"))


@pytest.mark.parametrize("case", VECTORS["cases"], ids=[c["id"] for c in VECTORS["cases"]])
def test_value_vectors(case: dict[str, Any]) -> None:
    if case["kind"] == "invalid":
        with pytest.raises(h.HandleFormatError) as caught:
            h.value_from_json(case["json"])
        assert caught.value.where == case["where"]
        return
    value = h.value_from_json(case["json"])
    expected = case["json"] if case["kind"] == "roundtrip" else case["expected"]
    out = h.value_to_json(value)
    assert out == expected
    assert list(out) == list(expected), "keys in HANDLE.NET's order"


def test_public_all_is_sorted() -> None:
    assert h.__all__ == sorted(h.__all__)
    assert all(hasattr(h, name) for name in h.__all__)


VALUES = (
    h.HandleValue(1, "URL", b"https://a/"),
    h.HandleValue(2, "URL.mirror", b"https://b/"),
    h.HandleValue(3, "EMAIL", b"x@y"),
    h.HandleValue(100, "HS_ADMIN", h.AdminData("0.NA/10.1000", 200)),
)


@pytest.mark.parametrize(
    ("types", "indexes", "expected"),
    [
        ((), (), [1, 2, 3, 100]),
        (("URL",), (), [1]),
        (("url",), (), [1]),
        (("URL.",), (), [1, 2]),
        (("URL.MIRROR",), (), [2]),
        (("EMAIL",), (100,), [3, 100]),
        ((), (2,), [2]),
        (("NOSUCH",), (), []),
    ],
)
def test_filter_is_an_or_of_types_and_indexes(
    types: tuple[str, ...], indexes: tuple[int, ...], expected: list[int]
) -> None:
    assert [v.index for v in h.filter_values(VALUES, types, indexes)] == expected


def test_record_bodies() -> None:
    record = h.HandleRecord("10.1000/1", VALUES[:1])
    assert json.loads(h.record_body(record)) == {
        "responseCode": 1,
        "handle": "10.1000/1",
        "values": [h.value_to_json(VALUES[0])],
    }
    empty = h.record_body(h.HandleRecord("10.1000/X", ()), handle="10.1000/x")
    assert empty == '{"responseCode":200,"values":[],"handle":"10.1000/x"}'
    assert h.error_body(4, "a", "bad") == '{"responseCode":4,"message":"bad","handle":"a"}'
    assert h.record_from_json(json.loads(h.record_body(record))) == record


def test_locations() -> None:
    text = (
        '<locations chooseby="locatt,weighted" http_sc="307">'
        '<location id="1" href="https://a/" weight="1" country="gb"/>'
        '<location id="2" href="https://b/" weight="0" country="us"/>'
        '<location id="3" href_template="https://data.example/{hdl}" weight="0"'
        ' http_role="conneg"/>'
        "</locations>"
    )
    locs = h.parse_locations(text)
    assert locs.http_sc == 307
    assert locs.chooseby == ("locatt", "weighted")
    assert h.choose_location(locs.locations).href == "https://a/"  # type: ignore[union-attr]
    us = h.choose_location(locs.locations, (("country", "us"),))
    assert us is not None
    assert us.href == "https://b/"
    conneg = h.choose_location(locs.locations, (("http_role", "conneg"),))
    assert conneg is not None
    assert conneg.url("10.1000/a b") == "https://data.example/10.1000%2Fa%20b"
    # No match keeps the set: the weighted choice among weight > 0 is then the only one.
    nomatch = h.choose_location(locs.locations, (("country", "fr"),))
    assert nomatch is not None
    assert nomatch.href == "https://a/"


def test_weighted_choice_follows_weights() -> None:
    locs = h.parse_locations(
        '<locations><location href="https://a/" weight="0.75"/>'
        '<location href="https://b/" weight="0.25"/></locations>'
    )
    rng = random.Random(7)
    picks = [h.choose_location(locs.locations, rng=rng) for _ in range(4000)]
    share = sum(1 for p in picks if p is not None and p.href == "https://a/") / len(picks)
    assert 0.7 < share < 0.8


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("<locations>", "well-formed"),
        ("<other/>", "root element"),
        ('<locations http_sc="200"/>', "redirect status"),
        ("<locations><location/></locations>", "neither href"),
        ('<locations><location href="x" weight="2"/></locations>', "between 0 and 1"),
        ('<locations><location href="x" weight="w"/></locations>', "not a number"),
    ],
)
def test_bad_locations(text: str, fragment: str) -> None:
    with pytest.raises(h.HandleFormatError, match=fragment):
        h.parse_locations(text)


json_text = st.text(st.characters(codec="utf-8"), max_size=30)
values = st.builds(
    h.HandleValue,
    index=st.integers(1, 2**31 - 1),
    type=json_text,
    data=st.one_of(
        st.binary(max_size=40),
        st.builds(
            h.AdminData, json_text, st.integers(0, 2**31 - 1), st.from_regex(r"\A[01]{12}\Z")
        ),
        st.lists(st.builds(h.Reference, json_text, st.integers(0, 2**31 - 1)), max_size=3).map(
            tuple
        ),
    ),
    ttl=st.integers(0, 2**31 - 1),
    timestamp=st.integers(0, 2**32),
    permissions=st.from_regex(r"\A[01]{4}\Z"),
    references=st.lists(st.builds(h.Reference, json_text, st.integers(0, 9)), max_size=2).map(
        tuple
    ),
)


@given(values)
def test_json_round_trip(value: h.HandleValue) -> None:
    text = json.dumps(h.value_to_json(value))
    assert h.value_from_json(json.loads(text)) == value


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
        max_leaves=10,
    )
)
def test_decoding_any_json_is_total(obj: object) -> None:
    with contextlib.suppress(h.HandleFormatError):
        h.values_from_json([obj])
