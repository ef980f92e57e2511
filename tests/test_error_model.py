"""The error model: the drawing in ``doikit._errors`` is the class tree, its closed sets are
named, and every public class pickles under its public name."""

from __future__ import annotations

import pickle
import re
import typing

import pytest

import doikit
import doikit._doi
import doikit._errors
from doikit._syntax import Key, PercentError, TextError, fold, percent_decode
from doikit.handle import HandleFormatError, HandleWireError

# A line of the drawing: its indent, a marker (* x +), the class, its other bases, then
# the attributes it names (``.code``) and a few words for a person.
_LINE = re.compile(r"^(?P<indent> *)[*x+] (?P<name>\w+)(?:\((?P<bases>[\w, ]+)\))?(?P<rest>.*)$")
_ATTRIBUTE = re.compile(r"(?<![\w.])\.(\w+)")


def _drawing() -> list[tuple[str, list[str], list[str]]]:
    """(class, its bases as drawn, the attributes drawn) for every line of the tree."""
    doc = doikit._errors.__doc__ or ""
    block = doc.split("::\n\n", 1)[1].split("\n\n", 1)[0]
    parents: list[tuple[int, str]] = []  # (indent, class) of the lines above, nested
    drawn = []
    for line in block.splitlines():
        match = _LINE.match(line)
        assert match, f"not a line of the drawing: {line!r}"
        indent = len(match["indent"])
        while parents and parents[-1][0] >= indent:
            parents.pop()
        bases = [parents[-1][1]] if parents else []
        if match["bases"]:
            bases += [base.strip() for base in match["bases"].split(",")]
        drawn.append((match["name"], bases, _ATTRIBUTE.findall(match["rest"])))
        parents.append((indent, match["name"]))
    return drawn


def _descendants(root: type) -> set[type]:
    subclasses: list[type] = type.__subclasses__(root)
    return {*subclasses, *(below for sub in subclasses for below in _descendants(sub))}


# One instance of every class of the tree, as the code raises it.
SAMPLES: dict[type[doikit.DOIError], doikit.DOIError] = {
    doikit.InvalidDOI: doikit.InvalidDOI("10.10O0/1", "registrant", 5, "not a digit"),
    doikit.ResolutionError: doikit.ResolutionError("10.1000/1", "no record"),
    doikit.DOINotFound: doikit.DOINotFound("10.1000/1", "not found"),
    doikit.HandleServerError: doikit.HandleServerError(
        "10.1000/1", "error", status=500, response_code=2
    ),
    doikit.MalformedResponse: doikit.MalformedResponse("10.1000/1", "not JSON"),
    doikit.TransportError: doikit.TransportError("10.1000/1", "refused"),
    HandleFormatError: HandleFormatError("values[0].index", "must be an integer"),
    HandleWireError: HandleWireError("length 9 runs past the end", 0, "handle"),
}


def test_the_drawing_is_the_class_tree() -> None:
    """Every class drawn is doikit's, with the bases drawn (the one above it first); every
    error doikit raises on purpose is drawn."""
    drawn = _drawing()
    names = {name for name, _, _ in drawn}
    classes = {doikit.DOIError, *_descendants(doikit.DOIError)}
    classes = {cls for cls in classes if cls.__module__.startswith("doikit")}
    assert names == {cls.__name__ for cls in classes}
    namespace = {cls.__name__: cls for cls in classes} | {"ValueError": ValueError}
    for name, bases, _ in drawn:
        assert [base.__name__ for base in namespace[name].__bases__] == (bases or ["Exception"])


def test_the_drawing_names_real_attributes() -> None:
    for name, _, attributes in _drawing():
        if name == "DOIError":
            continue
        sample = next(exc for cls, exc in SAMPLES.items() if cls.__name__ == name)
        assert type(sample).__name__ == name
        for attribute in attributes:
            assert hasattr(sample, attribute), f"{name} has no .{attribute}"


@pytest.mark.parametrize("exc", list(SAMPLES.values()), ids=lambda exc: type(exc).__name__)
def test_every_error_pickles_whole(exc: doikit.DOIError) -> None:
    again = pickle.loads(pickle.dumps(exc))  # noqa: S301 - our own bytes
    assert type(again) is type(exc)
    assert str(again) == str(exc)
    assert vars(again) == vars(exc)


def test_error_codes_are_one_closed_set() -> None:
    """ErrorCode (for type checkers) and ERROR_CODES (for people) name the same codes."""
    assert list(typing.get_args(doikit._errors.ErrorCode)) == list(doikit.ERROR_CODES)
    assert typing.get_type_hints(doikit.InvalidDOI.__init__)["code"] == doikit._errors.ErrorCode


def test_every_code_raised_is_one_of_them() -> None:
    texts = ["", "x", "ftp://example.org/10.1/x", "10/abc", "11.1/x", "10.x/y", "10.1", "10.1/"]
    texts += ["10.1/\x00", "doi:10.1/%zz", "doi:10.1/%ff"]
    codes = set()
    for text in texts:
        with pytest.raises(doikit.InvalidDOI) as caught:
            doikit.DOI(text)
        codes.add(caught.value.code)
    with pytest.raises(doikit.InvalidDOI) as caught:
        doikit.normalize_legacy_uri("10.1/x")
    codes.add(caught.value.code)
    assert codes == set(doikit.ERROR_CODES)


def test_text_error_is_percent_error_and_pickles() -> None:
    """The two identical internal errors (a bad escape, a name that is not one) are one."""
    assert PercentError is TextError
    with pytest.raises(TextError) as caught:
        percent_decode("a%zz")
    again = pickle.loads(pickle.dumps(caught.value))  # noqa: S301 - our own bytes
    assert (again.code, again.index, again.detail) == ("percent-escape", 1, caught.value.detail)


def test_keys_are_one_type() -> None:
    """A comparison key is a Key where doikit makes one: fold and normalize. (DOI.key stays
    a str: a Key there would ripple into callers that compare it with a str.)"""
    for make in (fold, doikit._doi._py_normalize):
        assert typing.get_type_hints(make)["return"] is Key
    assert (
        doikit.DOI("10.1000/ABC-\u212a").key == fold("10.1000/ABC-\u212a") == "10.1000/abc-\u212a"
    )


def _public_classes() -> list[type]:
    return [value for name in doikit.__all__ if isinstance(value := getattr(doikit, name), type)]


@pytest.mark.parametrize("cls", _public_classes(), ids=lambda cls: cls.__name__)
def test_every_public_class_is_named_by_its_public_path(cls: type) -> None:
    assert cls.__module__ == "doikit"
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        data = pickle.dumps(cls, protocol=protocol)
        assert b"doikit._" not in data
        assert pickle.loads(data) is cls  # noqa: S301 - our own bytes


def _instances() -> list[object]:
    text = "see doi:10.1000/ABC and doi:10/abc"
    return [
        doikit.DOI("10.1000/ABC"),
        next(doikit.find_all(text)),
        next(doikit.find_short(text)),
        doikit.DOI("10.1000/\u0430").warnings()[0],
        *(exc for exc in SAMPLES.values() if type(exc).__module__ == "doikit"),
    ]


@pytest.mark.parametrize("value", _instances(), ids=lambda value: type(value).__name__)
def test_every_public_instance_pickles_under_the_public_path(value: object) -> None:
    """A pickle names doikit, not the private module that defines the class (a pickled
    FoundShort named doikit._extract, which would not survive a move)."""
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        data = pickle.dumps(value, protocol=protocol)
        assert b"doikit._" not in data
        again = pickle.loads(data)  # noqa: S301 - our own bytes
        assert type(again) is type(value)
        assert str(again) == str(value)


def test_every_public_class_has_an_instance_above() -> None:
    never_raised = {doikit.DOIError}
    assert {type(value) for value in _instances()} == set(_public_classes()) - never_raised
