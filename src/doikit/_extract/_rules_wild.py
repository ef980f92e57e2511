"""The rules fitted to text from the wild (issue 14 on: tests/vectors/extract_wild.json and
the wild corpus, tests/corpus/wild.jsonl): rows of the index (_rules)."""

from __future__ import annotations

from typing import Final

from doikit._extract._rule import Rule

WILD: Final = (
    Rule(
        name="enders",
        says=(
            "`\\|`, `` ` `` and CJK or full-width punctuation (U+3000–U+303F, U+FF00–U+FFEF) end a "
            "DOI, as whitespace does"
        ),
        why=(
            "no real DOI holds them; wiki templates, Markdown code spans and CJK text put them "
            "right after DOIs"
        ),
        example=(
            "`{{cite journal\\|doi=10.1000/xyz\\|pmid=1}}`, `` `10.1000/xyz` ``,"
            " `DOI：10.1000/xyz。`"
        ),
        found="`10.1000/xyz`",
        vectors=(
            "wiki-field-separator",
            "wiki-field-no-spaces",
            "markdown-code-span",
            "cjk-full-width-punctuation",
            "backtick-url-is-a-url",
        ),
        corpus=("wiki-gensim-autism-poland", "cjk-kenjiro-1"),
        paths={
            "pattern": ("_pattern._ENDERS",),
            "quick": ("_quick._QUICK_ENDS",),
            "walk": ("_run._STOPS_IN_TEXT",),
            "C scan": ("quick.c:dk_quick", "walk.c:grow"),
        },
    ),
    Rule(
        name="double-dollar-ends",
        says="`$$` ends a DOI, a single `$` does not",
        why="catalogue exports separate subfields with `$$`; 8 real DOIs hold one `$`",
        example="`$$a10.1000/xyz$$2doi`, `10.1000/a$b`",
        found="`10.1000/xyz`, `10.1000/a$b`",
        vectors=("catalogue-subfields", "dollar-in-a-doi-stays"),
        paths={
            "pattern": ("_pattern._DECIDE_IN_TEXT",),
            "walk": ("_run._dollar",),
            "C scan": ("walk.c:stop_rule",),
        },
    ),
    Rule(
        name="subfield-code-is-no-glue",
        says="a subfield code (`$$a`, `$a`, MARC's U+001F and code) before a DOI is no glue",
        why="catalogue records",
        example="as above",
        found="",
        vectors=("catalogue-subfields",),
        paths={
            "pattern": ("_pattern._BARE_START",),
            "walk": ("_walk._SUBFIELD_BEFORE",),
            "C scan": ("walk.c:dk_walk",),
        },
    ),
    Rule(
        name="asterisk-trails",
        says="`*` is trailing punctuation",
        why="Markdown emphasis: `**doi:10.1007/x.**`",
        example="`**doi:10.1000/a.**`",
        found="`10.1000/a`",
        vectors=("markdown-bold",),
        corpus=("thread-jabref-7256",),
        paths={
            "pattern": ("_pattern._TRAIL_CHARS",),
            "quick": ("_quick._QUICK_TRIM",),
            "walk": ("_make._make",),
            "C scan": ("scan.c:scan_decided_span", "quick.c:dk_quick", "make.c:dk_walk_make"),
        },
    ),
    Rule(
        name="final-slash-trails",
        says="a final `/` is trailing punctuation (in a URL, `%2F` too)",
        why=(
            "directory URLs and storage paths; none of the 4,879 labeled DOIs of the corpora ends "
            "in one"
        ),
        example="`https://arcticdata.io/data/10.18739/A24F1MK7Q/`",
        found="`10.18739/A24F1MK7Q`",
        vectors=("final-slash-trails",),
        corpus=("thread6-nceas-scc-30-c1", "thread6-dataverseno-31"),
        paths={
            "pattern": ("_pattern._TRAIL_CHARS",),
            "quick": ("_quick._QUICK_TRIM",),
            "walk": ("_make._make", "_url._escaped_end"),
            "C scan": ("scan.c:scan_decided_span", "quick.c:dk_quick", "make.c:dk_walk_make"),
        },
    ),
    Rule(
        name="backslash-escapes",
        says=(
            "a backslash before a letter, `@` or a quote ends a DOI; before other punctuation it "
            "is an escape"
        ),
        why=(
            "JSON's `\\n`, `\\u00e9`, `\\\"`, TeX's control words; Markdown's `\\(`, `\\)`, TeX's "
            "`\\_`, JSON's `\\/`"
        ),
        example='`"10.1000/abc\\nmore"`, `10.1016/0009-2614\\(84\\)85645-6`',
        found="`10.1000/abc`, `10.1016/0009-2614(84)85645-6`",
        vectors=(
            "json-escaped-quote-ends",
            "json-newline-escape-ends",
            "markdown-escaped-parentheses",
        ),
        corpus=("pre-arxivpy-1", "thread-manubot-133"),
        paths={
            "pattern": ("_pattern._DECIDE_IN_TEXT",),
            "quick": ("_quick._quick",),
            "walk": ("_run._backslash", "_run._grow", "_make._ESCAPED_PUNCTUATION"),
            "C scan": ("quick.c:dk_quick", "walk.c:stop_rule", "make.c:name_of"),
        },
    ),
    Rule(
        name="tex-macro-template",
        says="a TeX macro template is no DOI",
        why="class files build DOIs from macros",
        example="`10.1007/s\\@doiinfo-%`",
        found="nothing",
        vectors=("tex-macro-template-is-no-doi",),
        corpus=("latex-cccls-macro-nodoi",),
        paths={"walk": ("_walk._walk",), "C scan": ("walk.c:dk_walk",)},
    ),
    Rule(
        name="escaped-html-tag-ends",
        says="an HTML tag written with character references ends a DOI",
        why="wiki dumps and escaped HTML",
        example="`10.1126/x&lt;/ref&gt;`",
        found="`10.1126/x`",
        vectors=("wiki-escaped-ref-tag",),
        paths={"walk": ("_run._ESCAPED_TAG", "_run._opener"), "C scan": ("walk.c:deciding_rule",)},
    ),
    Rule(
        name="page-range-glued",
        says="a page range glued before a DOI does not hide it",
        why="publishers that print `45-10.xxxx/…`",
        example="`5: 45-10.1016/j.cell.2004.01.001`",
        found="`10.1016/j.cell.2004.01.001`",
        vectors=("page-range-glued",),
        paths={"walk": ("_walk._PAGE_RANGE_BEFORE",), "C scan": ("walk.c:dk_walk",)},
    ),
    Rule(
        name="link-without-scheme",
        says=(
            "a link without a scheme is a URL (`www.`, a host name and `/`, an absolute path, a "
            "`name=` before it); `\\|doi=` is a doi field; a `%2F` separator behind a DOI marker "
            "or an escaped start is decoded"
        ),
        why="links pasted without `https://`; wiki `doi=` fields with `%2F`",
        example="`www.example.com/doi/10.1000/xyz/abstract`, `\\|doi=10.1000%2Fxyz`",
        found="`10.1000/xyz`",
        vectors=("link-without-scheme", "host-without-scheme", "wiki-escaped-slash-in-doi-field"),
        paths={
            "quick": ("_url._in_url",),
            "walk": ("_url._URL_TOKEN", "_url._DOI_PARAMETER", "_walk._MARKER"),
            "C scan": (
                "url.c:dk_in_url_at",
                "url.c:dk_url_token",
                "url.c:host_at",
                "url.c:dk_rule_in_url",
            ),
        },
    ),
    Rule(
        name="escaped-stop-in-url",
        says=(
            'in a URL, an escape that decodes to whitespace, `"`, `\\|` or `` ` `` ends the DOI, '
            "and an escaped trailing punctuation mark or unbalanced closer is dropped"
        ),
        why="URLs copied with their surroundings",
        example="`https://doi.org/10.1000/abc%20def`, `…/10.1000/abc%29.`",
        found="`10.1000/abc`",
        vectors=("escaped-space-after-doi", "escaped-closer-after-doi"),
        paths={
            "quick": ("_url._url_name",),
            "walk": ("_url._escaped_end",),
            "C scan": ("scan.c:scan_decided_span", "quick.c:dk_quick", "make.c:dk_walk_make"),
        },
    ),
    Rule(
        name="url-files-and-views-cut",
        says=(
            "in a URL, `.pdf` or `.html` glued to the DOI, a file after the DOI (`/status.svg`, "
            "`/data.json`: never the whole suffix), Crossref API routes (`/agency`, `/transform`, "
            "`/works`) and a shields.io badge's colour are cut"
        ),
        why="publisher and API links, README badges",
        example="`…/papers/10.21105/joss.01807/status.svg`",
        found="`10.21105/joss.01807`",
        vectors=(
            "publisher-pdf-file",
            "crossref-api-routes",
            "crossref-api-prefix-route-is-no-doi",
            "file-after-doi-in-a-path",
            "joss-badge-status-image",
        ),
        corpus=(
            "meta-habanero-1",
            "log-habanero-funder-query",
            "log-habanero-prefix-nodoi",
            "log-betterbib-openretractions",
            "md-momepy-badges",
        ),
        paths={
            "quick": ("_url._url_name", "_quick._QUICK_URL_ODD", "_quick._in_url_written"),
            "walk": ("_url._in_url_length",),
            "C scan": (
                "scan.c:scan_decided_span",
                "quick.c:url_odd",
                "url.c:dk_rule_url_may_cut",
                "url.c:url_tail",
                "url.c:url_file",
                "url.c:dk_rule_url_name",
            ),
        },
    ),
    Rule(
        name="preprint-version-cut",
        says=(
            "a preprint server's version and file are cut: bioRxiv and medRxiv (`10.1101/` or "
            "bioRxiv's newer `10.64898/` + date + 6 to 8 digits), arXiv "
            "(`10.48550/arXiv.NNNN.NNNNN`)"
        ),
        why="their registered names have no version",
        example="`…/10.1101/2020.03.22.002386v2.full.pdf`",
        found="`10.1101/2020.03.22.002386`",
        vectors=(
            "biorxiv-version-and-file",
            "medrxiv-eight-digits",
            "arxiv-doi-version",
            "biorxiv-newer-prefix-version",
        ),
        corpus=("thread-mystmd-1173", "thread-reichlab-122-comment", "thread6-dystrack-12"),
        paths={
            "pattern": ("_pattern._NO_PREPRINT",),
            "quick": ("_make._versioned", "_quick._unversioned"),
            "walk": ("_make._make",),
            "C scan": ("quick.c:dk_quick", "make.c:dk_walk_make"),
        },
    ),
    Rule(
        name="semicolon-before-a-url",
        says="`;` before a URL separates",
        why="CSV rows",
        example="`…0942-7;https://zenodo.org/…`",
        found="`…0942-7`",
        vectors=("csv-url-field-fragment",),
        corpus=("csv-synergy-header-appenzeller-bannach",),
        paths={
            "pattern": ("_pattern._AFTER_SEPARATOR_ENDS",),
            "walk": ("_run._semicolon", "_run._NEXT_DOI"),
            "C scan": ("walk.c:semicolon", "walk.c:dk_separated", "walk.c:prefix_at"),
        },
    ),
    Rule(
        name="comma-ends",
        says="`,` ends a DOI, whatever follows it",
        why=(
            "CSV rows put every kind of field after a DOI (dates, flags, bracketed years, empty "
            "fields); none of the 1,840 labeled DOIs of the wild corpus's tuning part and the "
            "team's corpora holds a `,`, and Crossref's recommended pattern leaves it out"
        ),
        example=(
            "`a,10.1000/abc,,2019`, `10.1000/def,2019-01-02,x`, `https://doi.org/10.1000/jkl,b`"
        ),
        found="`10.1000/abc`, `10.1000/def`, `10.1000/jkl`",
        vectors=("comma-ends-a-doi", "csv-field-after-a-comma", "csv-number-field-after-a-comma"),
        corpus=("h5-csv-ocds-pubmed-40228", "csv2-mpea-1", "csv2-questbih-comma-1"),
        paths={
            "pattern": ("_pattern._DECIDE_IN_TEXT",),
            "quick": ("_quick._quick",),
            "walk": ("_run._comma",),
            "C scan": ("quick.c:dk_quick", "walk.c:deciding_rule"),
        },
    ),
    Rule(
        name="semicolon-before-a-letter",
        says="`;` right before a letter ends a DOI",
        why=(
            "lists run together; the 71 DOIs of the wild corpus with a `;` (SICI names' `CO;2-`) "
            "have a digit after it"
        ),
        example="`10.1016/0006-291x(75)90482-9;Delineation`",
        found="`10.1016/0006-291x(75)90482-9`",
        vectors=("semicolon-before-a-letter-ends-a-sici-check-does-not",),
        corpus=("csv-synergy-kwok-nagtegaal",),
        paths={
            "pattern": ("_pattern._AFTER_SEPARATOR_ENDS",),
            "walk": ("_run._semicolon", "_run._FIELD_AFTER"),
            "C scan": ("walk.c:semicolon", "walk.c:dk_separated", "walk.c:field_end"),
        },
    ),
    Rule(
        name="entrez-field-tag",
        says="`[doi]` glued to a DOI is a search field tag",
        why=(
            "NCBI Entrez queries (`term=10.…[doi]`); no DOI ends in one, while SICI names hold "
            "other bracketed parts"
        ),
        example="`…esearch.fcgi?term=10.1044/1092-4388(2010/09-0106)[doi]`",
        found="`10.1044/1092-4388(2010/09-0106)`",
        vectors=("entrez-field-tag-after-a-doi",),
        corpus=("thread2-oami-50-b",),
        paths={
            "pattern": ("_pattern._NO_FIELD_TAG",),
            "walk": ("_run._opener",),
            "C scan": ("walk.c:deciding_rule",),
        },
    ),
    Rule(
        name="url-path-views-and-doi-label",
        says=(
            "in a URL, `/badges` (a badge service's route) and `/meta` (IOP's) after the DOI are "
            "views; a `doi:` label in a URL's path (`/paper/DOI:10.…?fields=…`) leaves the DOI in "
            "the URL, where `?` ends it"
        ),
        why="links in issue threads",
        example=(
            "`…/article/10.1088/1361-6560/abcad7/meta`, "
            "`…/paper/DOI:10.21203/rs.3.rs-1270359/v1?fields=x`"
        ),
        found="`10.1088/1361-6560/abcad7`, `10.21203/rs.3.rs-1270359/v1`",
        vectors=(
            "badge-service-route-after-a-doi",
            "iop-meta-view-and-cnki-html-page",
            "doi-label-in-a-url-path",
        ),
        corpus=(
            "thread2-paperbadger-135-a",
            "thread3-anhir-4",
            "thread3-dropod-9013",
            "thread3-s2folks-71",
        ),
        tests=("test_extract.py::test_doi_labels_in_url_paths_agree_with_the_walk",),
        paths={
            "quick": ("_url._after_doi_path_label",),
            "walk": ("_url._in_url", "_url._in_url_length"),
            "C scan": ("quick.c:dk_quick", "url.c:dk_rule_in_url"),
        },
    ),
    Rule(
        name="semicolon-before-a-number-field",
        says=(
            "`;` before a number that fills a field (up to the next `,`, `;`, blank, quote or the "
            "end) ends a DOI; a SICI name's `CO;2` is no field"
        ),
        why=(
            "rows with a year, a count or an id after the DOI; a `;` then digits only in SICI "
            "names' `CO;2`"
        ),
        example="`10.1037/lhb0000427;2019;x`",
        found="`10.1037/lhb0000427`",
        vectors=(
            "csv-number-fields-and-a-timestamp",
            "sici-check-is-no-number-field",
            "csv-number-field-after-a-comma",
        ),
        corpus=(
            "csv2-retraction-1",
            "csv2-retraction-3",
            "html-astropy-1",
            "csv2-mpea-1",
            "csv2-questbih-comma-1",
        ),
        paths={
            "pattern": ("_pattern._NUMBER_FIELD",),
            "walk": ("_run._semicolon", "_run._separated"),
            "C scan": ("walk.c:semicolon",),
        },
    ),
    Rule(
        name="sici-check-break",
        says=(
            "a SICI name broken before its check character (`…CO;` at a line end, `2-P` on the "
            "next) is joined"
        ),
        why="pdftotext of biblatex examples",
        example="`…3.0.CO;⏎2-P.`",
        found="`…3.0.CO;2-P`",
        vectors=("sici-broken-before-its-check-character",),
        corpus=("h5-pdf-philosophy-sigfridsson",),
        paths={
            "pattern": ("_pattern._AFTER_SEPARATOR_ENDS",),
            "quick": ("_run._SICI_CHECK_BREAK",),
            "walk": ("_run._line_end",),
            "C scan": ("quick.c:dk_quick", "rules.c:dk_rule_rejoined"),
        },
    ),
    Rule(
        name="typeset-line-breaks",
        says=(
            "a DOI broken across lines, as typesetters break them: after `/` or `-` (a DOI's own "
            "hyphen stays); after `.`, `)` or `:`, and before a line that starts with `.`, when "
            "the next line's first word holds a digit and is no list number (`8. `, `2) `, `[5]`); "
            "right after `10.` behind a marker or in a URL; a soft hyphen (U+00AD) in a DOI is "
            "dropped and its break joined"
        ),
        why="pdftotext and PDFium output of real papers",
        example="`doi:10.18637/jss.⏎v042.c01.`, `doi:10.⏎1162/003465398557825`",
        found="`10.18637/jss.v042.c01`, `10.1162/003465398557825`",
        vectors=(
            "pdf-own-hyphen-at-break",
            "pdf-break-after-dot-before-letters",
            "pdf-break-before-dot",
            "pdf-break-after-parenthesis",
            "pdf-break-after-colon",
            "pdf-break-after-the-prefix-dot",
            "pdf-list-number-is-no-continuation",
            "pdf-reference-label-is-no-continuation",
            "pdf-soft-hyphen",
            "form-feed-before-a-url",
        ),
        corpus=(
            "pdf-sandwich-CL-1740",
            "pdf-oxnum-doc-4801",
            "pdf-sandwich-oop-829",
            "pdf-biblatex-ext-2427",
            "pdf-sandwich-CL-1789",
            "pdf-quantum-bibstyle-demo-143",
            "pdf-asmeconf-template-648",
            "pdf-raxml-manual-530",
        ),
        tests=("test_extract.py::test_a_stream_split_anywhere_finds_what_the_whole_text_holds",),
        paths={
            "pattern": ("_pattern._CANDIDATE_PATTERN",),
            "quick": ("_quick._LINE_END_AHEAD",),
            "walk": ("_run._continues", "_run._soft_hyphen", "_make._make"),
            "C scan": ("quick.c:dk_quick", "rules.c:dk_rule_rejoined"),
        },
    ),
    Rule(
        name="word-break-hyphen",
        says=(
            "U+2010 HYPHEN at a line end inside a DOI hyphenates a word: the break is joined and "
            "the hyphen dropped (inside a line it stays)"
        ),
        why="man pages rendered by groff; no DOI holds one",
        example="`doi:10.1093/bioinfor‐⏎matics/btr076`",
        found="`10.1093/bioinformatics/btr076`",
        vectors=("man-page-word-break-hyphen",),
        corpus=("mix4-man-samtools-baq-hyphen",),
        paths={"walk": ("_run._continues", "_make._HYPHEN_BREAK")},
    ),
    Rule(
        name="spaced-name",
        says=(
            "behind a DOI marker, a name spaced out after its `10.` is read with its blanks "
            "dropped: runs of letters and digits joined by `.`, `/`, `_`, `:` or `-` with a blank "
            "on either side or none; after a blank the next run starts with a small letter or a "
            "digit"
        ),
        why="the text layers of Chinese journals' PDFs",
        example="`doi:10. 15889 / j. issn. 1002 - 1302. 2016. 10. 042`",
        found="`10.15889/j.issn.1002-1302.2016.10.042`",
        vectors=("spaced-name-behind-a-doi-marker",),
        corpus=("webcjk-zhiwutong-1",),
        paths={"pattern": ("_pattern._CANDIDATE_PATTERN",), "walk": ("_walk._spaced",)},
    ),
    Rule(
        name="placeholder-is-no-doi",
        says=(
            "a placeholder where the suffix should be is no DOI: a run of `x` (3 or more) or `n` "
            "(4 or more) standing alone, a suffix starting `{{`, or a template variable `{name}`"
        ),
        why=(
            "templates, anonymized papers and scripts' URL templates; none of the 1,840 labeled "
            "DOIs of the wild corpus's tuning part and the team's corpora has a suffix that starts "
            "so"
        ),
        example=(
            "`10.1145/nnnnnnn.nnnnnnn`, `doi:10.1007/xxxx`, `…/10.1101/{ext_id}v{version}`; but "
            "`10.1000/xxx123`"
        ),
        found="nothing; `10.1000/xxx123`",
        vectors=("template-placeholders-are-no-dois",),
        corpus=(
            "h5-latex-llncsconf-placeholder-nodoi",
            "h5-pdf-anonacm-placeholder-nodoi",
            "thread2-wdi-169-b",
        ),
        paths={
            "pattern": ("_pattern._PLACEHOLDER_FIRST",),
            "quick": ("_pattern._IS_PLACEHOLDER",),
            "walk": ("_walk._walk", "_walk._spaced"),
            "C scan": ("quick.c:dk_quick", "rules.c:dk_rule_placeholder"),
        },
    ),
    Rule(
        name="number-path-is-no-doi",
        says=("a start right after a number's path (`114/10.6542/0.3`) outside a URL is no DOI"),
        why="program output",
        example="`114/10.654206/0.303620`",
        found="nothing",
        vectors=("number-path-is-no-doi",),
        corpus=("pdf-raxml-manual-3059",),
        paths={
            "quick": ("_quick._quick",),
            "walk": ("_walk._walk",),
            "C scan": ("quick.c:dk_quick", "walk.c:dk_walk"),
        },
    ),
    Rule(
        name="tex-percent-escapes",
        says=(
            "percent-escapes written with TeX's `\\%` (`\\%3C`, `\\%23`) are decoded, as in a URL"
        ),
        why=(
            "the author wrote the DOI URL-encoded (the `doi` package's `\\doi{…2-\\%23}`, BibTeX "
            "fields rendered to HTML); no labeled DOI of the wild corpus and the team's corpora "
            "holds a `%`"
        ),
        example="`doi:10.1002/(SICI)1097-4571(199101)42:1\\%3C7::AID-ASI2\\%3E3.0.CO;2-P`",
        found="`10.1002/(SICI)1097-4571(199101)42:1<7::AID-ASI2>3.0.CO;2-P`",
        vectors=("tex-escaped-percent-escapes",),
        corpus=("h5-html-abydos-bib-harman", "pdf-doipubmed-27"),
        paths={"walk": ("_make._TEX_PERCENT_ESCAPE",), "C scan": ("make.c:name_of",)},
    ),
    Rule(
        name="unclosed-opener-ends",
        says=(
            "a bracket opened in a DOI that nothing in it closes ends it (the rest of the run is "
            "scanned when it holds at most two starts of a DOI, else the scan goes on after it: "
            "linear)"
        ),
        why=(
            "as a closer belongs to a DOI only when an opener in it balances it; no labeled DOI of "
            "the corpora holds an unbalanced bracket; citation lines glue `[Article in Chinese]` "
            "to a DOI"
        ),
        example="`10.12173/j.issn.1004-5511.202311014.[Article in Chinese]`",
        found="`10.12173/j.issn.1004-5511.202311014`",
        vectors=("unclosed-opener-ends",),
        corpus=("cjk5-yxxz-2",),
        paths={
            "pattern": ("_pattern._suffix",),
            "walk": ("_run._grow", "_walk._read_on"),
            "C scan": ("walk.c:grow",),
        },
    ),
    Rule(
        name="shields-badge",
        says=(
            "a shields.io badge's message is a DOI after any label (`/badge/<label>-`, `%2F` for "
            "its slashes), its colour and image cut; a badge image named after the DOI "
            "(`…/badge/DOI/10.1093/x/btu153.svg`) loses only its extension"
        ),
        why="README badges",
        example=(
            "`img.shields.io/badge/Bioinformatics-10.1093%2Fbioinformatics%2Fbtr703-brightgreen.svg`"
        ),
        found="`10.1093/bioinformatics/btr703`",
        vectors=("shields-badge-any-label", "shields-badge-colour"),
        corpus=("refs5-artemis-1", "md-harmonypy-linkdefs"),
        paths={
            "quick": ("_quick._cut_in_url", "_quick._in_url_written"),
            "walk": ("_url._after_shields_badge", "_url._in_url_length"),
            "C scan": (
                "quick.c:dk_quick",
                "walk.c:dk_walk",
                "url.c:after_shields_badge",
                "url.c:badge_colour",
            ),
        },
    ),
    Rule(
        name="ligatures-as-letters",
        says=(
            "the Latin ligatures U+FB00–U+FB06 (`ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ`) in a DOI read as their letters "
            "(the span keeps them)"
        ),
        why=(
            "a PDF's text layer keeps the glyph set for `fi`; no DOI name holds one (compatibility "
            "characters: NFKC maps each to its letters)"
        ),
        example="`10.1016/j.jﬁneco.2012.05.017`",
        found="`10.1016/j.jfineco.2012.05.017`",
        vectors=("latin-ligatures-read-as-letters",),
        corpus=("thread5-zotero-193",),
        paths={
            "quick": ("_make._as_letters",),
            "walk": ("_make._make",),
            "C scan": ("quick.c:plain_ascii",),
        },
    ),
    Rule(
        name="escaped-comma-ends",
        says=(
            "a `,` written as a character reference (`&#44;`, `&#x2C;`, `&comma;`) ends a DOI as "
            "`,` does"
        ),
        why="references decide as the characters they stand for",
        example="`10.1000/abc&#44;def`",
        found="`10.1000/abc`",
        vectors=("escaped-comma-ends",),
        paths={"walk": ("_run._reference", "_run._comma"), "C scan": ("walk.c:reference",)},
    ),
    Rule(
        name="lost-hyphen-mended",
        says=(
            "a hyphen a PDF's text layer lost with a line break is put back where the identifier "
            "inside the name shows it, only when that identifier's check digit holds and exactly "
            "one of its hyphens is missing: an ISBN starting 978 or 979, or any ISBN in a Springer "
            "(10.1007) name (placed by the International ISBN Agency's ranges), the ISSN of an "
            "Elsevier PII (`S…(`) or a Wiley `(SICI)` name, a SICI's `AID-` and check character, a "
            "Springer Nature article id (`s` + 5, 3, 4 or 5 digits and a check character), an APA "
            "book number (`10762-000`). `text` keeps what was written"
        ),
        why=(
            "pdftotext joins lines and drops a hyphen at the break (`10.1007/3540-65193-4_29`); "
            "these publishers' names always carry the identifier hyphenated; none of the 5,041 "
            "labeled DOIs of the three corpora is changed (a test)"
        ),
        example=(
            "`doi:10.1007/978-3540-85064-9_8`, "
            "`10.1002/(SICI)1096987X(199803)19:4<377::AIDJCC1>3.0.CO;2-P`, "
            "`10.1007/s00249011-0700-9`"
        ),
        found=(
            "`10.1007/978-3-540-85064-9_8`, "
            "`10.1002/(SICI)1096-987X(199803)19:4<377::AID-JCC1>3.0.CO;2-P`, "
            "`10.1007/s00249-011-0700-9`"
        ),
        vectors=("lost-hyphen-isbn", "lost-hyphen-issn", "lost-hyphen-article-id"),
        corpus=(
            "pdf-acmart-sigconf-595",
            "pdf-acmart-sigconf-599",
            "pdf-apa6-869",
            "pdf-gost-2096",
            "pdf7-biblatex-jura2-2",
            "pdf-biblatex-spbasic-210",
            "pdf-gost-2761",
            "pdf-biblatex-ext-2010",
            "pdf-doipubmed-27",
            "pdf5-gromacs-3",
            "pdf-apa6-1030",
        ),
        tests=(
            "test_extract.py::test_mending_only_puts_hyphens_back_and_is_done_once",
            "test_extract_wild.py::test_mending_leaves_every_labeled_doi_as_it_is",
        ),
        paths={
            "pattern": ("_pattern._SUFFIX_GATE", "_pattern._NO_AID_SHORT"),
            "quick": ("_quick._quick",),
            "walk": ("_make._make",),
            "C scan": ("rules.c:may_mend", "rules.c:dk_rule_mended"),
        },
    ),
    Rule(
        name="springer-chapter-blank",
        says=(
            "a Springer book's name (10.1007/ and a whole ISBN, hyphenated by its ranges, its "
            "check digit holding), then a blank and 1 to 4 digits that end the line or come before "
            "punctuation and a blank: the digits are its chapter"
        ),
        why=(
            "LaTeX's OT1 fonts draw `_` as a rule, so a PDF's text layer has a blank for a "
            "Springer chapter's `_`"
        ),
        example="`doi:10.1007/978-3-319-21668-3 9.`",
        found="`10.1007/978-3-319-21668-3_9`",
        vectors=("chapter-underscore-as-blank",),
        corpus=("pdf-hotos17-759",),
        paths={
            "pattern": ("_pattern._SUFFIX_GATE",),
            "quick": ("_make._completed",),
            "walk": ("_make._completed",),
            "C scan": ("quick.c:dk_quick", "walk.c:dk_walk"),
        },
    ),
    Rule(
        name="oup-article-number",
        says=(
            "in an `academic.oup.com` URL, a third segment of digits after an OUP name "
            "(`10.1093/journal/code`) is OUP's article number"
        ),
        why="OUP's article pages put it after the DOI",
        example=(
            "`https://academic.oup.com/bioinformatics/article/doi/10.1093/bioinformatics/btaa025/5714742`"
        ),
        found="`10.1093/bioinformatics/btaa025`",
        vectors=("oup-article-number",),
        corpus=("thread6-purgedups-33-c1",),
        paths={
            "quick": ("_quick._cut_in_url", "_quick._in_url_written"),
            "walk": ("_url._in_url_length",),
            "C scan": ("quick.c:dk_quick", "url.c:dk_rule_url_may_cut", "url.c:dk_url_length"),
        },
    ),
)
