"""Finding DOIs in text (the prose vectors run in test_vectors.py)."""

from __future__ import annotations

import io
import itertools
import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import doikit
from doikit import DOI, Found, _extract
from doikit._doi import _SPEEDUPS
from doikit._hyphens import mended


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


PIECES = st.sampled_from(
    [
        "10.1000/182",
        "doi:",
        "https://doi.org/",
        "urn:doi:10.123:456",
        "10.1002/(SICI)1-2<3::A>4.0.CO;2-#",
        " ",
        ".",
        ",",
        ";",
        "(",
        ")",
        "<",
        ">",
        "<a>",
        "</a>",
        '"',
        "%2F",
        "%3C",
        "10.",
        "10.1",
        "/",
        "x",
        "\n",
        "é",
        "?doi=",
        "&amp;",
        "-",
        " \n ",
        "\r\n",
        "2",
    ]
)


@given(st.lists(PIECES).map("".join), st.lists(st.integers(0, 60), max_size=8))
def test_streaming_any_chunking_equals_whole_text(text: str, cuts: list[int]) -> None:
    points = sorted({min(cut, len(text)) for cut in cuts} | {0, len(text)})
    chunks = [text[a:b] for a, b in itertools.pairwise(points)]
    assert list(doikit.find_all(chunks)) == list(doikit.find_all(text))


def test_file_object_and_one_character_chunks() -> None:
    text = "A (doi:10.1000/182), then https://doi.org/10.1002/x%3Cy%3Ez. End 10.5061/dryad.1"
    whole = list(doikit.find_all(text))
    assert [str(f.doi) for f in whole] == ["10.1000/182", "10.1002/x<y>z", "10.5061/dryad.1"]
    assert list(doikit.find_all(io.StringIO(text))) == whole
    assert list(doikit.find_all(iter(text))) == whole


def test_stream_memory_stays_bounded() -> None:
    line = "Some prose (doi:10.1000/%d) and more words around it, as references have. "
    chunks = (line % n * 130 for n in range(600))  # about 6 MB, 78k DOIs, lazily
    tracemalloc.start()
    try:
        count = sum(1 for _ in doikit.find_all(chunks))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 600 * 130
    assert peak < 1_000_000, peak


def test_a_chunk_ending_in_blanks_before_a_line_break() -> None:
    # Found by the chunking property: the chunk ends after '2- ', the line break and the
    # rest of the DOI come in the next one; the whole text joins '2-' and '2'.
    text = "10.1000/182.....%2F%2F?doi=2- \n 2"
    whole = list(doikit.find_all(text))
    assert whole[0].text == text
    for cut in range(len(text) + 1):
        assert list(doikit.find_all([text[:cut], text[cut:]])) == whole, cut


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a character reference for the first slash, in an href and in text
        ('<a href="https://doi.org/10.1000&#x2F;182">', [("10.1000/182", "10.1000&#x2F;182")]),
        ("doi:10.1000&#47;183 and", [("10.1000/183", "10.1000&#47;183")]),
        # references that stand for a boundary end the DOI
        ("&quot;10.1000/184&quot; x", [("10.1000/184", "10.1000/184")]),
        ("doi:10.1000/189&nbsp;and", [("10.1000/189", "10.1000/189")]),
        ("doi:10.1000/190&#46; Next", [("10.1000/190", "10.1000/190")]),
        # '&amp;' separates URL query parameters; in text it is an '&' of the name
        ("https://x.org/a?doi=10.1000/185&amp;b=1", [("10.1000/185", "10.1000/185")]),
        ("10.1000/a&amp;b.", [("10.1000/a&b", "10.1000/a&amp;b")]),
        # '&lt;' '&gt;' balance as '<' '>': a SICI DOI stays whole, its ';' kept
        ("10.1000/1&lt;2&gt; x", [("10.1000/1<2>", "10.1000/1&lt;2&gt;")]),
        ("&lt;10.1000/188&gt; x", [("10.1000/188", "10.1000/188")]),
        # an escaped presentation in a query value
        ("https://x.org/?id=doi%3A10.1000%2F187&b=1", [("10.1000/187", "10.1000%2F187")]),
        # a bare '&' or an unknown name is just a character (and ';' before a digit too,
        # unless the number is a whole field: test_a_number_field_after_a_separator)
        ("10.1000/x&y;2-b", [("10.1000/x&y;2-b", "10.1000/x&y;2-b")]),
    ],
)
def test_html_character_references(text: str, expected: list[tuple[str, str]]) -> None:
    found = list(doikit.find_all(text))
    assert [(str(f.doi), f.text) for f in found] == expected
    assert all(text[f.start : f.end] == f.text for f in found)


# --- The scan's quick paths agree with the general walk ---------------------------------

EDGES = st.sampled_from(
    [
        "10.1000/",
        "10.12345/",
        "10.1000.10/",
        "10.5/",
        "10.0.0.1/",
        "abc",
        "A",
        "5",
        "(20)",
        "[0044:X]",
        "{b}",
        ",2019",
        ";12",
        "CO;2",
        "[doi]",
        "<1::x>",
        "(",
        ")",
        "]",
        "}",
        ">",
        "<i>",
        "'",
        "?",
        "#",
        "&",
        "&amp;",
        ",",
        ";",
        ":",
        ".",
        "!",
        "-",
        "/",
        "=",
        "%",
        "%2F",
        "%41",
        "%C3%81",
        "%E2",
        "Á",
        "…",
        "”",
        " ",
        "\n",
        " \n",
        "\r\n",
        "\t",
        "\f",
        "\u00a0",
        "\u200b",
        "\x85",
        '"',
        "doi:",
        "DOI:",
        "urn:doi:",
        "URN:DOI:",
        "https://doi.org/",
        "http://dx.doi.org/",
        "https://dx.doi.org/",
        "/abstract",
        "/full",
        "?doi=",
        "\\",
        "\\/",
        "\\_",
        ".svg",
        "https://zenodo.org/badge/DOI/",
        # issue 14's rules: enders, '$$', soft hyphens, page ranges, escapes, preprints
        "|",
        "`",
        "$",
        "$$",
        "\xad",
        "。",
        "（",
        "）",
        "：",
        "45-",
        "%20",
        "%22",
        "%29",
        "%2E",
        "%7C",
        ".pdf",
        "10.1101/2020.03.22.002386",
        "10.1101/",
        "10.48550/arXiv.2101.00001",
        "v2",
        ".full",
        "www.",
        "example.com/",
        "|doi=",
        "\\@",
        "\\n",
        "\\u00e9",
        "/agency",
        ",https://",
        ";www.",
        "&lt;/ref&gt;",
        "&lt;",
        '\\"',
        "/status.svg",
        "/data.json",
        "/works",
        "**",
        "*",
        "\\(",
        "\\)",
        "`https://doi.org/",
        "|url=http://x.org/doi/",
        "114/",
        "\n8. ",
        "\n.",
        "10.\n",
        ":\n",
        ")\n",
        "\f",
        "https://img.shields.io/badge/DOI-",
        "-blue",
        "/api/doi/",
        ";",
        "#Comments",
        "$$a",
        "\x1fa",
        "\n28 zoo",
        "\n4",
        # session 16's rules: ',' ends, placeholders, views and pages, '/doi:' in a path,
        # spaced names, a word-break hyphen
        "/meta",
        ".html",
        ".HTM",
        "/paper/DOI:",
        "abstractDOI:",
        "?fields=x",
        "xxxx",
        "nnnn.",
        "{ext_id}",
        "{{",
        "doi:10. 15889 / j. ",
        " - ",
        "\u2010\n",
        ",2019-01-02,",
        # issue 30: the quick path in C reads URLs of any host, doi parameters, and asks
        # the Python rules of the rest (books' chapters, mended names, rejoined lines)
        "https://academic.oup.com/x/article/doi/",
        "10.1093/",
        "/5714742",
        "|doi=",
        "a=",
        "&ids=",
        "10.1007/",
        "978-3-540-85064-9",
        "978-3-319-21668-3",
        "%39",
        " 9 ",
        " 8",
        "s10009-004-0175-4",
        "10.1002/",
        "(SICI)1096987X(",
        "S0168945299001508(",
        "CO;\n2-P",
        ".\n1985",
        "\n.pone",
        "😀",
        "ﬁ",
        "/pdf",
        "/fulltext",
        "/full1",
        ".pdf",
        "%2E",
        "v10.",
        "/full/",
        "/abstract/10.1000/",
        "https://zenodo.org/badge/doi/",
        ".png",
        # the walk in C: escapes, references and the stops' rules it reads or leaves
        "\\/",
        "%2F",
        "%2f",
        "%3A",
        "doi%3A",
        "urn:doi:",
        "&amp;",
        "&#x2F;",
        "\\%23",
        "\\_",
        "$",
        "\r\n",
        "\t",
        "10.12/",
        "10.1.2.3/",
        "((",
        "]]",
        "%",
        "%4",
        "&gt;",
        "&#59;",
        "&quot;",
        "&nbsp;",
        "&#44;",
        "&eacute;",
        "&#x3C;",
        "&#40;",
        # the pattern decides DOIs before a tag and a blank line; astral characters end
        # the common shape's run
        "\n\n",
        " \r\n\t\r\n",
        "\n\f",
        "<td>",
        "<br/>",
        "<!--",
        "\U0001d173",
        "\U000e0020",
        "\U00010000",
    ]
)


def walked(text: str) -> list[Found]:
    """find_all's answers by the general walk alone (the authority the quick paths follow)."""
    from doikit._extract import _candidates, _completed, _walk  # noqa: PLC0415 - its parts

    found: list[Found] = []
    position = 0
    while (match := _candidates().search(text, position)) is not None:
        one, position = _walk(text, match, None)
        if one is not None:
            one = _completed(text, one, None)  # (a Springer book's chapter, as _decide does)
            assert one is not None
            found.append(one)
            position = max(position, one.end)
    return found


@given(st.lists(EDGES | PIECES, max_size=24).map("".join))
def test_quick_paths_agree_with_the_walk(text: str) -> None:
    assert list(doikit.find_all(text)) == walked(text)


@given(st.lists(EDGES | PIECES, max_size=24).map("".join), st.integers(1, 40))
def test_quick_paths_agree_with_the_walk_in_streams(text: str, size: int) -> None:
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    assert list(doikit.find_all(chunks)) == walked(text)


@pytest.mark.parametrize(
    "text",
    [
        # a review's fuzzing found these: 'doi:' counts as a URL path's only right after '/'
        "/abstractDOI:10.1000//meta)(",
        "&amp;/meta%41ndoi:doi:10.12345/?fields=x)https://doi.org/,urn:doi:",
        ". https://example.com/doi/DOI:]xxxDOI:10.1000/.html : doi:",
        "https://example.com/doi/\\/doi\uff1afdoi:10.12345/# :  / xxj%2F",
        "/paper/DOI:10.21203/rs.3.rs-1270359/v1?fields=externalIds,venue",
    ],
)
def test_doi_labels_in_url_paths_agree_with_the_walk(text: str) -> None:
    whole = list(doikit.find_all(text))
    assert whole == walked(text)
    for cut in range(len(text) + 1):
        assert list(doikit.find_all([text[:cut], text[cut:]])) == whole


# --- shortDOIs, only when asked for ------------------------------------------------------

SHORT_CASES = [
    ("See doi:10/ABC and https://doi.org/b8xx35.", [("10/abc", "10/ABC"), ("10/b8xx35", "b8xx35")]),
    ("DOI: 10/aabbe; https://doi.org/10/bcr4, http://dx.doi.org/10/c5sk", None),
    ("bare 10/aa1b, then 10/fz6vnc.", [("10/aa1b", "10/aa1b"), ("10/fz6vnc", "10/fz6vnc")]),
    ("10 mg/kg, 10/min, 10/12, 2020/10/a1b, x10/ab1, p.10/ab1", []),
    ("https://doi.org/faq and https://doi.org/help", []),
    ("10.1000/10/abc1 is a DOI name", []),
    ("hdl.handle.net/10/xy9", [("10/xy9", "10/xy9")]),
]


@pytest.mark.parametrize(("text", "expected"), SHORT_CASES)
def test_find_short(text: str, expected: list[tuple[str, str]] | None) -> None:
    found = list(doikit.find_short(text))
    for one in found:
        assert text[one.start : one.end] == one.text
    if expected is None:  # the marked forms: each found, its handle lower-cased
        assert [one.handle for one in found] == ["10/aabbe", "10/bcr4", "10/c5sk"]
    else:
        assert [(one.handle, one.text) for one in found] == expected
    assert not [f for f in doikit.find_all(text) if str(f.doi).startswith("10/")]


SHORT_PIECES = st.sampled_from(
    ["10/", "doi:", "DOI ", "https://doi.org/", "abc", "1", "Z", " ", "\n", ".", "/", "-", "x"]
)


@given(st.lists(SHORT_PIECES, max_size=30).map("".join), st.integers(1, 20))
def test_find_short_in_any_chunking_equals_whole_text(text: str, size: int) -> None:
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    whole = list(doikit.find_short(text))
    assert list(doikit.find_short(chunks)) == whole
    assert list(doikit.find_short(io.StringIO(text))) == whole


# --- The walk's stepwise growth agrees with growing over the whole run -------------------
# The walk used to find the whole run a DOI could be, rejoin line breaks on it, and then
# look at its deciding characters; it now steps from one character that matters to the
# next, so that its work is the DOI's length. This is the former way, kept as a reference
# (with two rules added to both: the ';' that ends a character reference is never a
# separator before another DOI, and in a URL a '%' that starts no escape ends the DOI).

# (Session 13 added: the enders '|', '`' and CJK/full-width punctuation, '$$', and a
# backslash before a letter or '@' end a run; line breaks join by _continues.)
_REFERENCE_ENDS = r"\s\"|`\u3000-\u303f\uff00-\uffef$\\"
_REFERENCE_SPECIAL = r"|\$(?!\$)|\\(?![A-Za-z@\"'])"
_REFERENCE_RUN_TEXT = re.compile(rf"(?:[^{_REFERENCE_ENDS}]{_REFERENCE_SPECIAL})*").match
_REFERENCE_URL_CHAR = (
    rf"(?:[^{_REFERENCE_ENDS}?#&'%]{_REFERENCE_SPECIAL}|%[0-9A-Fa-f]{{2}}|%[0-9A-Fa-f]?\Z)"
)
_REFERENCE_RUN_URL = re.compile(
    rf"{_REFERENCE_URL_CHAR}*(?:&(?!amp;)(?:#[0-9]{{1,7}}|#[xX][0-9a-fA-F]{{1,6}}"
    rf"|[a-zA-Z][a-zA-Z0-9]{{1,31}});{_REFERENCE_URL_CHAR}*)*"
).match
_REFERENCE_DECIDING = re.compile(r"[()\[\]{}<>,;&]")


def _reference_run_end(text: str, index: int, *, in_url: bool) -> int:
    run = (_REFERENCE_RUN_URL if in_url else _REFERENCE_RUN_TEXT)(text, index)
    end = run.end() if run is not None else index
    if not text[index:end].isprintable():
        end = next(i for i in range(index, end) if not text[i].isprintable())
    return end


def reference_grow(text: str, index: int, *, in_url: bool) -> int:
    """The run's end, or the first bracket opened in it that nothing in it closes."""
    opened: list[int] = []
    end = _reference_end(text, index, in_url=in_url, opened=opened)
    if not opened:
        return end
    # an escaped opener ('\\(') goes with its backslash
    return opened[0] - 1 if opened[0] > index and text[opened[0] - 1] == "\\" else opened[0]


def _reference_end(text: str, index: int, *, in_url: bool, opened: list[int]) -> int:
    from doikit import _extract as x  # noqa: PLC0415 - the module's own parts

    end = _reference_run_end(text, index, in_url=in_url)
    while (
        text[end - 1] in x._JOINS_AFTER
        or (text[end - 1].isalnum() and x._BREAK_THEN_DOT(text, end))
        or (text[end - 1] == ";" and x._SICI_CHECK_BREAK(text, end - 3))
    ):
        line_break = x._LINE_BREAK.match(text, end)
        if line_break is None or line_break.end() == len(text):
            break
        if not x._continues(text, text[end - 1], line_break.end()):
            break
        end = _reference_run_end(text, line_break.end(), in_url=in_url)
    depth: list[str] = []
    reference_end = -1
    for deciding in _REFERENCE_DECIDING.finditer(text, index, end):
        char = deciding.group()
        at = deciding.start()
        if char == "&":
            entity = x._ENTITY.match(text, at)
            char = x._entity_char(entity)
            if char.isspace() or char == '"' or (in_url and char == "&"):
                return at
            reference_end = entity.end() - 1 if entity else -1
        if char in x._OPENERS:
            if char == "<" and (x._TAG.match(text, at) or x._ESCAPED_TAG.match(text, at)):
                return at
            depth.append(x._OPENERS[char])
            opened.append(at)
        elif char in x._CLOSERS:
            if not depth or depth[-1] != char:
                return at
            depth.pop()
            opened.pop()
        elif at != reference_end and (
            char == ","
            or x._NEXT_DOI.match(text, at)
            or (char == ";" and x._FIELD_AFTER(text, at + 1))
        ):
            return at
    return end


GROW_PIECES = st.sampled_from(
    [
        "/",
        "a",
        "1",
        "-",
        ".",
        " ",
        "\n",
        " \n ",
        "\r\n",
        "(",
        ")",
        "[",
        "]",
        "<",
        ">",
        "<i>",
        "</",
        ",",
        ";",
        ",10.1000/",
        "; doi:10.2/",
        "&",
        "&amp;",
        "&lt;",
        "&gt;",
        "&nbsp;",
        "&quot;",
        "&#38;",
        "&#x2F;",
        "&bogus;",
        "?",
        "#",
        "'",
        '"',
        "\x00",
        "\u200b",
        "\U000e0fff",
        "é",
        "doi:",
        "10.",
        "|",
        "`",
        "。",
        "$",
        "$$",
        "\\",
        "\\n",
        "\\@",
        ":",
        "\n.",
        "\n8. ",
        "\nv2",
    ]
)


@given(st.lists(GROW_PIECES, min_size=1, max_size=30).map("".join), st.booleans())
@example(text="\\(", in_url=False)  # CI's draw: an escaped opener nothing closes
def test_stepwise_growth_agrees_with_the_whole_run(text: str, in_url: bool) -> None:
    from doikit._extract import _grow  # noqa: PLC0415 - the module's own parts

    text = "10.1000/" + text
    for index in [i + 1 for i, char in enumerate(text) if char == "/"]:
        assert _grow(text, index, in_url=in_url)[0] == reference_grow(text, index, in_url=in_url)


@pytest.mark.parametrize(
    "text",
    [
        "see 10.1000/abc,2019x5 more",
        "see 10.1000/abc,2019,Nature",
        "10.1000/a;12.5x and 10.1000/b;12",
        "10.1175/1520-0469(1971)028<1074:OTEOAI>2.0.CO;2,2019",
        "term=10.1044/1092-4388(2010/09-0106)[doi], more",
        # a review's fuzzing: an HTML tag cut by the chunk's end may end the DOI
        '<1::x>"10.12345/%41<l -;/paper/2016issn>.issn',
        "10.1000/abc<span class=x>def</span> 10.1000/(a<b>)",
        # session 17's review: a placeholder before a begun tag, a placeholder on the next
        # line, an escaped opener that nothing closes
        "doi:10.1000/xxxx<b 10.1000/abc and 10.1000/def more",
        "https://doi.org/10.1145/\nxxxu more",
        "doi:10.1145/\nnnnn5 x",
        "doi:10.1000/abc\\(def more 10.1000/\\[.svg",
        # session 18: a chapter after a blank, mended names
        "doi:\n10.1007/978-3-319-21668-3 9. and 10.1007/978-3-319-21668-3 12 pages",
        "doi:10.1007/978-3540-85064-9_8, doi:10.1002/(SICI)1096987X(199803)19:4<377::AIDJCC1>",
    ],
)
def test_a_stream_split_anywhere_finds_what_the_whole_text_holds(text: str) -> None:
    # A number after ',' or ';' ends a DOI only when it fills a field, and '<' when it starts
    # a tag: at a chunk's end the next chunk may go on with either.
    whole = [(str(f.doi), f.start, f.end) for f in doikit.find_all(text)]
    for cut in range(1, len(text)):
        split = doikit.find_all([text[:cut], text[cut:]])
        assert [(str(f.doi), f.start, f.end) for f in split] == whole, cut


# Names built from the pieces mended() reads: digits, hyphens, an ISSN's 'X', SICI marks.
MENDABLE_NAMES = st.builds(
    "{}/{}".format,
    st.sampled_from(
        [
            "10.1002",
            "10.1007",
            "10.1016",
            "10.1037",
            "10.1038",
            "10.1088",
            "10.1111",
            "10.1140",
            "10.1186",
            "10.1628",
        ]
    ),
    st.lists(
        st.sampled_from(
            [
                "978",
                "3",
                "540",
                "-",
                "X",
                "(SICI)",
                "(",
                ")",
                "S",
                "s",
                "j.",
                "::AID",
                "JCC",
                "<",
                ">",
                "3.0.CO;2",
                "_",
                "9",
                "0",
                "19",
                "/",
                ".",
                "41586",
                "-020-",
                "03083",
                # session 25: the C prefilter reads the ISSN's, the SICI's and APA's shapes
                "1096987X",
                "01406736",
                "0000",
                "10762000",
                "#",
                "P",
                "2-",
                "::AID-",
                # session 25's review: check letters, an ISBN-10's '-X', 'AID' anywhere
                "y",
                "z",
                "-X",
                "AIDA",
                "s87",
            ]
        ),
        min_size=1,
        max_size=14,
    ).map("".join),
)


@given(MENDABLE_NAMES)
@example("10.1007/978-3540-85064-9_8")
@example("10.1002/(SICI)1096987X(199803)19:4<377::AIDJCC1>3.0.CO;2-P")
@example("10.1186/s12889-015-1530y")  # a Springer Nature id, its check a letter
@example("10.1007/0316-99474-X")  # an ISBN-10 a hyphen short before its 'X'
@example("10.1002/3831-8504(3109)55:8<7s87::AIDA>3.0.CO;2-Z")  # 'AID' after a letter
@example("10.1002/(SICI)3831-8504(3109)55:8::AIDA")  # 'AID' outside brackets
def test_mending_only_puts_hyphens_back_and_is_done_once(name: str) -> None:
    fixed = mended(name)
    assert fixed.replace("-", "") == name.replace("-", "")
    assert len(fixed) - len(name) in (0, 1, 2, 3)  # an ISSN, a SICI's 'AID-' and check
    assert mended(fixed) == fixed
    # The candidate pattern decides no name mending would change: it leaves them to
    # _quick and the walk, which mend them.
    for text, at in (
        (f"{name} x", 0),
        (f" https://doi.org/{name} x", 17),
        (f"{name}<br>", 0),  # (the pattern decides a DOI before a tag and a blank line)
        (f"{name}\n\nx", 0),
    ):
        match = _extract._candidates().match(text, at)
        if match is not None and match.lastindex in (None, 1):
            written = match[0].rstrip(_extract._TRAIL_CHARS)
            assert mended(written) == written, (text, written)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        # a name _make cuts back to its prefix is no DOI (mended() made '10.1002/10.10020'
        # of '10.10020', taking '10.1002' for Wiley's prefix)
        ("see 10.10020/. and 10.10029/; and 10.1002\\/.", []),
        # a digit str.isdigit() takes and int() does not ('²') in what may be an ISBN (it
        # raised ValueError)
        ("see 10.1007/1-2345678\u00b29 9", ["10.1007/1-2345678\u00b29"]),
        # an ISBN-10's check character that is neither a digit nor 'X' (it raised ValueError
        # in a URL, where the chapter rule asks whether the name is a Springer book's)
        ("https://x.org/10.1007/978978-020-S x", ["10.1007/978978-020-S"]),
    ],
)
def test_names_the_mending_rules_once_misread(text: str, found: list[str]) -> None:
    """Found by session 24's review, in both builds (older than the C walk)."""
    assert [str(f.doi) for f in doikit.find_all(text)] == found
    assert list(doikit.find_all(text)) == walked(text)
    assert mended("10.10020") == "10.10020"


@given(MENDABLE_NAMES)
@example("10.1038/s41586-020-2649-2")
@example("10.1038/s41586-0202649-2")  # an article id a hyphen short
@example("10.1186/s13059-0171218-7")
@example("10.1007/978-3540-85064-9_8")  # an ISBN-13 a hyphen short
@example("10.1007/3540-85064-9")  # an ISBN-10 a hyphen short
@example("10.1007/978-3-030-030834_4")
@example("10.1037/0000123000")  # an APA book a hyphen short
@example("10.1007/978978-020-S")  # an ISBN-10's check character neither a digit nor 'X'
@example("10.1016/S01406736(88)92668-2")  # a PII's ISSN without its hyphen
@example("10.1002/(SICI)1096987X(199803)19:4<377::AID-JCC1>3.0.CO;2-P")  # a SICI's ISSN
@example("10.1002/1096-987X(199803)19:4<377::AIDJCC1>3.0.CO;2-P")  # a SICI's 'AID'
@example("10.1002/1521-3951(200103)224:1<271::AID-PSSB271>3.0.CO;2#")  # its check
@example("10.1037/0000165000")  # an APA book of 7 digits a hyphen short
def test_the_c_paths_mend_names_as_the_walk(name: str) -> None:
    """The C quick path and the C walk ask mended() about every name it may change (they
    read its branches to skip the rest), as the Python walk mends them."""
    for text in (f"{name} x", f"see doi:{name}.", f"https://x.org/{name} x"):
        assert list(doikit.find_all(text)) == walked(text)
        if _SPEEDUPS is not None:
            _c_walk_agrees(text)


@pytest.mark.skipif(_SPEEDUPS is None, reason="the pure-Python build has no C quick path")
@pytest.mark.parametrize(
    "text",
    [
        "see a=10.1000/abc.def and more",  # after '=', outside a URL
        "at https://onlinelibrary.wiley.com/doi/10.1111/ene.15027 here",  # a URL of any host
        "cite |doi=10.2307/2308078 | mr",  # a doi parameter
        "id=10.1007/s10009-004-0175-4, then",  # a Springer article's name (mended: asked)
        "ends 10.1000/abc.def.\nnext line",  # a line end that is no break (rejoined: asked)
        "see a=10.1000/xyz</a>",  # before a tag
    ],
)
def test_the_c_quick_path_decides_the_common_shape(text: str) -> None:
    """The C scan decides these candidates of the common shape itself: it never hands them
    to _decide or _walked (which would find the same, more slowly)."""
    assert any(match.lastindex == 2 for match in _extract._candidates().finditer(text))
    assert _c_scan_asks(text) == ([], [])


URL_PIECES = st.sampled_from(
    [
        "h",
        "https",
        "://",
        ":/",
        ":",
        "/",
        "www",
        "WWW",
        ".",
        "w",
        "x",
        "-",
        "+",
        "_",
        "=",
        "url",
        "org",
        "a1",
        "9",
        ":80",
        "é",
        "ｗ",
        "W",
        " ",
        "?",
        "&",
        # hosts without a scheme, ports, paths
        "x.org",
        "a-b.",
        "..",
        ":8080",
        ":123456",
        "1.2",
        "/a",
        "Co",
        "doi.org/",
    ]
)


@pytest.mark.skipif(_SPEEDUPS is None, reason="the pure-Python build has no C quick path")
@given(st.lists(URL_PIECES, max_size=12).map("".join), st.integers(0, 40), st.integers(0, 40))
@example("url=https://x", 0, 13)
@example("www.x", 0, 3)  # 'www.' cut by the end
@example("onlinelibrary.wiley.com:8080/doi/", 0, 33)  # a host, a port
@example("a..org/", 0, 7)  # an empty label
@example("x.o1/", 0, 5)  # a domain with a digit
@example("x.o/", 0, 4)  # a domain of one letter
@example("x.org:123456/", 0, 13)  # a port of six digits
def test_the_c_paths_read_a_url_token_as_the_pattern(text: str, token: int, end: int) -> None:
    """The C paths read whether _url._URL_TOKEN matches a token as the pattern does."""
    from doikit._extract._url import _URL_TOKEN  # noqa: PLC0415 - its parts

    assert _SPEEDUPS is not None
    token, end = min(token, len(text)), min(end, len(text))
    end = max(token, end)
    assert _SPEEDUPS.url_token(text, token, end) == (_URL_TOKEN.match(text, token, end) is not None)


ROW_PIECES = st.sampled_from(
    [
        ";",
        " ",
        "\t",
        "\n",
        "doi:",
        "DOI: ",
        "10.",
        "1000",
        ".",
        "/",
        "http://",
        "HTTPS://",
        "www.",
        "WwW.",
        "htt",
        "a",
        "Z",
        "2",
        "CO;",
        "co;",
        "-",
        "+",
        "12",
        "3.5",
        ",",
        '"',
        "\u00a0",
        "\u3000",
        "é",
        "\u0661",
        "x",
    ]
)


@pytest.mark.skipif(_SPEEDUPS is None, reason="the pure-Python build has no C walk")
@given(st.lists(ROW_PIECES, min_size=1, max_size=14).map("".join))
@example("10.1000/a;doi: 10.1000/b")  # another DOI, after its marker
@example("x;2019;")  # a number that fills a field
@example("x.CO;2-P")  # a SICI's check
@example("x.CO;2,")  # 'CO;2' is no field
@example("x;-3.5 y")  # a signed fraction
@example("x;3. y")  # a number and '.': no field
def test_the_c_walk_reads_a_semicolon_as_the_walk(text: str) -> None:
    """The C walk reads where a DOI ends at a ';' (another DOI, a URL, a field) as
    _run._separated does, at every ';' of any text."""
    from doikit._extract._run import _separated  # noqa: PLC0415 - its parts

    assert _SPEEDUPS is not None
    for at in (at for at, char in enumerate(text) if char == ";"):
        assert _SPEEDUPS.separated(text, at) == _separated(text, at, at + 1, stream=False), at


LINE_PIECES = st.sampled_from(
    [
        "\n",
        "\r\n",
        "\r",
        " ",
        "\t",
        "\f",
        "\x85",
        "\u3000",
        ".",
        ")",
        "]",
        "[",
        "-",
        "/",
        ":",
        ";",
        "\u2010",
        "1",
        "12",
        "123",
        "1234",
        "12345",
        "a",
        "Z",
        "é",
        "\u0661",
        '"',
        "'",
        "10.",
        "DOI:",
        "doi:",
        "Http:",
        "https:",
        "urn:",
        "info:",
        "hdl:",
        "CO;",
        "2-",
        "x",
    ]
)


@pytest.mark.skipif(_SPEEDUPS is None, reason="the pure-Python build has no C quick path")
@given(st.lists(LINE_PIECES, min_size=1, max_size=14).map("".join))
@example("10.1000/abc.\n28 zoo")  # a page number before words: no continuation
@example("10.1000/abc.\n8. Name")  # a list number
@example("x.\n123. Name")  # the bounds of a list number's and a page number's digits
@example("x.\n1234 Name")
@example("x.\n12345 Name")
@example("x.\n12) x")
@example("x.\n1234\r\n")  # a page number alone, before CRLF
@example("x.\n123\r5")  # a lone CR
@example("10.1000/abc-\ndoi:x")  # a new presentation, after a hyphen too
def test_the_c_paths_rejoin_lines_as_the_walk(text: str) -> None:
    """The C paths read whether a broken line goes on (_run._rejoined: _continues) at every
    stop of a whole text as the walk reads it."""
    from doikit._extract._run import _rejoined  # noqa: PLC0415 - its parts

    assert _SPEEDUPS is not None
    for at in range(1, len(text) + 1):
        assert _SPEEDUPS.rejoined(text, at) == _rejoined(text, at), at


TAIL_PIECES = st.sampled_from(
    [
        "https://",
        "x.org/",
        "img.shields.io/badge/",
        "/BADGE/",
        "DOI-",
        "-",
        "--",
        "a",
        "Z",
        "zenodo.org/badge/DOI/",
        "10.5281/",
        "10.1093/",
        "zenodo.1",
        ".svg",
        ".SVG",
        ".png",
        ".pdf",
        ".HTML",
        ".htm",
        "/abstract",
        "/Full",
        "/fulltext",
        "/x",
        "/status.svg",
        "/data.json",
        "academic.oup.com/",
        "bioinformatics/",
        "btaa025",
        "/5714742",
        "/12",
        "\n",
        " ",
        "blue",
        "1",
        ".",
        "/",
        "%2F",
        "é",
        "_",
    ]
)


@pytest.mark.skipif(_SPEEDUPS is None, reason="the pure-Python build has no C walk")
@given(
    st.lists(TAIL_PIECES, max_size=12).map("".join), st.lists(TAIL_PIECES, max_size=8).map("".join)
)
@example("see https://zenodo.org/badge/DOI/", "10.5281/zenodo.1.svg")  # a badge's image
@example("https://img.shields.io/badge/DOI-", "10.5281/zenodo.1-blue.svg")  # and colour
@example("https://academic.oup.com/b/article/doi/", "10.1093/b/btaa025/5714742")  # OUP
@example("https://x.org/", "10.1000/a/full/\nb.pdf")  # a view's line, a glued file
@example("https://academic.oup.com/doi/", "10.1093/btaa025/5714742")  # no third segment
def test_the_c_paths_cut_url_tails_as_the_walk(head: str, name: str) -> None:
    """The C paths read how much of a URL candidate without escapes is the DOI (views,
    glued and following files, badges' images and colours, OUP's numbers) as
    _url._in_url_length does, and ask it the rest."""
    from doikit._extract._url import _in_url_length  # noqa: PLC0415 - its parts

    assert _SPEEDUPS is not None
    text = f"{head}{name} x"
    start = len(head)
    for end in range(start + 1, len(text) + 1):
        kept = _SPEEDUPS.url_length(text, start, end)
        raw = text[start:end]
        assert kept == (None if "%" in raw else _in_url_length(text, start, raw)), end


@pytest.mark.skipif(_SPEEDUPS is None, reason="the pure-Python build has no C walk")
@given(st.lists(TAIL_PIECES, max_size=10).map("".join).map("10.".__add__))
@example("10.1000/x/Fulltext")  # a view in either case
@example("10.1000/x/fulltexts")  # no view: a letter after it
@example("10.1000/x.HTM")  # a file glued to the name
@example("10.1000/x/a-b_c.json")  # a file after it
def test_the_c_paths_read_a_resolver_url_s_name_as_the_walk(written: str) -> None:
    """The C paths read the name in a resolver URL's candidate without escapes (a view, a
    file after it or glued to it) as _url._url_name does, and ask it the rest."""
    from doikit._extract._url import _url_name  # noqa: PLC0415 - its parts

    assert _SPEEDUPS is not None
    assert _SPEEDUPS.url_name(written) == _url_name(written)


def test_the_pattern_s_whitespace_is_python_s() -> None:
    """_pattern._WHITESPACE, spelled out for speed, is every character str.isspace() and a
    str pattern's '\\s' take; the common shape's run takes no character outside the BMP
    and none that is never Graphic."""
    from doikit._extract import _pattern  # noqa: PLC0415 - its parts

    spaces = {chr(code) for code in range(0x110000) if chr(code).isspace()}
    assert {c for c in map(chr, range(0x110000)) if re.match(rf"[{_pattern._WHITESPACE}]", c)} == (
        spaces
    )
    assert spaces == {c for c in map(chr, range(0x110000)) if re.match(r"\s", c)}
    plain = re.compile(_pattern._ANY_PLAIN)
    not_graphic = re.compile(f"[{_pattern._NOT_GRAPHIC}]")
    for code in (*range(0x10000), 0x10000, 0x1F600, 0x110BD, 0xE0020, 0x10FFFF):
        char = chr(code)
        if not_graphic.match(char) or char.isspace() or code > 0xFFFF:
            assert plain.match(char) is None, hex(code)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("<a>10.1000/xyz</a>", "10.1000/xyz"),  # before a tag
        ("<td>10.1000/xyz.</td>", "10.1000/xyz"),  # trailing punctuation, then a tag
        ("see https://doi.org/10.1000/xyz<br/>", "10.1000/xyz"),  # a resolver URL, a tag
        ("see 10.1000/xyz\n\nNext", "10.1000/xyz"),  # before a blank line
        ("see doi:10.1000/xyz.\r\n  \r\nNext", "10.1000/xyz"),  # after '.', a blank line
        ("see 10.1000/xyz/\n\x0cpage", "10.1000/xyz"),  # after '/', a form feed
    ],
)
def test_the_pattern_decides_a_doi_before_a_tag_or_a_blank_line(text: str, name: str) -> None:
    """A tag ends a DOI (the walk's _opener), and no line is joined across a blank line or
    other whitespace (_run._continues): the candidate pattern decides these itself."""
    matches = list(_extract._candidates().finditer(text))
    assert [match.lastindex in (None, 1) for match in matches] == [True]
    assert [str(found.doi) for found in doikit.find_all(text)] == [name]
    assert list(doikit.find_all(text)) == walked(text)


@pytest.mark.skipif(_SPEEDUPS is None, reason="the pure-Python build has no C quick path")
@pytest.mark.parametrize(
    "text",
    [
        "urn:doi:10.1000/abc here",  # a URN: neither C path reads it
        "see 10.1000/abc\\%23x here",  # TeX's escaped '%': the walk in C leaves it
        "doi:10.1000/abc/\nxyz\u00e9",  # a line rejoined, then a character outside ASCII
    ],
)
def test_the_c_quick_path_hands_what_it_refuses_to_the_walk(text: str) -> None:
    """A candidate the C quick path refuses as _quick refuses it, and the walk in C leaves,
    goes to _walked, not to _decide (whose _quick would refuse it again)."""
    assert any(match.lastindex == 2 for match in _extract._candidates().finditer(text))
    decided, walked_ = _c_scan_asks(text)
    assert decided == []
    assert walked_ != []


@pytest.mark.skipif(_SPEEDUPS is None, reason="the pure-Python build has no C walk")
@pytest.mark.parametrize(
    "text",
    [
        "id=10.1000/abc&type=x",  # '&' after: no end _quick knows; a bare '&' in a URL
        "see https://x.org/doi/10.1000/abc?x=1 here",  # '?' ends the run in a URL
        "doi:10.1000/abc/\nxyz",  # a line end the walk rejoins
        '{"DOI": "10.1000\\/abc"}',  # JSON's escaped '/' (a bare start)
        "https://x.org/?doi=10.1000%2Fabc&y=1",  # an escaped '/' in a URL
        "doi: 10.12173/j.issn.1004-5511.202311014.[Article in Chinese]",  # a bracket cut
        "10.1002/1096-987x(200102)22:3<273::AID-JCC1>3.0.CO;2-P, and",  # brackets balance
        "a 10.1000/abc;10.1000/def b",  # ';' before another DOI
        "a 10.1000/xxxx b",  # a placeholder, refused
        "id=10.1000/abc&amp;type=x",  # a character reference
        "doi:10.1002/(SICI)1097-4571(199101)42:1&lt;7::AID-ASI2&gt;3.0.CO;2-P</a>",
    ],
)
def test_the_c_walk_decides_what_the_quick_paths_leave(text: str) -> None:
    """The walk in C decides these candidates (the quick paths leave them) without calling
    _decide or _walked, with the Python walk's answers (_c_scan_asks holds them)."""
    assert _c_scan_asks(text) == ([], [])


WILD_CORPUS = Path(__file__).parent / "corpus" / "wild.jsonl"


def _c_walk_agrees(text: str) -> int:
    """Hold the walk in C (_speedups.walk) to the Python walk (_walk, then _completed as
    _walked reads it) on every candidate of *text* but a spaced name (the C scan hands it
    resolver URLs it has not decided, candidates of the common shape and bare starts): the
    number it decides."""
    from doikit._extract import _completed, _walk  # noqa: PLC0415 - its parts

    assert _SPEEDUPS is not None
    decided = 0
    for match in _extract._candidates().finditer(text):
        if match.lastindex not in (1, 2, 3):
            continue
        got = _SPEEDUPS.walk(text, match.lastindex, match.start(), match.end(), DOI)
        if got is None:
            continue  # left to the Python walk
        found, position = _walk(text, match, None)
        if found is not None:
            found = _completed(text, found, None)
            assert found is not None
        expected = (
            (None, -1, position)
            if found is None
            else (found.doi, found.end, max(position, found.end))
        )
        assert got == expected, (text[match.start() : match.end() + 40], got, expected)
        decided += 1
    return decided


@pytest.mark.skipif(_SPEEDUPS is None, reason="the pure-Python build has no C walk")
@given(st.lists(EDGES | PIECES, max_size=24).map("".join))
@example("10.1000/\\/\n8. ")  # an escape and a line break: left to Python (was an error)
def test_the_c_walk_answers_as_the_walk(text: str) -> None:
    _c_walk_agrees(text)


@pytest.mark.skipif(_SPEEDUPS is None, reason="the pure-Python build has no C walk")
def test_the_c_walk_answers_as_the_walk_on_the_wild_corpus() -> None:
    """Every candidate of the wild corpus's snippets (2,603 texts from third parties),
    alone and with each snippet's neighbours around it: most decided in C, all as the
    Python walk decides them."""
    snippets = [json.loads(line)["text"] for line in WILD_CORPUS.read_text("utf-8").splitlines()]
    decided = sum(_c_walk_agrees(snippet) for snippet in snippets)
    decided += _c_walk_agrees("\n\n".join(snippets))
    assert decided > 4_650  # of 4,803 (4,739 at the time of writing: the rest to Python)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("at https://onlinelibrary.wiley.com/doi/10.1002/nbm.3801/full\n", "10.1002/nbm.3801"),
        ("[![DOI](https://zenodo.org/badge/DOI/10.5281/zenodo.1.svg)]", "10.5281/zenodo.1"),
        ("(https://joss.theoj.org/papers/10.21105/joss.01807/status.svg)", "10.21105/joss.01807"),
        (
            "see https://www.biorxiv.org/content/10.1101/2021.04.29.442020v1.",
            "10.1101/2021.04.29.442020",
        ),
        ("x https://a.org/10.1101/2021.04.29.442020v1.full.pdf y", "10.1101/2021.04.29.442020"),
        ("a https://a.org/doi/10.1000/ab/full/10.2000/cd b", None),  # a start in what is cut
        ("a https://a.org/doi/10.1000/full b", None),  # nothing of the suffix left
    ],
)
def test_the_quick_path_cuts_a_url_s_tail_and_a_preprint_s_version_as_the_walk(
    text: str, name: str | None
) -> None:
    """In a URL the quick path reads a view, a file or a badge's image after the DOI as the
    walk does, and a preprint's version; where the walk would go on reading after the cut,
    it leaves the candidate to the walk (None)."""
    match = next(m for m in _extract._candidates().finditer(text) if m.lastindex == 2)
    quick = _extract._quick(text, match, None)
    assert (None if quick is None else str(quick.doi)) == name
    if quick is not None:
        assert [quick] == walked(text)


@pytest.mark.parametrize(
    "text",
    [
        # a URL's escape writing a Springer book's first digit: its chapter still read
        "see https://link.springer.com/10.1007/%3978-3-319-21668-3 9.",
        " https://doi.org/10.1007/%3978-3-319-21668-3 9.",
        # a page number alone, or the next line's first word: told by what follows it
        "a/10.1093/9.\n 9 10.1000/q",
        "a/10.1093/9.\n 9 \nText",
    ],
)
def test_a_review_s_findings_whole_and_in_streams(text: str) -> None:
    """Session 23's review: each text gives the walk's answers (with a Springer book's
    chapter) whole, and the same in chunks of every size."""
    whole = list(doikit.find_all(text))
    assert whole == walked(text)
    for size in range(1, len(text)):
        assert (
            list(doikit.find_all([text[i : i + size] for i in range(0, len(text), size)])) == whole
        )


@pytest.mark.skipif(_SPEEDUPS is None, reason="the pure-Python build has no C quick path")
def test_a_failed_configure_quick_leaves_the_c_quick_path_off() -> None:
    """configure_quick refuses parts it cannot read, and leaves the C quick path off (every
    candidate to the Python path), not half configured; configured again, it decides."""
    assert _SPEEDUPS is not None
    text = "see a=10.1000/abc.def and more"
    parts = _extract._c_quick_parts()
    try:
        with pytest.raises(ValueError, match="ASCII"):
            _SPEEDUPS.configure_quick(**{**parts, "boundaries": "\u2026"})
        with pytest.raises(ValueError, match="words"):  # (a view is read as a word)
            _SPEEDUPS.configure_quick(**{**parts, "views": ("full-text",)})
        decided, _ = _c_scan_asks(text)
        assert decided == ["10.1000/abc.def"]
    finally:
        _SPEEDUPS.configure_quick(**parts)
    assert _c_scan_asks(text) == ([], [])


@pytest.mark.skipif(_SPEEDUPS is None, reason="the pure-Python build has no C walk")
def test_a_failed_configure_walk_leaves_the_c_walk_off() -> None:
    """configure_walk refuses parts it cannot read, and leaves the C walk off (what the quick
    path does not decide goes to Python); configured again, it reads."""
    from doikit._extract._walk import _c_walk_parts  # noqa: PLC0415 - its part

    assert _SPEEDUPS is not None
    text = '{"DOI": "10.1000\\/abc"}'  # a bare start (JSON's escaped '/')
    parts = _c_walk_parts()
    try:
        with pytest.raises(TypeError, match="ASCII"):
            _SPEEDUPS.configure_walk(**{**parts, "escapes": ("\u2026",)})
        with pytest.raises(ValueError, match="ASCII"):
            _SPEEDUPS.configure_walk(**{**parts, "stops": "\u2026"})
        with pytest.raises(ValueError, match="lower case"):  # (read in either case)
            _SPEEDUPS.configure_walk(**{**parts, "glued_files": ("PDF",)})
        decided, _ = _c_scan_asks(text)
        assert decided == ["10.1000\\/"]
        assert _SPEEDUPS.walk(text, 3, 9, 18, DOI) is None  # (left to Python)
    finally:
        _SPEEDUPS.configure_walk(**parts)
    assert _c_scan_asks(text) == ([], [])


@pytest.mark.skipif(_SPEEDUPS is None, reason="the pure-Python build has no C walk")
@pytest.mark.parametrize(
    ("part", "text"),
    [
        ("entity_char", "id=10.1000/abc&amp;type=x"),
        ("url_length", "https://x.org/doi/10.1000%2Fabc/full here"),  # (escapes: asked)
        ("number", "ratio 10.12/3 here"),
        ("page_range", "pages 5: 45-10.1016/j.x.2020.01.002 here"),
        ("shields", "pages 5: 45-10.1016/j.x.2020.01.002 here"),  # (asked after the range)
    ],
)
def test_what_a_rule_raises_reaches_the_caller_of_the_c_walk(part: str, text: str) -> None:
    """An error in a rule the C walk asks (a Python function or compiled pattern) reaches
    find_all's caller as it was raised, and the walk goes on working after it."""
    from doikit._extract._walk import _c_walk_parts  # noqa: PLC0415 - its part

    assert _SPEEDUPS is not None
    parts = _c_walk_parts()

    def broken(*_: object) -> object:
        raise LookupError(part)

    expected = walked(text)
    try:
        _SPEEDUPS.configure_walk(**{**parts, part: broken})
        with pytest.raises(LookupError, match=part):
            list(doikit.find_all(text))
    finally:
        _SPEEDUPS.configure_walk(**parts)
    assert list(doikit.find_all(text)) == expected


def _c_scan_asks(text: str) -> tuple[list[str], list[str]]:
    """The candidates the C scan of *text* hands to _decide and to _walked (its answers
    held to the walk's)."""
    asked: tuple[list[str], list[str]] = ([], [])

    def decide(*args: Any) -> Any:
        asked[0].append(args[1].group())
        return _extract._decide(*args)

    def walk(*args: Any) -> Any:
        asked[1].append(args[1].group())
        return _extract._walked(*args)

    assert _SPEEDUPS is not None
    scan = _SPEEDUPS.Scan(
        _extract._candidates().finditer, text, 0, None, 0, DOI, Found, decide, walk,
        _extract._TAIL, _extract._TRAIL_CHARS, _extract._GLUED_FILE_LAST,
    )  # fmt: skip
    assert list(scan) == walked(text)
    return asked
