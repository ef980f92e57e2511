"""Build tests/corpus/extract_corpus.jsonl: labeled snippets for extraction quality.

    python benchmarks/make_extract_corpus.py

Each snippet is written in a style people meet (APA, Vancouver, Chicago, IEEE reference
entries; Crossref "unstructured" references; BibTeX; RIS; HTML; Markdown; prose; PDF-to-text
line breaks; negatives). Its label is the list of DOI names the template put in, one per
occurrence, in order: what a careful human extracts. Labels never come from doikit's own
extractor. The output is deterministic (fixed seed) and committed; this script documents
how it was made.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Final

from doikit import DOI

OUT: Final = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "extract_corpus.jsonl"

# Real-shaped DOI names, the tricky ones included (SICI, parentheses, brackets, '+', a final
# ')', subdivided registrants, non-ASCII, '_' chapters, multi-slash suffixes).
NAMES: Final = [
    "10.1038/nature12373",
    "10.1093/nar/27.2.573",
    "10.1016/j.cell.2020.01.001",
    "10.1007/978-3-642-21311-3_5",
    "10.1002/(SICI)1097-4258(199906)14:2<123::AID-XYZ>3.0.CO;2-1",
    "10.1016/0009-2614(84)85645-6",
    "10.1061/(ASCE)0733-9429(2008)134:4(390)",
    "10.1641/0006-3568(2002)052[0044:PTLBTR]2.0.CO;2",
    "10.1021/ja047156+",
    "10.1371/journal.pone.0042793",
    "10.5061/dryad.q447c/1",
    "10.1103/PhysRevLett.116.061102",
    "10.1126/science.169.3946.635",
    "10.1145/3290605.3300857",
    "10.1109/CVPR.2016.90",
    "10.48550/arXiv.1706.03762",
    "10.5281/zenodo.8242099",
    "10.1000.10/123456",
    "10.978.86123/45678",
    "10.1080/14786442408634457",
    "10.1177/0146167297234003",
    "10.3389/fpsyg.2019.01234",
    "10.1186/s12859-019-2915-3",
    "10.1111/j.1469-185X.2011.00190.x",
    "10.1017/S0007114508019842",
    "10.1056/NEJMoa2034577",
    "10.7554/eLife.46574",
    "10.1101/2019.12.11.872580",
    "10.1088/1748-9326/11/4/048002",
    "10.1002/anie.201915678",
    "10.26321/Á.GUTIÉRREZ.ZARZA.02.2018.03",
    "10.1016/S0140-6736(20)30183-5",
    "10.1002/(SICI)1097-0142(19960401)77:7<1356::AID-CNCR20>3.0.CO;2-#",
]
AUTHORS: Final = [
    "Smith J, Lee K",
    "Garcia M.",
    "Nguyen, T., & Okafor, A.",
    "Müller, H.",
    "Ivanova E, Chen L, Patel R",
]
TITLES: Final = [
    "Deep residual learning",
    "A survey of persistent identifiers",
    "Effects of temperature on growth",
    "Structure of the ribosome",
    "Measuring citation impact",
]


def _url(name: str) -> str:
    return DOI(name).to_url()


def _entry(rng: random.Random, style: str, number: int) -> tuple[str, list[str]]:
    name = rng.choice(NAMES)
    author, title = rng.choice(AUTHORS), rng.choice(TITLES)
    year, volume, issue = rng.randrange(1990, 2026), rng.randrange(1, 99), rng.randrange(1, 12)
    pages = f"{rng.randrange(1, 900)}-{rng.randrange(900, 999)}"
    if style == "apa":
        text = f"{author} ({year}). {title}. Journal, {volume}({issue}), {pages}. {_url(name)}"
    elif style == "vancouver":
        text = f"{number}. {author}. {title}. J Sci. {year};{volume}({issue}):{pages}. doi:{name}"
    elif style == "chicago":
        text = (
            f"{author}. “{title}.” Journal {volume}, no. {issue} ({year}): {pages}. {_url(name)}."
        )
    elif style == "ieee":
        text = (
            f"[{number}] {author}, “{title},” J. Sci., vol. {volume}, pp. {pages}, {year}, "
            f"doi: {name}."
        )
    elif style == "crossref-unstructured":
        text = f"{author} {year} {title} J. Sci. {volume} {pages} DOI {name}"
    elif style == "bibtex":
        text = (
            f"@article{{key{number},\n  title = {{{title}}},\n  year = {{{year}}},\n"
            f"  doi = {{{name}}}\n}}"
        )
    elif style == "ris":
        text = f"TY  - JOUR\nTI  - {title}\nPY  - {year}\nDO  - {name}\nER  - "
    elif style == "html":
        shown = name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        text = f'<li>{author}. {title}. <a href="{_url(name)}">{shown}</a></li>'
        return text, [name, name]
    elif style == "markdown":
        text = f"- {author}, *{title}* ({year}). [{title}]({_url(name)})"
    elif style == "prose":
        other = rng.choice(NAMES)
        text = rng.choice(
            [
                f"As shown previously (doi:{name}), the effect holds; see also {_url(other)}.",
                f"The data are archived at {_url(name)} and described in doi:{other}.",
                f"We follow the method of {author} [DOI: {name}]. Compare "
                + DOI(other).to_url("https://dx.doi.org/"),
            ]
        )
        return text, [name, other]
    elif style == "pdf-line-break":
        # PDF-to-text breaks a long URL after a '/' or '-' of its path.
        url = _url(name)
        path = len("https://doi.org/")
        breaks = [i + 1 for i in range(path, len(url) - 1) if url[i] in "/-"]
        cut = rng.choice(breaks)
        text = f"{author} ({year}) {title}. J Sci {volume}:{pages}. {url[:cut]}\n{url[cut:]}"
        return text, [name]
    else:
        raise ValueError(style)
    return text, [name]


NEGATIVES: Final = [
    "Version 10.2.3 of the software was released in 2021.",
    "Route 10.0.0.1/24 through the gateway at 10.0.0.254.",
    "CiteSeerX 10.1.1.123.4567 is not a DOI.",
    "The ratio was 10.5/20 in the control group.",
    "See the shortDOI 10/abcd for the alias.",
    "Prices rose 10.2% in Q3; 10.3/4 of respondents agreed.",
    "Figure 10.1 shows the results; Table 10.2 lists them.",
    "ISBN 978-3-16-148410-0, pages 10-20.",
    "The doi: field was left empty.",
    "https://example.org/10.1000-not-a-doi/page",
    "Call 10.30 am, room 10.12/B.",
    "arXiv:1706.03762 [cs.CL]",
]

STYLES: Final = [
    "apa",
    "vancouver",
    "chicago",
    "ieee",
    "crossref-unstructured",
    "bibtex",
    "ris",
    "html",
    "markdown",
    "prose",
    "pdf-line-break",
]


def main() -> None:
    """Write the corpus."""
    rng = random.Random(26324)
    rows = []
    number = 0
    for style in STYLES:
        for _ in range(28):
            number += 1
            text, dois = _entry(rng, style, number)
            rows.append({"id": f"{style}-{number}", "style": style, "text": text, "dois": dois})
    rows.extend(
        {"id": f"negative-{index}", "style": "negative", "text": text, "dois": []}
        for index, text in enumerate(NEGATIVES, 1)
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} snippets, {sum(len(r['dois']) for r in rows)} DOIs -> {OUT}")


if __name__ == "__main__":
    main()
