"""Every spec example and table row (tests/vectors/*.json), and the peers' cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import doikit
from doikit import DOI, InvalidDOI

VECTORS = Path(__file__).parent / "vectors"
LONG = "x" * 10_000


def _cases() -> list[Any]:
    params: list[Any] = []
    for path in sorted(VECTORS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["source"], f"{path.name} must name its source"
        params.extend(pytest.param(case, id=f"{path.stem}:{case['id']}") for case in data["cases"])
    return params


def _fill(text: str) -> str:
    return text.replace("{long}", LONG)


Case = dict[str, Any]


def _parse(case: Case) -> None:
    assert str(DOI(_fill(case["input"]))) == _fill(case["expected"])
    assert doikit.validate(_fill(case["input"])) == _fill(case["expected"])


def _invalid(case: Case) -> None:
    with pytest.raises(InvalidDOI) as caught:
        DOI(case["input"])
    assert caught.value.code == case["expected_code"], str(caught.value)
    if "position" in case:
        assert caught.value.position == case["position"], str(caught.value)
    assert not doikit.is_valid(case["input"])


def _to_url(case: Case) -> None:
    doi = DOI(case["name"])
    resolver = case.get("resolver", "https://doi.org/")
    encoding = case.get("encoding", "recommended")
    assert doi.to_url(resolver, encoding=encoding) == case["expected"]
    if "mandatory" in case:
        assert doi.to_url(resolver, encoding="mandatory") == case["mandatory"]
    assert str(DOI(doi.to_url())) == case["name"]


def _to_uri(case: Case) -> None:
    assert DOI(case["name"]).to_uri() == case["expected"]
    assert str(DOI(case["expected"])) == case["name"]


def _to_urn(case: Case) -> None:
    assert DOI(case["name"]).to_urn() == case["expected"]
    assert str(DOI(case["expected"])) == case["name"]
    assert str(DOI("https://doi.org/" + case["expected"])) == case["name"]


def _equivalent(case: Case) -> None:
    assert DOI(case["input"]) == DOI(case["other"])
    assert hash(DOI(case["input"])) == hash(DOI(case["other"]))


def _different(case: Case) -> None:
    assert DOI(case["input"]) != DOI(case["other"])


def _key(case: Case) -> None:
    assert DOI(case["input"]).key == case["expected"] == doikit.normalize(case["input"])


def _warning(case: Case) -> None:
    assert case["expected_code"] in [finding.code for finding in DOI(case["input"]).warnings()]


def _codepoints(case: Case) -> None:
    assert [ord(char) for char in str(DOI(case["input"]))] == case["expected"]


def _extract(case: Case) -> None:
    found = list(doikit.find_all(case["input"]))
    assert [str(f.doi) for f in found] == case["expected"]
    assert all(case["input"][f.start : f.end] == f.text for f in found)


def _legacy(case: Case) -> None:
    assert doikit.normalize_legacy_uri(case["input"]) == case["expected"]


def _legacy_invalid(case: Case) -> None:
    with pytest.raises(InvalidDOI) as caught:
        doikit.normalize_legacy_uri(case["input"])
    assert caught.value.code == case["expected_code"]


CHECKS = {
    "parse": _parse,
    "invalid": _invalid,
    "to_url": _to_url,
    "to_uri": _to_uri,
    "to_urn": _to_urn,
    "equivalent": _equivalent,
    "different": _different,
    "key": _key,
    "warning": _warning,
    "codepoints": _codepoints,
    "extract": _extract,
    "legacy": _legacy,
    "legacy-invalid": _legacy_invalid,
}


@pytest.mark.parametrize("case", _cases())
def test_vector(case: Case) -> None:
    CHECKS[case["kind"]](case)  # a KeyError names a vector kind with no checker


def test_every_vector_file_is_used() -> None:
    names = {path.name for path in VECTORS.glob("*.json")}
    assert {
        "seed000_handbook_url_encoding.json",
        "seed001_z3984.json",
        "seed002_doi_uri_2003.json",
        "seed003_special_characters.json",
        "seed004_doi_uri_2024.json",
        "peer_tricky_inputs.json",
        "peer_vectors.json",
        "extract_prose.json",
    } <= names
