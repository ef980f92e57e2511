"""The DOI value type, the helpers, errors and the public surface."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys

import pytest

import doikit
from doikit import DOI, DOIError, Finding, InvalidDOI
from doikit._syntax import RESOLVER_HOSTS, URI_HEADS


def test_parts() -> None:
    doi = DOI("https://doi.org/10.1000.10/ABC/def")
    assert (doi.prefix, doi.registrant, doi.suffix) == ("10.1000.10", "1000.10", "ABC/def")
    assert str(doi) == "10.1000.10/ABC/def"
    assert doi.key == "10.1000.10/abc/def"


def test_from_parts_validates() -> None:
    assert str(DOI.from_parts(prefix="10.1000", suffix="x/y")) == "10.1000/x/y"
    with pytest.raises(InvalidDOI) as caught:
        DOI.from_parts(prefix="10.1000", suffix="")
    assert caught.value.code == "empty-suffix"
    with pytest.raises(InvalidDOI) as caught:
        DOI.from_parts(prefix="10.1000/x", suffix="y")
    assert caught.value.code == "registrant"
    with pytest.raises(InvalidDOI) as caught:
        DOI.from_parts(prefix="10.1000", suffix="a\nb")
    assert (caught.value.code, caught.value.position) == ("not-graphic", 9)


def test_from_parts_keeps_surrounding_spaces_and_repr_round_trips() -> None:
    doi = DOI.from_parts(prefix="10.1000", suffix=" a ")
    assert str(doi) == "10.1000/ a "
    assert repr(doi) == "DOI.from_parts(prefix='10.1000', suffix=' a ')"
    assert eval(repr(doi), {"DOI": DOI}) == doi  # noqa: S307
    assert str(pickle.loads(pickle.dumps(doi))) == "10.1000/ a "  # noqa: S301


def test_repr() -> None:
    assert repr(DOI("doi:10.1000/182")) == "DOI('10.1000/182')"


def test_immutable() -> None:
    doi = DOI("10.1000/182")
    with pytest.raises(AttributeError):
        doi.key = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        doi._name = "x"  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        del doi.key
    with pytest.raises(AttributeError):
        doi.prefix = "10.1"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        doi.anything = 1  # type: ignore[attr-defined]
    assert not hasattr(doi, "__dict__")
    assert (str(doi), doi.key) == ("10.1000/182", "10.1000/182")
    assert copy.copy(doi) is doi
    assert copy.deepcopy(doi) is doi


def test_not_a_str_subclass() -> None:
    doi: object = DOI("10.1000/182")
    assert not isinstance(doi, str)
    assert doi != "10.1000/182"


def test_accepts_doi_and_str_subclass_refuses_other_types() -> None:
    class Text(str):
        __slots__ = ()

    assert DOI(DOI("10.1000/1")) == DOI("10.1000/1")
    assert str(DOI(Text("10.1000/1"))) == "10.1000/1"
    with pytest.raises(TypeError):
        DOI(b"10.1000/1")  # type: ignore[arg-type]


def test_ordering_by_key() -> None:
    names = [DOI("10.1000/b"), DOI("10.1000/A"), DOI("10.1000/c")]
    assert [str(d) for d in sorted(names)] == ["10.1000/A", "10.1000/b", "10.1000/c"]
    assert DOI("10.1/a") <= DOI("10.1/A")
    assert DOI("10.1/b") > DOI("10.1/a")
    assert DOI("10.1/b") >= DOI("10.1/B")


# A pickle written by doikit 0.1.0 (protocol 2). Later releases must still read it.
GOLDEN_PICKLE = b"\x80\x02cdoikit\nDOI\nq\x00X\x0b\x00\x00\x0010.1000/182q\x01\x85q\x02Rq\x03."


def test_pickle_survives_releases() -> None:
    assert pickle.dumps(DOI("10.1000/182"), protocol=2) == GOLDEN_PICKLE
    assert pickle.loads(GOLDEN_PICKLE) == DOI("10.1000/182")  # noqa: S301


def test_invalid_doi_fields_and_pickle() -> None:
    with pytest.raises(InvalidDOI) as caught:
        DOI("  10.10O0/1")
    exc = caught.value
    assert isinstance(exc, ValueError)
    assert isinstance(exc, DOIError)
    assert (exc.code, exc.position, exc.text) == ("registrant", 7, "  10.10O0/1")
    assert "position 7" in str(exc)
    assert "LATIN CAPITAL LETTER O" in str(exc)
    again = pickle.loads(pickle.dumps(exc))  # noqa: S301
    assert (again.code, again.position, str(again)) == (exc.code, exc.position, str(exc))


def test_error_position_maps_through_percent_escapes() -> None:
    # The bad code point is the escape %0A at index 28 of the input, not index 12 of the name.
    with pytest.raises(InvalidDOI) as caught:
        DOI("https://doi.org/10.1000/%C3%A9%0A")
    assert (caught.value.code, caught.value.position) == ("not-graphic", 30)


def test_long_input_message_is_elided() -> None:
    with pytest.raises(InvalidDOI) as caught:
        DOI("10.1000/" + "a" * 5000 + "\x00")
    assert len(str(caught.value)) < 400


def test_helpers() -> None:
    assert doikit.validate(" doi:10.1000/ABC ") == "10.1000/ABC"
    assert doikit.normalize("https://doi.org/10.1000/ABC") == "10.1000/abc"
    assert doikit.is_valid("info:doi/10.1000/1")
    assert not doikit.is_valid("10/abc")
    assert not doikit.is_valid(None)
    assert not doikit.is_valid(42)
    with pytest.raises(InvalidDOI):
        doikit.validate("nope")
    with pytest.raises(InvalidDOI):
        doikit.normalize("nope")


def test_to_url_resolver_and_encoding_argument() -> None:
    doi = DOI("10.1000/a b")
    assert doi.to_url("http://localhost:8000") == "http://localhost:8000/10.1000/a%20b"
    with pytest.raises(ValueError, match="encoding"):
        doi.to_url(encoding="everything")  # type: ignore[arg-type]


def test_warnings() -> None:
    assert DOI("10.1000/182").warnings() == ()
    found = DOI("10.1000/p\u0430ypal").warnings()  # CYRILLIC SMALL LETTER A
    assert [f.code for f in found] == ["confusable", "mixed-script"]
    assert all(isinstance(f, Finding) for f in found)
    assert found[0].position == 9
    codes = {f.code for f in DOI("10.1000/\uff21 b\u05d0 \u3164.").warnings()}
    assert {"confusable", "space", "bidi", "invisible", "trailing-punctuation"} <= codes
    assert [f.code for f in DOI("10.1000/\u0301x").warnings()] == ["combining-start"]
    assert [f.code for f in DOI("10.1000/e\u0301").warnings()] == ["not-nfc"]
    assert [f.code for f in DOI("10.1000/漢字ひらがなカタカナ").warnings()] == []
    assert [f.code for f in DOI("10.1000/a b").warnings()] == ["space"]


def test_public_surface() -> None:
    assert doikit.__all__ == sorted(doikit.__all__)
    public = {name for name in dir(doikit) if not name.startswith("_")}
    public.discard("annotations")
    subpackages = {"arrow", "cli", "client", "duckdb", "handle", "pdf", "polars", "server", "spark"}
    assert public <= set(doikit.__all__) | subpackages
    for name in ("DOI", "InvalidDOI", "DOIError", "Finding"):
        assert getattr(doikit, name).__module__ == "doikit"


def test_import_needs_only_the_standard_library() -> None:
    code = (
        "import sys, doikit\n"
        "doikit.DOI('10.1000/1').to_url()\n"
        "third = {m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names)\n"
        "third -= {'doikit', '__main__', '_distutils_hack'}\n"
        "assert not third, third\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_error_codes_are_documented() -> None:
    assert set(doikit.ERROR_CODES) >= {
        "empty",
        "not-a-doi",
        "unsupported-url",
        "short-doi",
        "directory",
        "registrant",
        "missing-slash",
        "empty-suffix",
        "not-graphic",
        "percent-escape",
        "utf8",
    }


@pytest.mark.parametrize("host", RESOLVER_HOSTS)
def test_every_resolver_host_of_the_table_is_read_everywhere(host: str) -> None:
    """doikit._syntax.RESOLVER_HOSTS is the one table of resolver hosts: the parser (and the
    C accelerator, configured from it), the extractor and the shortDOI readers take every
    host from it, in any case."""
    from doikit._extract import _QUICK_HEADS  # noqa: PLC0415 - the module's own part
    from doikit.handle.resolution import shortdoi_name  # noqa: PLC0415

    for scheme in ("https://", "http://", ""):
        for written in (host, host.upper()):
            url = f"{scheme}{written}/10.1000/ABC"
            assert doikit.validate(url) == "10.1000/ABC"
            assert doikit.normalize(url.replace("/ABC", "%2FABC")) == "10.1000/abc"
            assert doikit.normalize_many([url]) == ["10.1000/abc"]
            assert [str(f.doi) for f in doikit.find_all(f"see {url} now")] == ["10.1000/ABC"]
            found = doikit.find_short(f"see {scheme}{written}/10/abc1 now")
            assert [s.handle for s in found] == ["10/abc1"]
            assert shortdoi_name(f"{scheme}{written}/10/ABC1") == "10/abc1"
    assert host in doikit.ERROR_CODES["unsupported-url"]
    assert all(any(head.endswith(h + "/") for h in RESOLVER_HOSTS) for head in _QUICK_HEADS)


def test_the_heads_of_the_table_are_read_everywhere() -> None:
    """doikit._syntax.URI_HEADS is the one table of URI and URN heads: the parser and the
    extractor read every head from it, in any case; the C reader decides the same heads
    (its literals: 'doi:', 'info:doi/', 'urn:doi:', 'hdl:'), so removing one from the table
    without it would be caught here."""
    assert set(URI_HEADS) == {"doi:", "info:doi/", "urn:doi:", "hdl:"}
    for head in URI_HEADS:
        for written in (head, head.upper()):
            text = written + ("10.1000:ABC" if head == "urn:doi:" else "10.1000/ABC")
            assert doikit.validate(text) == "10.1000/ABC"
            assert doikit.normalize(text) == "10.1000/abc"
            assert [str(f.doi) for f in doikit.find_all(f"see {text} now")] == ["10.1000/ABC"]
    with pytest.raises(InvalidDOI) as refused:
        DOI("nothing")
    assert all(head in str(refused.value) for head in URI_HEADS)
