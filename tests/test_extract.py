"""Finding DOIs in text (the prose vectors run in test_vectors.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import doikit
from doikit import DOI, Found


def test_found_fields_and_find() -> None:
    text = "Cite (https://doi.org/10.1000/a%23b) please."
    found = doikit.find(text)
    assert found == Found(DOI("10.1000/a#b"), 22, 35, "10.1000/a%23b")
    assert doikit.find("nothing here") is None


@given(st.text())
def test_any_text_scans_without_error(text: str) -> None:
    previous_end = 0
    for found in doikit.find_all(text):
        assert previous_end <= found.start < found.end <= len(text)
        assert text[found.start : found.end] == found.text
        previous_end = found.end


@given(
    st.lists(
        st.sampled_from(["10.1000/182", "10.1038/nature12373", "10.5061/dryad.q447c/1"]),
        min_size=1,
        max_size=5,
    ),
    st.sampled_from([" ", "; ", ", ", "\n", " and "]),
)
def test_lists_of_dois_are_split(names: list[str], separator: str) -> None:
    text = "See " + separator.join(names) + "."
    assert [str(f.doi) for f in doikit.find_all(text)] == names
