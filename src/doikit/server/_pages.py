"""The server's HTML: plain server-rendered pages that work without JavaScript.

Every piece of a DOI or record that reaches a page goes through :func:`html.escape`, because a
DOI name may legally hold ``<script>`` or ``"``.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from doikit._present import url_path
from doikit.handle import AdminData, data_to_json, format_time
from doikit.server._http import local_path

if TYPE_CHECKING:
    from doikit.handle import HandleRecord, HandleValue

# Readable on a phone: the table may scroll inside its own box, long codes break anywhere,
# the form's field shrinks to the screen.
_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
    ".scroll{overflow-x:auto}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top}"
    "code,h1{overflow-wrap:anywhere;word-break:break-word}input{max-width:100%;box-sizing:border-box}"
    "dl{margin:0}dt{font-weight:600}dd{margin:0 0 .3rem 0}"
    # Narrow screens: each value becomes a card, each cell a labelled line.
    "@media (max-width:40rem){#values,#values tbody,#values tr,#values td{display:block}"
    "#values thead{display:none}#values tr{border:1px solid #ccc;margin:0 0 .6rem}"
    "#values td{border:0}#values td::before{content:attr(data-label);font-weight:600;"
    "display:block;font-size:.8rem;color:#555}}"
)


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head>\n"
        f"<body>{body}</body></html>\n"
    )


def _form(value: str = "") -> str:
    return (
        '<form action="/" method="get" role="search">'
        '<label for="hdl">DOI name</label> '
        f'<input id="hdl" name="hdl" size="50" required value="{escape(value)}" '
        'placeholder="10.1000/182"> '
        '<button type="submit">Resolve</button></form>'
    )


def home(count: int | None, error: str | None = None, value: str = "") -> str:
    """The home page: a resolve form, and an error when a submitted name was invalid."""
    problem = f'<p role="alert" id="error">{escape(error)}</p>' if error else ""
    records = "" if count is None else f"<p>This directory holds {count} DOI names.</p>"
    return _page(
        "doikit DOI resolver",
        "<h1>Resolve a DOI name</h1>"
        + _form(value)
        + problem
        + records
        + "<p>Or use the Handle REST API: <code>/api/handles/{doi}</code>, and Which RA: "
        "<code>/ra/{doi}</code>. The JSON API is described at "
        '<a href="/openapi.json">/openapi.json</a>.</p>',
    )


def redirect(url: str) -> str:
    """The small body of a redirect, as the HANDLE.NET proxy sends it."""
    return (
        "<html><head><title>Handle Redirect</title></head>\n"
        f'<body><a href="{escape(url)}">{escape(url)}</a></body></html>'
    )


def not_found(name: str) -> str:
    """The 404 "DOI Not Found" page, with the trailing-slash hint of doi.org."""
    hint = ""
    if name.endswith("/") and len(name) > 1:
        bare = name.rstrip("/")
        hint = (
            "<p>The name ends with a slash, which is part of the name. Did you mean "
            f'<a id="without-slash" href="{escape(local_path(bare))}">{escape(bare)}</a>?</p>'
        )
    return _page(
        "Error: DOI Not Found",
        "<h1>DOI Not Found</h1>"
        f'<p>The DOI name <code id="name">{escape(name)}</code> is not in this directory.</p>'
        + hint
        + _form(name),
    )


def bad_request(detail: str) -> str:
    """A 400 page for a request whose path cannot be read."""
    return _page("Bad request", f'<h1>Bad request</h1><p id="error">{escape(detail)}</p>' + _form())


def record(rec: HandleRecord, *, note: str | None = None) -> str:
    """The record page (``noredirect``): every value in a table."""
    rows = []
    for value in rec.values:
        stamp = format_time(value.timestamp) if value.timestamp else ""
        ttl = value.ttl
        ttl_text = str(ttl) if isinstance(ttl, int) else format_time(int(ttl.timestamp()))
        rows.append(
            f'<tr><td data-label="Index">{value.index}</td>'
            f'<td data-label="Type">{escape(value.type)}</td>'
            f'<td data-label="Data">{_data_cell(value)}</td>'
            f'<td data-label="TTL">{escape(ttl_text)}</td>'
            f'<td data-label="Timestamp">{stamp}</td></tr>'
        )
    table = (
        '<div class="scroll"><table id="values"><thead><tr><th>Index</th><th>Type</th>'
        "<th>Data</th><th>TTL</th><th>Timestamp</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
        if rows
        else '<p id="novalues">No values match.</p>'
    )
    extra = f"<p>{escape(note)}</p>" if note else ""
    return _page(
        f"Values for {rec.handle}",
        f'<h1>Values for the DOI <code id="name">{escape(rec.handle)}</code></h1>'
        + extra
        + table
        + f'<p><a href="/api/handles/{escape(url_path(rec.handle))}">JSON</a></p>'
        + _form(),
    )


# The 12 HS_ADMIN permissions in the order their string writes them (most significant first).
_ADMIN_PERMISSIONS = (
    "list handles",
    "read values",
    "add admin",
    "remove admin",
    "modify admin",
    "add values",
    "remove values",
    "modify values",
    "delete derived prefix",
    "add derived prefix",
    "delete handle",
    "add handle",
)


def _data_cell(value: HandleValue) -> str:
    """A value's data for people: an admin as its handle, index and granted permissions, a
    group as its members, anything else as text (or its base64, for bytes)."""
    data = value.data
    if isinstance(data, AdminData):
        pairs = zip(_ADMIN_PERMISSIONS, data.permissions, strict=True)
        granted = [name for name, bit in pairs if bit == "1"]
        return (
            f'<dl class="admin"><dt>Administrator</dt><dd><code>{data.index}:'
            f"{escape(data.handle)}</code></dd><dt>Permissions "
            f"<code>{escape(data.permissions)}</code></dt>"
            f"<dd>{escape(', '.join(granted) or 'none')}</dd></dl>"
        )
    if isinstance(data, tuple):
        members = "".join(f"<li><code>{r.index}:{escape(r.handle)}</code></li>" for r in data)
        return f'<ul class="group">{members}</ul>'
    shown = data_to_json(data)["value"]
    return f"<code>{escape(shown if isinstance(shown, str) else str(shown))}</code>"


def error(title: str, detail: str) -> str:
    """A generic error page."""
    return _page(title, f"<h1>{escape(title)}</h1><p>{escape(detail)}</p>")
