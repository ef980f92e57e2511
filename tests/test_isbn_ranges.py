"""The ISBN ranges doikit._hyphens reads: generated from the International ISBN Agency's range
file (scripts/data/RangeMessage.xml) by scripts/update_isbn_ranges.py, never edited by hand;
and ranges the agency assigned after the hand-copied table of 2014 mend and complete names."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import doikit
from doikit import _isbn_ranges
from doikit._hyphens import is_springer_book, mended

if TYPE_CHECKING:
    from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "scripts" / "data" / "RangeMessage.xml"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "update_isbn_ranges", ROOT / "scripts" / "update_isbn_ranges.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_is_what_the_script_makes_of_the_agency_file() -> None:
    script = _script()
    assert script.MODULE.read_text(encoding="utf-8") == script.module_text(SOURCE)
    assert f"<MessageDate>{_isbn_ranges.DATE}</MessageDate>" in SOURCE.read_text(encoding="utf-8")


def test_a_range_not_cut_at_its_length_is_refused(tmp_path: Path) -> None:
    text = SOURCE.read_text(encoding="utf-8")
    # 978-0's first rule, 00-19, made to end inside a two-digit registrant
    broken = tmp_path / "RangeMessage.xml"
    broken.write_text(
        text.replace("<Range>0000000-1999999</Range>", "<Range>0000000-1999998</Range>", 1)
    )
    with pytest.raises(ValueError, match="1999998"):
        _script().module_text(broken)


# Names whose ISBN lies in a range the agency assigned (or divided) after 2014, the date of the
# table copied by hand before: group 979-8 (the United States, from 2020; Apress's books),
# 978-981-15 (Singapore's two-digit registrants; Springer Singapore) and 978-1-0716 (a
# four-digit registrant in a range of two-digit ones before; Humana). The 2014 table left the
# first two as written and hyphenated the third 978-1-07-160301-7.
@pytest.mark.parametrize(
    ("written", "whole"),
    [
        ("10.1007/979-8-86880515-8", "10.1007/979-8-8688-0515-8"),
        ("10.1007/978-98115-3651-9_20", "10.1007/978-981-15-3651-9_20"),
        ("10.1007/978-1-07160301-7_11", "10.1007/978-1-0716-0301-7_11"),
    ],
)
def test_a_newly_assigned_range_mends_a_lost_hyphen(written: str, whole: str) -> None:
    assert mended(written) == whole
    assert [str(found.doi) for found in doikit.find_all(f"doi:{written} and")] == [whole]


def test_a_springer_book_in_a_newly_assigned_range_takes_its_chapter() -> None:
    assert is_springer_book("10.1007/979-8-8688-0515-8")
    found = doikit.find_all("see doi:10.1007/979-8-8688-0515-8 3.\n")
    assert [str(f.doi) for f in found] == ["10.1007/979-8-8688-0515-8_3"]
