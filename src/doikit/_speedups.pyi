# The optional C accelerator (src/doikit/_c/, docs/design.md): doikit._doi.DOIState in C.
from collections.abc import Callable, Iterable, Iterator
from re import Match
from typing import Self

class DOIState:
    def __new__(cls, text: object, /) -> Self: ...
    @classmethod
    def _known(cls, name: str) -> Self: ...
    @property
    def key(self) -> str: ...
    def __hash__(self) -> int: ...
    def __lt__(self, other: Self) -> bool: ...
    def __le__(self, other: Self) -> bool: ...
    def __gt__(self, other: Self) -> bool: ...
    def __ge__(self, other: Self) -> bool: ...

def configure(
    quick: Callable[[str], Match[str] | None],
    parse_rest: Callable[[str, Match[str] | None], str],
    fold: Callable[[str], str],
    as_text: Callable[[object], str],
    invalid_doi: type[Exception],
    hosts: tuple[str, ...],
    name_group: int = ...,
    /,
) -> None: ...
def configure_quick(**parts: object) -> None: ...
def parse(text: str, /) -> str: ...
def normalize(text: str, /) -> str: ...
def parse_many(texts: Iterable[object], report: bool, /) -> list[str | Exception | None]: ...
def normalize_many(texts: Iterable[object], report: bool, /) -> list[str | Exception | None]: ...
def arrow_many(
    validity: object,
    offsets: object,
    data: object,
    offset: int,
    length: int,
    wide: bool,
    key: bool,
    /,
) -> tuple[bytes, bytes, bytes, int]: ...

class Scan:
    def __new__(
        cls,
        finditer: Callable[[str, int], Iterator[Match[str]]],
        text: str,
        position: int,
        resume: list[int] | None,
        base: int,
        doi: type,
        found: type[tuple[object, ...]],
        decide: Callable[
            [str, Match[str], list[int] | None, int], tuple[tuple[object, ...] | None, int, int]
        ],
        walked: Callable[
            [str, Match[str], list[int] | None, int], tuple[tuple[object, ...] | None, int, int]
        ],
        tail: int,
        trail: str,
        url_odd: str,
        /,
    ) -> Self: ...
    def __iter__(self) -> Self: ...
    def __next__(self) -> tuple[object, ...]: ...
