"""The doikit error tree.

Every error doikit raises on purpose is a :class:`DOIError`; the root itself is never
raised. A program catches the branch it can handle::

    * DOIError
      x InvalidDOI(ValueError)         .code .position .text .detail  not a DOI name
      x ResolutionError                .doi                           resolving gave no record
        + DOINotFound                                                 rc 100 / HTTP 404
        + HandleServerError            .status .response_code         rc 2, another code, 5xx
        + MalformedResponse                                           not the Handle JSON
        + TransportError                                              timeout, refused, …
      x HandleFormatError(ValueError)  .where .detail                 JSON not in the format
        + HandleWireError              .offset .field                 bytes not a Handle message

(``HandleFormatError`` and ``HandleWireError`` are :mod:`doikit.handle`'s; the rest are
:mod:`doikit`'s. tests/test_error_model.py holds this drawing to the classes.) Inside, one
private error, ``doikit._syntax.TextError`` (a bad escape or a name that is not one, at an
index of the text read), becomes InvalidDOI with the position in the caller's input.

``.code`` is a stable, machine-readable reason (one of :data:`ERROR_CODES`, typed
:data:`ErrorCode`); ``.position`` is the index into the text the caller passed (``None``
when no single character is at fault); the message says what is wrong and where, for a
person.
"""

from __future__ import annotations

from typing import Final, Literal

from doikit._syntax import RESOLVER_HOSTS_TEXT

#: Every value ``InvalidDOI.code`` can take: a closed set, stable across releases.
ErrorCode = Literal[
    "empty",
    "not-a-doi",
    "unsupported-url",
    "short-doi",
    "directory",
    "registrant",
    "missing-slash",
    "empty-suffix",
    "not-graphic",
    "percent-escape",
    "utf8",
    "not-a-uri",
]
#: What each :data:`ErrorCode` means (a test holds the two to the same codes).
ERROR_CODES: Final[dict[ErrorCode, str]] = {
    "empty": "there is no DOI name: the text, or the part after its presentation prefix, is empty",
    "not-a-doi": "the text is neither a DOI name nor a presentation of one",
    "unsupported-url": f"a URL whose host is not a DOI resolver ({RESOLVER_HOSTS_TEXT})",
    "short-doi": "a shortDOI alias (10/abc); it is not a DOI name and must be expanded",
    "directory": "the directory indicator is not 10 (a DOI name starts with '10.')",
    "registrant": "the registrant code is not ASCII digits with optional '.' subdivisions",
    "missing-slash": "there is no '/' between prefix and suffix",
    "empty-suffix": "the suffix after the '/' is empty",
    "not-graphic": "a code point that is not Unicode Graphic (control, format, separator "
    "other than Zs, surrogate, private use or unassigned)",
    "percent-escape": "a '%' that does not start a %XX escape, in a URI or URL form",
    "utf8": "percent-escapes that do not decode as UTF-8",
    "not-a-uri": "the text is not a doi: URI (for normalize_legacy_uri)",
}


class DOIError(Exception):
    """The root of every error doikit raises on purpose. Never raised itself."""


class InvalidDOI(DOIError, ValueError):  # noqa: N818 - the name the issue and users ask for
    """The text is not a valid DOI name in any presentation doikit accepts.

    >>> try:
    ...     DOI("10.10O0/123")
    ... except InvalidDOI as exc:
    ...     print(exc.code, exc.position)
    registrant 5
    """

    def __init__(self, text: str, code: ErrorCode, position: int | None, detail: str) -> None:
        self.text = text
        self.code: ErrorCode = code
        self.position = position
        self.detail = detail
        where = "" if position is None else f" at position {position}"
        super().__init__(f"{_short(text)} is not a valid DOI name{where}: {detail}")

    def __reduce__(self) -> tuple[type[InvalidDOI], tuple[str, ErrorCode, int | None, str]]:
        return (type(self), (self.text, self.code, self.position, self.detail))


def _short(text: str, limit: int = 80) -> str:
    """``repr`` of *text*, elided in the middle beyond *limit* characters."""
    if len(text) > limit:
        text = text[: limit // 2] + "…" + text[-limit // 2 :]
    return repr(text)


class ResolutionError(DOIError):
    """Resolving a DOI name did not give its record. ``.doi`` is the name asked for."""

    def __init__(self, doi: str, message: str) -> None:
        self.doi = doi
        super().__init__(message)

    def __reduce__(self) -> tuple[type[ResolutionError], tuple[str, str]]:
        return (type(self), (self.doi, str(self)))


class DOINotFound(ResolutionError):  # noqa: N818 - the name the issue and users ask for
    """The directory has no such DOI name (responseCode 100, HTTP 404)."""


class HandleServerError(ResolutionError):
    """The server answered with an error: rc 2 or another code, or an HTTP 5xx/4xx."""

    def __init__(
        self, doi: str, message: str, *, status: int = 0, response_code: int | None = None
    ) -> None:
        super().__init__(doi, message)
        self.status = status
        self.response_code = response_code

    def __reduce__(  # type: ignore[override]
        self,
    ) -> tuple[type[HandleServerError], tuple[str, str], dict[str, int | None]]:
        state = {"status": self.status, "response_code": self.response_code}
        return (type(self), (self.doi, str(self)), state)


class MalformedResponse(ResolutionError):  # noqa: N818 - the name the issue asks for
    """The reply is not the Handle REST API's JSON (an HTML page on a 200, bad JSON, …)."""


class TransportError(ResolutionError):
    """The request did not get an answer: a timeout, a refused or dropped connection."""


def needs_extra(what: str, extra: str) -> str:
    """The one message for a missing extra: what needs it, and how to install it. doikit is
    installed from a clone, or a wheel built from one, not from a package index.

    >>> print(needs_extra("reading PDF files", "pdf"))
    reading PDF files needs the pdf extra: pip install '.[pdf]' in doikit's clone (or 'WHEEL[pdf]')
    """
    how = f"pip install '.[{extra}]' in doikit's clone (or 'WHEEL[{extra}]')"
    return f"{what} needs the {extra} extra: {how}"
