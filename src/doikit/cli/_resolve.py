"""``doikit resolve``, ``doikit which-ra`` and ``doikit cite`` at work: the client on the
command line. Imported only when one of them runs, so the core commands never import httpx
or aiohttp (the commands themselves are declared in :mod:`doikit.cli._client`).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import IO, TYPE_CHECKING, Any, cast

import click

from doikit._doi import DOI
from doikit._errors import DOIError, InvalidDOI, ResolutionError
from doikit.cli._input import Input, inputs, problem, stdin_lines
from doikit.client import DEFAULT_BASE_URL, AsyncClient, Cache, Client
from doikit.handle import type_matches, value_to_json
from doikit.handle.resolution import resolution_step

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable

    from doikit.client import MetadataFormat, Resolved
    from doikit.handle import HandleRecord

#: How often the progress line is redrawn, in seconds.
_REDRAW = 0.2
#: Requests in flight to a proxy by default (the native resolver's default is the client's).
_HTTP_CONCURRENCY = 16
#: Seconds without an answer before ``doikit resolve`` says which resolver it waits for.
_PATIENCE = 3.0


def error_code(exc: BaseException) -> str:
    """A short, stable name for what went wrong: the InvalidDOI code or the class name."""
    return exc.code if isinstance(exc, InvalidDOI) else type(exc).__name__


class Progress:
    """``resolved N (E failed), R/s`` on stderr, redrawn in place: shown only on a terminal."""

    def __init__(self, stream: IO[str], label: str) -> None:
        self.stream = stream
        self.label = label
        self.shown = stream.isatty()
        self.done = 0
        self.failed = 0
        self.start = time.monotonic()
        self.drawn = 0.0

    def update(self, *, ok: bool) -> None:
        self.done += 1
        self.failed += not ok
        now = time.monotonic()
        if self.shown and now - self.drawn >= _REDRAW:
            self.drawn = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        rate = self.done / max(now - self.start, 1e-9)
        self.stream.write(f"\r{self.label} {self.done} ({self.failed} failed), {rate:,.0f}/s\x1b[K")
        self.stream.flush()

    def finish(self) -> None:
        if self.shown:
            self._draw(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()


def _first_text(record: HandleRecord, types: tuple[str, ...]) -> str | None:
    for value in record.values:
        if value.text is not None and (
            not types or any(type_matches(value.type, wanted) for wanted in types)
        ):
            return value.text
    return None


async def _lines(texts: tuple[str, ...]) -> AsyncIterator[Input]:
    """Each input: the arguments, or the lines of stdin (read in a thread, as every command
    reads them)."""
    if texts and texts != ("-",):
        for item in inputs(texts):
            yield item
        return
    loop = asyncio.get_running_loop()
    lines = stdin_lines()

    def following() -> Input | None:
        return next(lines, None)

    while True:
        got: Input | None = await loop.run_in_executor(None, following)
        if got is None:
            return
        yield got


class Waiting:
    """Says on stderr which resolver a run is waiting for when no answer has come for
    :data:`_PATIENCE` seconds (once per silence): a resolver that never answers is named
    within seconds, not after the timeouts and retries have run out."""

    def __init__(self, stream: IO[str], resolver: str) -> None:
        self.stream = stream
        self.resolver = resolver
        self.last = time.monotonic()
        self.said = False

    def answered(self) -> None:
        self.last = time.monotonic()
        self.said = False

    async def watch(self) -> None:
        while True:
            await asyncio.sleep(_PATIENCE / 4)
            silent = time.monotonic() - self.last
            if silent >= _PATIENCE and not self.said:
                self.said = True
                self.stream.write(
                    f"doikit: waiting for {self.resolver} (no answer for {silent:.0f} s)\n"
                )
                self.stream.flush()


class _Run:
    """One ``doikit resolve`` run: the output of each item and the exit status."""

    def __init__(
        self, client: AsyncClient, types: tuple[str, ...], *, as_json: bool, source: str
    ) -> None:
        self.client = client
        self.types = types
        self.as_json = as_json
        self.source = source
        self.status = 0
        self.numbers: dict[int, int] = {}  # input index -> line or argument number

    async def texts(self, texts: tuple[str, ...]) -> AsyncIterator[str]:
        index = 0
        async for item in _lines(texts):
            if item.error is not None:
                problem(item, item.error)
                self.status = 1
                continue
            self.numbers[index] = item.line
            index += 1
            yield item.text

    async def emit(self, item: Resolved) -> None:
        number = self.numbers.pop(item.index, item.index + 1)
        url = None
        error: BaseException | None = item.error
        if item.result is not None and not self.types:
            try:
                url = await self._url(item.result)
            except (DOIError, ValueError) as exc:
                error = exc
        if error is not None:
            self.status = 1
            click.echo(
                f"doikit: {self.source} {number}: {item.doi}: {error_code(error)}: {error}",
                err=True,
            )
        if self.as_json:
            click.echo(self._json(number, item, url, error))
        elif error is None and item.result is not None:
            text = url if not self.types else _first_text(item.result, self.types)
            click.echo(text if text is not None else "")

    async def _url(self, record: HandleRecord) -> str:
        step = resolution_step(record)
        return step if isinstance(step, str) else await self.client.url(step)

    @staticmethod
    def _json(number: int, item: Resolved, url: str | None, error: BaseException | None) -> str:
        out: dict[str, Any] = {"line": number, "input": item.doi}
        if item.result is not None:
            out["handle"] = item.result.handle
            if url is not None:
                out["url"] = url
            out["values"] = [value_to_json(v) for v in item.result.values]
        if error is not None:
            out["error"] = error_code(error)
            out["message"] = str(error)
        return json.dumps(out, ensure_ascii=False)


def run_resolve(
    texts: tuple[str, ...],
    *,
    resolver: str,
    types: tuple[str, ...],
    as_json: bool,
    concurrency: int | None,
    mailto: str | None,
    rate: float | None,
    cache_path: str | None,
    timeout: float,
    native: bool = False,
    root: str | None = None,
    certify: bool = False,
) -> int:
    """Resolve every input, printing one line per input in input order; the exit status.

    *native*: over the native Handle protocol, from *root* (``HOST:PORT``) or the Global
    Handle Registry; a private root that does not answer is one line and exit status 1.
    """
    source = "argument" if texts and texts != ("-",) else "line"
    if native:
        resolver = f"root {root}" if root else "the Global Handle Registry"
    elif concurrency is None:
        concurrency = _HTTP_CONCURRENCY

    async def main() -> int:
        cache = Cache(cache_path) if cache_path else None
        progress = Progress(sys.stderr, "resolved")
        waiting = Waiting(sys.stderr, resolver)
        watcher: asyncio.Future[None] | None = None
        try:
            try:
                client = AsyncClient(
                    resolver if not native else DEFAULT_BASE_URL,
                    timeout=timeout,
                    mailto=mailto,
                    rate_limit=rate,
                    cache=cache,
                    native=native,
                    root=root,
                    certify=certify,
                )
            except ValueError as exc:  # a --root that is not HOST:PORT
                click.echo(f"doikit: --root: {exc}", err=True)
                return 2
            async with client:
                if client.native is not None and root is not None:
                    # A private root that does not answer is one line, within the timeout.
                    try:
                        await client.native.root()
                    except ResolutionError as exc:
                        click.echo(f"doikit: {exc}", err=True)
                        return 1
                watcher = asyncio.ensure_future(waiting.watch())
                run = _Run(client, types, as_json=as_json, source=source)
                async for item in client.resolve_many(
                    run.texts(texts), concurrency=concurrency, ordered=True, types=types
                ):
                    waiting.answered()
                    await run.emit(item)
                    progress.update(ok=item.error is None)
                return run.status
        finally:
            if watcher is not None:
                watcher.cancel()
            progress.finish()
            if cache is not None:
                cache.close()

    return asyncio.run(main())


def _batches(texts: Iterable[str], size: int = 500) -> Iterable[list[str]]:
    batch: list[str] = []
    for text in texts:
        batch.append(text)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def run_which_ra(
    texts: Iterable[str], *, resolver: str, as_json: bool, mailto: str | None, timeout: float
) -> int:
    """Print ``name<TAB>RA`` (or the status) for each input; 1 when one has no RA."""
    status = 0
    with Client(resolver, timeout=timeout, mailto=mailto) as client:
        for batch in _batches(texts):
            for answer in client.which_ra(batch):
                ra = answer.get("RA")
                if ra is None:
                    status = 1
                if as_json:
                    click.echo(json.dumps(answer, ensure_ascii=False))
                else:
                    click.echo(f"{answer.get('DOI', '')}\t{ra or answer.get('status', '')}")
    return status


def run_cite(
    text: str,
    *,
    resolver: str,
    form: str,
    style: str | None,
    locale: str | None,
    mailto: str | None,
    timeout: float,
) -> None:
    """Print the metadata of one DOI in *form*."""
    with Client(resolver, timeout=timeout, mailto=mailto) as client:
        result = client.metadata(
            DOI(text), cast("MetadataFormat", form), style=style, locale=locale
        )
    if isinstance(result, dict):
        click.echo(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        click.echo(result.rstrip("\n"))


__all__ = ["run_cite", "run_resolve", "run_which_ra"]
