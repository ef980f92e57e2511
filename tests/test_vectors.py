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


@pytest.mark.parametrize("case", _cases())
def test_vector(case: dict[str, Any]) -> None:
    kind = case["kind"]
    if kind == "parse":
        doi = DOI(_fill(case["input"]))
        assert str(doi) == _fill(case["expected"])
        assert doikit.validate(_fill(case["input"])) == _fill(case["expected"])
    elif kind == "invalid":
        with pytest.raises(InvalidDOI) as caught:
            DOI(case["input"])
        assert caught.value.code == case["expected_code"], str(caught.value)
        if "position" in case:
            assert caught.value.position == case["position"], str(caught.value)
        assert not doikit.is_valid(case["input"])
    elif kind == "to_url":
        doi = DOI(case["name"])
        resolver = case.get("resolver", "https://doi.org/")
        encoding = case.get("encoding", "recommended")
        assert doi.to_url(resolver, encoding=encoding) == case["expected"]
        if "mandatory" in case:
            assert doi.to_url(resolver, encoding="mandatory") == case["mandatory"]
        assert str(DOI(doi.to_url())) == case["name"]
    elif kind == "to_uri":
        doi = DOI(case["name"])
        assert doi.to_uri() == case["expected"]
        assert str(DOI(case["expected"])) == case["name"]
    elif kind == "to_urn":
        doi = DOI(case["name"])
        assert doi.to_urn() == case["expected"]
        assert str(DOI(case["expected"])) == case["name"]
        assert str(DOI("https://doi.org/" + case["expected"])) == case["name"]
    elif kind == "equivalent":
        assert DOI(case["input"]) == DOI(case["other"])
        assert hash(DOI(case["input"])) == hash(DOI(case["other"]))
    elif kind == "different":
        assert DOI(case["input"]) != DOI(case["other"])
    elif kind == "key":
        assert DOI(case["input"]).key == case["expected"] == doikit.normalize(case["input"])
    elif kind == "warning":
        codes = [finding.code for finding in DOI(case["input"]).warnings()]
        assert case["expected_code"] in codes
    elif kind == "codepoints":
        assert [ord(char) for char in str(DOI(case["input"]))] == case["expected"]
    elif kind == "legacy":
        assert doikit.normalize_legacy_uri(case["input"]) == case["expected"]
    elif kind == "legacy-invalid":
        with pytest.raises(InvalidDOI) as caught:
            doikit.normalize_legacy_uri(case["input"])
        assert caught.value.code == case["expected_code"]
    else:  # pragma: no cover - a typo in a vector file must fail loudly
        pytest.fail(f"unknown vector kind {kind!r}")


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
    } <= names
