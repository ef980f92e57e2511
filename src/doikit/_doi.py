"""The DOI name as a value: parse once, compare on a key, keep what the user wrote."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final, Literal, NamedTuple, Self, cast, final, overload

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from types import ModuleType

from doikit._errors import InvalidDOI
from doikit._present import (
    _QUICK,
    _QUICK_NAME,
    Encoding,
    check_name,
    parse,
    parse_rest,
    uri_part,
    url_path,
)
from doikit._safety import Finding, findings
from doikit._syntax import DOI_URI, RESOLVER_HOSTS, URN, Key, TextError, ascii_fold, fold

#: The resolver a name is presented under when none is given: the doi.org proxy. The one
#: spelling of it: URLs, the CLI's --resolver defaults and the client's base URL take it.
DEFAULT_RESOLVER: Final = "https://doi.org/"


class DOIState:
    """The state and identity of a DOI value: the name as written and its comparison key,
    with equality, hashing, ordering and ``str()`` on them. :class:`DOI` adds the rest.

    This is the pure-Python definition and the reference. When the optional C accelerator
    (``doikit._speedups``, from ``src/doikit/_c/``) is built, DOI stands on its C twin
    instead, which behaves the same (a property test holds the two to each other) and runs
    no Python frame for ``DOI(s)`` and ``d.key``; set ``DOIKIT_PURE_PYTHON=1`` to use this
    class anyway.
    """

    # Immutable as Python's own value classes are (Fraction, ipaddress, pathlib): every
    # public attribute is read-only, and the state lives in two class-private slots
    # (spelled as name mangling would in DOI, so that code outside the class can reach
    # them only on purpose). The class does not override __setattr__: that would make
    # every store, even the constructor's, a call through Python (about 110 ns per DOI, a
    # sixth of DOI(s) and a tenth of find_all; benchmarks/bench_names.py, bench_extract.py).
    __slots__ = ("_DOI__key", "_DOI__name")

    _DOI__name: str
    _DOI__key: str

    def __init__(self, text: str | DOI, /) -> None:
        # parse() inlined, as in normalize(): this is the hot path. The exact type check
        # is the cheap one; DOI values and str subclasses are rare.
        if type(text) is not str:
            text = _as_text(text)
        match = _QUICK(text)
        if match is not None:
            name = match[_QUICK_NAME]
            if name is not None and "%" not in name:
                self._DOI__name = name
                self._DOI__key = name.lower()  # the match is ASCII
                return
        name = parse_rest(text, match)
        self._DOI__name = name
        self._DOI__key = name.lower() if name.isascii() else fold(name)

    @classmethod
    def _known(cls, name: str) -> Self:
        """The value for *name*, which the caller has checked is a valid bare name."""
        self = _new_state(cls)
        self._DOI__name = name
        self._DOI__key = name.lower() if name.isascii() else fold(name)
        return self

    @property
    def key(self) -> str:
        """The comparison key: the name with ASCII letters lower-cased, nothing else.

        >>> DOI("10.1000/ABC-\\u212a").key   # KELVIN SIGN stays
        '10.1000/abc-\\u212a'
        """
        return self._DOI__key

    def __str__(self) -> str:
        return self._DOI__name

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DOIState):
            return NotImplemented
        return self._DOI__key == other._DOI__key

    def __hash__(self) -> int:
        return hash(self._DOI__key)

    def __lt__(self, other: Self) -> bool:
        if not isinstance(other, DOIState):
            return NotImplemented
        return self._DOI__key < other._DOI__key

    def __le__(self, other: Self) -> bool:
        if not isinstance(other, DOIState):
            return NotImplemented
        return self._DOI__key <= other._DOI__key

    def __gt__(self, other: Self) -> bool:
        if not isinstance(other, DOIState):
            return NotImplemented
        return self._DOI__key > other._DOI__key

    def __ge__(self, other: Self) -> bool:
        if not isinstance(other, DOIState):
            return NotImplemented
        return self._DOI__key >= other._DOI__key


_new_state = object.__new__


def _as_text(value: object) -> str:
    if isinstance(value, (str, DOI)):
        return str(value)
    msg = f"DOI() takes a str, not {type(value).__name__}"
    raise TypeError(msg)


#: Whether the environment asks for the pure-Python build (``DOIKIT_PURE_PYTHON=1``).
PURE_PYTHON_WANTED: Final = os.environ.get("DOIKIT_PURE_PYTHON", "") not in ("", "0")


def _accelerator() -> ModuleType | None:
    """The C accelerator when it is built and wanted, else None (pure Python)."""
    try:
        from doikit import _speedups  # noqa: PLC0415
    except ImportError:
        return None
    # Configured even when not wanted, so that the tests can hold the two to each other.
    _speedups.configure(_QUICK, parse_rest, fold, _as_text, InvalidDOI, RESOLVER_HOSTS, _QUICK_NAME)
    if PURE_PYTHON_WANTED:
        return None
    return _speedups


_SPEEDUPS: Final = _accelerator()
if TYPE_CHECKING:
    _Base = DOIState
else:
    _Base = DOIState if _SPEEDUPS is None else _SPEEDUPS.DOIState  # the same, in C

#: Whether DOI stands on the C accelerator, and the build's name (``doikit --version``).
ACCELERATED: Final = _SPEEDUPS is not None
BUILD: Final = "C accelerator" if ACCELERATED else "pure Python"


@final
class DOI(_Base):
    """A DOI name. Immutable; compares by ASCII-only case folding (004 ch. 3, Handbook 2.4).

    ``DOI(text)`` reads every presentation (bare, ``doi:``, ``info:doi/``, ``hdl:``,
    ``urn:doi:`` and resolver URLs); ``str()`` gives the name exactly as written.

    >>> d = DOI("https://doi.org/10.1000/ABC%23x")
    >>> str(d), d.prefix, d.suffix, d.key
    ('10.1000/ABC#x', '10.1000', 'ABC#x', '10.1000/abc#x')
    >>> DOI("https://doi.org/10.1000/ABC") == DOI("doi:10.1000/abc")
    True
    >>> DOI("10.1000/É") == DOI("10.1000/é")   # only ASCII folds
    False

    :raises InvalidDOI: for text that is not a DOI name in any presentation.
    """

    # The state, key, str(), equality and order are DOIState's (above).
    __slots__ = ()

    @classmethod
    def from_parts(cls, *, prefix: str, suffix: str) -> DOI:
        """Build a DOI name from its prefix and suffix, taken literally.

        >>> DOI.from_parts(prefix="10.1000", suffix="a/b")
        DOI('10.1000/a/b')

        :raises InvalidDOI: when the prefix or suffix is not valid.
        """
        name = f"{prefix}/{suffix}"
        if "/" in prefix:
            raise InvalidDOI(name, "registrant", prefix.index("/"), "the prefix contains '/'")
        try:
            check_name(name)
        except TextError as exc:
            raise InvalidDOI(name, exc.code, exc.index, exc.detail) from None
        return cls._known(name)

    # --- the parts ---------------------------------------------------------------------
    @property
    def prefix(self) -> str:
        """The prefix: directory indicator ``10``, '.', registrant code (``10.1000``)."""
        return self._DOI__name[: self._DOI__name.index("/")]

    @property
    def suffix(self) -> str:
        """The suffix, everything after the first '/' (it may hold more '/')."""
        return self._DOI__name[self._DOI__name.index("/") + 1 :]

    @property
    def registrant(self) -> str:
        """The registrant code, after ``10.`` (``1000``, or ``1000.10`` when subdivided)."""
        return self._DOI__name[3 : self._DOI__name.index("/")]

    # --- value semantics ---------------------------------------------------------------
    def __repr__(self) -> str:
        if self._DOI__name != self._DOI__name.strip():
            return f"DOI.from_parts(prefix={self.prefix!r}, suffix={self.suffix!r})"
        return f"DOI({self._DOI__name!r})"

    def __reduce__(self) -> tuple[type[DOI], tuple[str]]:
        # The doi URI (004 ch. 2) is a stable, lossless spelling of any name, even one
        # that starts or ends with a space; a plain name is stored as itself.
        if self._DOI__name == self._DOI__name.strip():
            return (DOI, (self._DOI__name,))
        return (DOI, (self.to_uri(),))

    def __copy__(self) -> DOI:
        return self

    def __deepcopy__(self, memo: object) -> DOI:
        return self

    # --- presentations -----------------------------------------------------------------
    def to_url(
        self, resolver: str = DEFAULT_RESOLVER, *, encoding: Encoding = "recommended"
    ) -> str:
        """The name as a resolver URL, by the DOI Handbook's encoding rules (seed 000).

        ``encoding="mandatory"`` escapes ``% " # SPACE ?``; ``"recommended"`` (the default)
        also ``< > { } ^ [ ] ` | \\ +``. Control and non-ASCII characters always become
        UTF-8 percent-escapes with upper-case hex, and one slash of a ``/./`` or ``/../``
        segment is escaped so that no browser or URL library collapses it.
        ``DOI(d.to_url()) == d`` and ``str()`` is unchanged, for every name.

        >>> DOI("10.1002/(SICI)1097-0142(19960401)77:7<1356::AID-CNCR20>3.0.CO;2-#").to_url()
        'https://doi.org/10.1002/(SICI)1097-0142(19960401)77:7%3C1356::AID-CNCR20%3E3.0.CO;2-%23'
        >>> DOI("10.1000/café").to_url("http://localhost:8000")
        'http://localhost:8000/10.1000/caf%C3%A9'

        :raises ValueError: for an *encoding* other than the two above.
        """
        if not resolver.endswith("/"):
            resolver += "/"
        return resolver + url_path(self._DOI__name, encoding)

    def to_uri(self) -> str:
        """The doi URI of the 2024 DOI URI Scheme (004 ch. 2), exactly: unreserved,
        sub-delims, ':' and '@' kept, every other UTF-8 byte percent-encoded, including a
        '/' inside the suffix.

        >>> DOI("10.26321/Á.GUTIÉRREZ.ZARZA.02.2018.03").to_uri()
        'doi:10.26321/%C3%81.GUTI%C3%89RREZ.ZARZA.02.2018.03'
        """
        return f"{DOI_URI}{uri_part(self.prefix)}/{uri_part(self.suffix)}"

    def to_urn(self) -> str:
        """The URN form of seed 000: a ':' in place of the first '/', other slashes
        ``%2F`` (the rest encoded as in :meth:`to_uri`). Resolvable as resolver + URN.

        >>> DOI("10.123/456ABC/zyz").to_urn()
        'urn:doi:10.123:456ABC%2Fzyz'
        """
        return f"{URN}{self.prefix}:{uri_part(self.suffix)}"

    def warnings(self) -> tuple[Finding, ...]:
        """Presentation-safety findings (004 ch. 6, UTR #36), in order of position.

        >>> [f.code for f in DOI("10.17072/1995\\u20104190").warnings()]
        ['confusable']
        """
        return findings(self._DOI__name, self._DOI__name.index("/"))


class Form(NamedTuple):
    """A written form of a DOI name: a row of :data:`FORMS`."""

    #: Writes a DOI in this form: ``write(doi, resolver, encoding)``; the resolver and the
    #: encoding matter to ``url`` alone.
    write: Callable[[DOI, str, Encoding], str]
    #: What the form is, for help texts.
    doc: str
    #: What the presentation starts with (``url``'s: the default resolver); None for the
    #: name itself and for its key, which are not presentations.
    head: str | None
    #: Whether a shortDOI (``10/abc``) has a spelling in this form: its head, then itself.
    short: bool


#: The written forms of a DOI name, by the name ``--to`` takes: the one table that the CLI's
#: choices (``convert`` offers every form, ``extract`` those a shortDOI has too), its
#: outputs (``inspect`` shows every presentation) and its help read. A new form is a row
#: here and its line in docs/cli.md.
FORMS: Final[dict[str, Form]] = {
    "bare": Form(lambda doi, _r, _e: str(doi), "the name as written", None, short=True),
    "url": Form(
        lambda doi, resolver, encoding: doi.to_url(resolver, encoding=encoding),
        "a resolver URL",
        DEFAULT_RESOLVER,
        short=True,
    ),
    "uri": Form(lambda doi, _r, _e: doi.to_uri(), "the doi URI", DOI_URI, short=True),
    "urn": Form(lambda doi, _r, _e: doi.to_urn(), "the URN", URN, short=False),
    "key": Form(lambda doi, _r, _e: doi.key, "the comparison key", None, short=False),
}


# The DOI for a name the caller has checked is valid (the extractor's decided paths).
valid_doi = DOI._known  # noqa: SLF001


def validate(text: str) -> str:
    """Check *text* (in any presentation) and return the bare DOI name.

    >>> validate("https://doi.org/10.1000/182")
    '10.1000/182'

    :raises InvalidDOI: when it is not a DOI name.
    """
    return parse(text)


def is_valid(text: object) -> bool:
    """Whether *text* is a DOI name in some presentation. Never raises.

    >>> is_valid("10.1000/182"), is_valid("10/abc"), is_valid(None)
    (True, False, False)
    """
    if not isinstance(text, str):
        return False
    try:
        parse(text)
    except InvalidDOI:
        return False
    return True


def normalize(text: str) -> Key:
    """The comparison key of the DOI name in *text*: bare, ASCII letters lower-cased.

    Two texts name the same DOI exactly when their keys are equal.

    >>> normalize("DOI: 10.1000/ABC")
    '10.1000/abc'

    :raises InvalidDOI: when it is not a DOI name.
    """
    match = _QUICK(text)  # parse() inlined: this is the hot path
    if match is not None:
        name = match[_QUICK_NAME]
        if name is not None and "%" not in name:
            return ascii_fold(name)  # the match is ASCII
    name = parse_rest(text, match)
    return ascii_fold(name) if name.isascii() else fold(name)


# With the C accelerator, parse() (behind validate() and is_valid()) and normalize() are the
# same functions without a Python frame: the compiled pattern, then the same Python parser
# (tests/test_speedups.py holds them to _present.parse and to normalize above).
_py_normalize: Final = normalize
if not TYPE_CHECKING and _SPEEDUPS is not None:
    parse = _SPEEDUPS.parse
    normalize = _SPEEDUPS.normalize


#: What the bulk functions give for an invalid text: ``"none"`` (``None``) or ``"report"``
#: (the :class:`InvalidDOI` itself, with its code, position and message).
Errors = Literal["none", "report"]


def _bulk(texts: Iterable[object], errors: str, *, key: bool) -> list[str | InvalidDOI | None]:
    """normalize_many (*key*) or parse_many: the accelerator's bulk loop
    (``_c/python/bulk.c``), or its pure-Python twin below."""
    if errors not in ("none", "report"):
        msg = f"errors must be 'none' or 'report', not {errors!r}"
        raise ValueError(msg)
    report = errors == "report"
    if _SPEEDUPS is not None:
        loop = _SPEEDUPS.normalize_many if key else _SPEEDUPS.parse_many
        return cast("list[str | InvalidDOI | None]", loop(texts, report))
    one = normalize if key else parse
    out: list[str | InvalidDOI | None] = []
    for index, text in enumerate(texts):
        if text is None:
            out.append(None)
            continue
        if not isinstance(text, str):
            msg = f"item {index} is a {type(text).__name__}, not a str or None"
            raise TypeError(msg)
        try:
            out.append(one(text))
        except InvalidDOI as exc:
            out.append(exc if report else None)
    return out


@overload
def normalize_many(
    texts: Iterable[str | None], *, errors: Literal["none"] = "none"
) -> list[str | None]: ...
@overload
def normalize_many(
    texts: Iterable[str | None], *, errors: Literal["report"]
) -> list[str | InvalidDOI | None]: ...
def normalize_many(
    texts: Iterable[str | None], *, errors: Errors = "none"
) -> list[str | None] | list[str | InvalidDOI | None]:
    """:func:`normalize` of every text, in one call: a column of names at once.

    ``None`` stays ``None`` (a missing value); an invalid text gives ``None``, or with
    ``errors="report"`` its :class:`InvalidDOI`. Each answer is exactly what
    :func:`normalize` gives for that text (a Hypothesis property holds them equal, on both
    builds); with the C accelerator the loop runs in C.

    >>> normalize_many(["doi:10.1000/ABC", None, "10/abc", "https://doi.org/10.1000%2F182"])
    ['10.1000/abc', None, None, '10.1000/182']
    >>> normalize_many(["10.10O0/1"], errors="report")[0].code
    'registrant'

    :raises TypeError: for an item that is neither a ``str`` nor ``None``.
    """
    return _bulk(texts, errors, key=True)


@overload
def parse_many(
    texts: Iterable[str | None], *, errors: Literal["none"] = "none"
) -> list[str | None]: ...
@overload
def parse_many(
    texts: Iterable[str | None], *, errors: Literal["report"]
) -> list[str | InvalidDOI | None]: ...
def parse_many(
    texts: Iterable[str | None], *, errors: Errors = "none"
) -> list[str | None] | list[str | InvalidDOI | None]:
    """:func:`validate` of every text, in one call: the bare DOI names of a column.

    As :func:`normalize_many`, with the bare name (as written, case kept) for each text.

    >>> parse_many(["DOI: 10.1000/ABC", "not a doi", None])
    ['10.1000/ABC', None, None]
    """
    return _bulk(texts, errors, key=False)
