"""The rules of the seeds' prose (tests/vectors/extract_prose.json): rows of the index (_rules)."""

from __future__ import annotations

from typing import Final

from doikit._extract._rule import Rule

PROSE: Final = (
    Rule(
        name="blank-quote-tag-end",
        says='whitespace, control characters, `"` and HTML tags end a DOI',
        why=(
            "a DOI name is Graphic text; a reader stops at the end of a word, at a quote and at "
            "markup"
        ),
        example='`<a href="https://doi.org/10.1000/182">`',
        found="`10.1000/182`",
        vectors=("66-prose-quotes", "73-prose-html"),
        paths={
            "pattern": ("_pattern._DECIDED_END", "_pattern._TAG_SOURCE", "_pattern._ANY_PLAIN"),
            "quick": ("_quick._QUICK_ENDS", "_run._TAG"),
            "walk": ("_run._STOPS_IN_TEXT", "_run._line_end", "_run._opener"),
            "C scan": ("quick.c:dk_quick", "walk.c:stop_rule"),
        },
    ),
    Rule(
        name="brackets-balance",
        says="a closing `) ] } >` stays only when balanced inside the DOI",
        why="prose puts DOIs in brackets; SICI and Elsevier names hold balanced ones",
        example="`(doi:10.1016/0009-2614(84)85645-6)`, `<10.1000/182>`",
        found="`10.1016/0009-2614(84)85645-6`, `10.1000/182`",
        vectors=(
            "61-prose-url-in-parens",
            "64-prose-paren-doi-in-parens",
            "65-prose-brackets",
            "67-prose-angle",
            "75-prose-unbalanced-close-paren",
            "doikit-balanced-end-paren",
        ),
        paths={
            "pattern": ("_pattern._suffix",),
            "quick": ("_quick._QUICK_ENDS",),
            "walk": ("_run._opener", "_run._closer"),
            "C scan": ("quick.c:dk_quick", "walk.c:deciding_rule"),
        },
    ),
    Rule(
        name="trailing-punctuation-dropped",
        says="trailing `. , ; : ! ? …` and closing quotes are dropped",
        why=(
            "sentence punctuation and quotes follow a DOI in prose; nothing of the DOI comes after "
            "them"
        ),
        example="`See doi:10.1000/182.`",
        found="`10.1000/182`",
        vectors=(
            "60-prose-doi-colon-period",
            "63-prose-paren-doi-period",
            "68-prose-sici-period",
            "70-prose-url-period",
            "71-prose-ellipsis",
            "78-prose-underscore-chapter",
        ),
        paths={
            "pattern": ("_pattern._TRAIL",),
            "quick": ("_quick._QUICK_TRIM",),
            "walk": ("_make._make",),
            "C scan": ("scan.c:scan_decided_span", "quick.c:dk_quick", "make.c:dk_walk_make"),
        },
    ),
    Rule(
        name="semicolon-before-a-doi",
        says=(
            "`,` or `;` right before another DOI separates them (a `,` ends a DOI anyway: see the "
            "table below)"
        ),
        why="reference lists and spreadsheet cells join DOIs by `,` or `;`",
        example="`10.1000/182,10.1000/183`",
        found="both",
        vectors=("62-prose-list", "69-prose-semicolon-two", "74-prose-comma-no-space"),
        tests=("test_extract.py::test_lists_of_dois_are_split",),
        paths={
            "pattern": ("_pattern._AFTER_SEPARATOR_ENDS",),
            "quick": ("_quick._quick",),
            "walk": ("_run._semicolon", "_run._NEXT_DOI"),
            "C scan": ("quick.c:dk_quick", "walk.c:semicolon", "walk.c:dk_separated"),
        },
    ),
    Rule(
        name="url-ends-at-query",
        says=(
            "in a URL (`scheme://…`, `doi.org/…`, `?doi=`), a raw `?`, `#`, `&` or `'`, or a `%` "
            "that starts no escape, ends the DOI and escapes are decoded; publisher views "
            "(`/abstract`, `/full`, `/pdf`, …) are cut"
        ),
        why=(
            "in a URL these delimit the query, the fragment and the path's end, and a DOI in a URL "
            "is percent-encoded"
        ),
        example="`…wiley.com/doi/10.1111/nous.12244/abstract`",
        found="`10.1111/nous.12244`",
        vectors=(
            "doikit-publisher-url-tail",
            "doikit-query-parameter",
            "doikit-url-hash-is-fragment",
            "doikit-url-stray-percent-ends-the-doi",
            "doikit-url-encoded-slash",
        ),
        paths={
            "pattern": ("_pattern._URL_PLAIN", "_pattern._DECIDED_END_IN_URL"),
            "quick": ("_quick._QUICK_URL_ODD", "_url._url_name"),
            "walk": (
                "_run._STOPS_IN_URL",
                "_run._reference",
                "_url._in_url",
                "_url._in_url_length",
            ),
            "C scan": ("scan.c:scan_decided_span", "quick.c:url_odd", "walk.c:grow"),
        },
    ),
    Rule(
        name="text-is-literal",
        says="outside URLs the text is literal: `#` and `;` stay",
        why="SICI names end in `2-#` and hold `;`; outside a URL nothing is encoded",
        example="`10.1002/(SICI)…3.0.CO;2-#`",
        found="whole",
        vectors=(
            "doikit-sici-ends-hash",
            "doikit-bare-percent-is-literal",
            "doikit-text-percent-is-literal",
            "72-prose-plus-doi",
        ),
        paths={
            "pattern": ("_pattern._TEXT_PLAIN",),
            "walk": ("_run._STOPS_IN_TEXT", "_make._make"),
            "C scan": ("walk.c:grow",),
        },
    ),
    Rule(
        name="references-decide-as-their-characters",
        says=(
            "HTML character references decide as the characters they stand for: `&#x2F;`/`&#47;` "
            "can be the first slash; `&quot;`, `&nbsp;` and other quotes or spaces end a DOI; "
            "`&lt;`/`&gt;` balance like `<`/`>` (a SICI DOI keeps its `&gt;`); a trailing `&#46;` "
            "is trimmed; `&amp;` ends a DOI in a URL (it separates query parameters) and is an `&` "
            "of the name in text; the `;` that ends a reference is never a separator"
        ),
        why="HTML and XML write characters as references",
        example=(
            '`href="https://doi.org/10.1000&#x2F;182"`, `&quot;10.1000/184&quot;`, '
            "`doi:10.1000/a&amp;b`"
        ),
        found="`10.1000/182`, `10.1000/184`, `10.1000/a&b`",
        vectors=(
            "doikit-html-entities",
            "doikit-reference-semicolon-is-no-separator",
            "doikit-mwcites-offset-0",
        ),
        tests=("test_extract.py::test_html_character_references",),
        paths={
            "pattern": ("_pattern._SEPARATOR", "_pattern._DECIDE_IN_TEXT"),
            "walk": ("_run._reference", "_make._make"),
            "C scan": ("walk.c:reference",),
        },
    ),
    Rule(
        name="escaped-presentation-in-url",
        says="an escaped presentation inside a URL is read",
        why="query strings carry a whole presentation, escaped",
        example="`…?id=doi%3A10.1000%2F187&b=1`",
        found="`10.1000/187`",
        vectors=("escaped-start-and-slash",),
        corpus=("pdf-raxml-manual-1252",),
        paths={"walk": ("_walk._walk", "_url._in_url"), "C scan": ("walk.c:dk_walk",)},
    ),
    Rule(
        name="json-and-tex-escapes",
        says=(
            "JSON's escaped slash `\\/` (PHP's `json_encode`) and TeX's escaped underscore `\\_` "
            "(BibTeX files) read as `/` and `_`"
        ),
        why="PHP's `json_encode` escapes `/`; BibTeX files escape `_`",
        example='`"10.1038\\/nature12373"`, `doi = {10.1007/978-3-642-21311-3\\_5}`',
        found="`10.1038/nature12373`, `10.1007/978-3-642-21311-3_5`",
        vectors=("doikit-json-escaped-slash", "doikit-bibtex-escaped-underscore"),
        paths={
            "pattern": ("_pattern._DECIDE_IN_TEXT",),
            "quick": ("_quick._quick",),
            "walk": ("_run._backslash", "_make._ESCAPED_PUNCTUATION"),
            "C scan": ("quick.c:dk_quick", "make.c:name_of"),
        },
    ),
    Rule(
        name="badge-image-cut",
        says="in a badge URL (`…/badge/…`), the image named after the DOI is not part of it",
        why="badge services name the image after the DOI",
        example="`https://zenodo.org/badge/DOI/10.5281/zenodo.8242099.svg`",
        found="`10.5281/zenodo.8242099`",
        vectors=(
            "doikit-badge-image",
            "doikit-image-name-outside-a-badge-stays",
            "badge-image-before-file",
        ),
        corpus=("refs5-prokka-1",),
        paths={
            "quick": ("_url._url_name", "_quick._cut_in_url", "_quick._in_url_written"),
            "walk": ("_url._in_url_length",),
            "C scan": (
                "scan.c:scan_decided_span",
                "quick.c:dk_quick",
                "url.c:dk_rule_url_may_cut",
                "url.c:dk_url_length",
            ),
        },
    ),
    Rule(
        name="line-break-rejoined",
        says=(
            "a line break is rejoined only when unambiguous: after `/` or `-` when the next line "
            "goes on with a DOI character (not a closer, quote, new DOI or presentation), after "
            "`.` only before a digit; never mid-token"
        ),
        why="PDF text and wrapped mail break long DOIs at line ends",
        example="`10.1007/978-3-642-⏎21311-3_5`",
        found="`10.1007/978-3-642-21311-3_5` (`text` keeps the break)",
        vectors=(
            "doikit-line-break-after-hyphen",
            "doikit-line-break-after-slash",
            "doikit-line-break-after-dot-digit",
            "doikit-line-break-after-dot-sentence",
            "doikit-line-break-after-dot-lowercase",
            "doikit-line-break-mid-token-not-joined",
            "doikit-line-break-before-new-doi",
            "doikit-line-break-crlf-indent",
        ),
        tests=(
            "test_extract.py::test_stepwise_growth_agrees_with_the_whole_run",
            "test_extract.py::test_a_chunk_ending_in_blanks_before_a_line_break",
        ),
        paths={
            "pattern": ("_pattern._DECIDED_END",),
            "quick": ("_quick._LINE_END_AHEAD", "_run._rejoined"),
            "walk": ("_run._line_end", "_run._rejoined", "_run._continues", "_make._make"),
            "C scan": ("rules.c:dk_rule_rejoined", "rules.c:continues"),
        },
    ),
    Rule(
        name="urn-colon",
        says="`urn:doi:` with its colon rule",
        why="the `urn:doi:` namespace separates prefix and suffix with `:`",
        example="`urn:doi:10.123:456ABC%2Fzyz`",
        found="`10.123/456ABC/zyz`",
        vectors=("doikit-urn-in-text",),
        paths={
            "pattern": ("_pattern._SEPARATOR",),
            "quick": ("_quick._quick",),
            "walk": ("_walk._walk", "_make._make"),
            "C scan": ("quick.c:dk_quick", "walk.c:dk_walk"),
        },
    ),
    Rule(
        name="look-alikes-skipped",
        says=(
            "look-alikes are skipped: shortDOIs (`10/abc`), `10.1.1.x` CiteSeerX ids, starts glued "
            "to a word or number; and, with no DOI marker (`doi:`, a resolver URL, BibTeX `doi = "
            "{`, RIS `DO  - `) in front, a prefix shaped like an IPv4 address or a registrant of "
            "fewer than 4 digits in all"
        ),
        why=(
            "routes, ratios, version numbers and shortDOIs look like DOIs; a DOI marker in front "
            "settles it"
        ),
        example="`route 10.0.0.1/24`, `a ratio of 10.5/20`; but `doi:10.123/abc`",
        found="nothing; `10.123/abc`",
        vectors=(
            "doikit-citeseerx",
            "doikit-shortdoi-skipped",
            "doikit-ip-address",
            "doikit-ratio",
            "doikit-short-registrant-bare",
            "doikit-short-registrant-marked",
            "doikit-bibtex-marker",
            "doikit-ris-marker",
            "76-prose-uppercase-DOI",
            "doikit-isbn-a-subdivided",
        ),
        paths={
            "pattern": ("_pattern._REGISTRANT",),
            "walk": ("_walk._GLUED", "_walk._looks_like_a_number", "_walk._MARKER"),
            "C scan": ("walk.c:dk_walk",),
        },
    ),
)
