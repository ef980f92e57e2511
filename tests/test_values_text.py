"""The stored values JSON read and written as text (doikit.handle's url_record_json,
one_url, first_url, detours, all_public) held to the codec (values_to_json) on any values,
and the deposit line's two ways (doikit._written) held to the JSON codec."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from doikit import InvalidDOI
from doikit._written import bare_doi, encoded, plain_line
from doikit.handle import (
    HandleValue,
    all_public,
    data_to_json,
    detours,
    first_url,
    format_time,
    one_url,
    url_record_json,
    values_to_json,
)

TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
TYPES = st.sampled_from(["URL", "url", "EMAIL", "HS_ALIAS", "10320/loc", "DESC", "Url"])
PERMISSIONS = st.sampled_from(["1110", "1100", "1111", "1010"])
VALUES = st.lists(
    st.builds(
        HandleValue,
        index=st.integers(1, 2000),
        type=TYPES,
        data=TEXT.map(str.encode) | st.binary(max_size=8),
        ttl=st.integers(0, 2**31 - 1),
        timestamp=st.integers(0, 2**31 - 1),
        permissions=PERMISSIONS,
    ),
    min_size=1,
    max_size=4,
).map(tuple)


def _plain_string(data: object) -> str | None:
    """The text the codec writes as string data, or None (hex)."""
    if not isinstance(data, bytes):
        return None
    written = data_to_json(data)
    if isinstance(written, dict) and written.get("format") == "string":
        value = written["value"]
        return value if isinstance(value, str) else None
    return None


@given(TEXT, st.integers(1, 2**31 - 1))  # (0: the codec writes no timestamp)
def test_url_record_json_is_the_codec_s(url: str, stamp: int) -> None:
    value = HandleValue(1, "URL", url.encode(), timestamp=stamp)
    if _plain_string(value.data) == url:
        assert url_record_json(url, format_time(stamp)) == values_to_json((value,))


@given(VALUES)
def test_the_readers_agree_with_the_codec(values: tuple[HandleValue, ...]) -> None:
    text = values_to_json(values)
    urls = [v for v in values if v.type.upper() == "URL"]
    found = first_url(text)
    if found is not None:  # when read, read right: the first URL value's text and TTL
        first = urls[0]
        assert found == (_plain_string(first.data), first.ttl)
    elif urls and urls[0].permissions == "1110" and _plain_string(urls[0].data) is not None:
        pytest.fail(f"first_url missed {urls[0]} in {text}")
    plain = one_url(text)
    if plain is not None:
        (only,) = values
        assert only.type == "URL"
        assert only.permissions == "1110"
        assert plain == _plain_string(only.data)
    assert detours(text) == any(v.type.upper() in ("HS_ALIAS", "10320/LOC") for v in values)
    public = all(v.permissions[2] == "1" for v in values)
    if all_public(text):
        assert public
    assert all_public(text) == (all(v.permissions == "1110" for v in values))


def test_a_deposit_s_common_record_is_read_without_the_decoder() -> None:
    text = url_record_json("https://example.org/a", "2026-11-28T00:00:00Z")
    assert one_url(text) == "https://example.org/a"
    assert first_url(text) == ("https://example.org/a", 86400)
    assert json.loads(text)[0]["data"]["value"] == "https://example.org/a"


@given(
    st.from_regex(r"10\.[0-9]{4,5}/[a-z0-9.]{1,12}", fullmatch=True),
    TEXT,
    st.integers(1, 10**8),
)
def test_a_deposit_line_is_read_as_it_was_written(name: str, url: str, number: int) -> None:
    item: dict[str, object] = {"doi": name, "url": url, "line": number}
    line = encoded(item)
    assert line == json.dumps(item, ensure_ascii=False).encode()
    read = plain_line(line)
    if read is not None:  # (else the server's JSON path reads it)
        assert read == (name, url, number)


def test_a_write_takes_the_bare_name_only() -> None:
    assert str(bare_doi("10.1000/182")) == "10.1000/182"
    for given_ in ("doi:10.1000/182", "https://doi.org/10.1000/182"):
        with pytest.raises(ValueError, match=r"write the bare DOI name '10\.1000/182'"):
            bare_doi(given_)
    with pytest.raises(InvalidDOI):
        bare_doi("10.10O0/182")
