"""Check the links of the built documentation (``python scripts/doclinks.py HTML_DIR``).

Every ``href`` and ``src`` of every page must land inside the built site: the file exists and,
when the link names a fragment, the target page has an element with that id. A link that
points outside (any scheme: ``https:``, ``mailto:``, …) is an error too: the docs explain the
standards in the project's own words and nothing in them depends on another site (issue 16).
Text that merely shows a URL (examples, code) is not a link and is not checked.

Prints one line per broken link (page, link, why) and exits 1 when there is any.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

_LINKING = {"a": "href", "link": "href", "img": "src", "script": "src", "iframe": "src"}


class _Page(HTMLParser):
    """The ids a page defines and the links it makes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if named.get("id"):
            self.ids.add(named["id"] or "")
        if tag == "a" and named.get("name"):
            self.ids.add(named["name"] or "")
        wanted = _LINKING.get(tag)
        if wanted and named.get(wanted) is not None:
            self.links.append(named[wanted] or "")


def _read(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def broken_links(site: Path) -> list[str]:
    """Every broken link of the site under *site*, as 'page: link: why'."""
    pages: dict[Path, _Page] = {p.resolve(): _read(p) for p in sorted(site.rglob("*.html"))}
    problems = []
    for path, page in pages.items():
        where = path.relative_to(site.resolve())
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                problems.append(f"{where}: {link}: points outside the documentation")
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if not target.is_relative_to(site.resolve()) or not target.exists():
                problems.append(f"{where}: {link}: no such file")
                continue
            if (
                parts.fragment
                and target.suffix == ".html"
                and unquote(parts.fragment) not in pages[target].ids
            ):
                problems.append(f"{where}: {link}: no such anchor in {target.name}")
    return problems


def main(argv: list[str]) -> int:
    """Check the site named by *argv*; the exit status (0 clean, 1 broken links, 2 usage)."""
    if len(argv) != 1:
        print("usage: python scripts/doclinks.py HTML_DIR", file=sys.stderr)
        return 2
    site = Path(argv[0])
    if not (site / "index.html").is_file():
        print(f"doclinks: {site} holds no built documentation (no index.html)", file=sys.stderr)
        return 2
    problems = broken_links(site)
    for line in problems:
        print(f"doclinks: {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
