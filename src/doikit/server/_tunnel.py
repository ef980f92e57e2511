"""HANDLE.NET's HTTP interface on ``doikit serve``'s HTTP port: native Handle messages
POSTed as ``application/x-hdl-message`` to any path (handle-protocol.md §15), answered by
the native service of ``--handle-port`` (:mod:`._native`). Any other request goes on to the
app untouched."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from starlette.requests import Request
from starlette.responses import Response

from doikit.handle import (
    MAX_MESSAGE_LENGTH,
    NATIVE_MEDIA_TYPE,
    RC_PROTOCOL_ERROR,
    HandleWireError,
    TcpFramer,
)
from doikit.server._http import Refused, api_error
from doikit.server._writes import read_body

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from doikit.server._native import NativeService

#: The most native messages one HTTP request may carry.
MAX_HTTP_MESSAGES: Final = 16


class NativeTunnel:
    """ASGI middleware: a POST of native messages answered by :attr:`service` (set once the
    store is open, with ``--handle-port``); everything else to *inner*."""

    def __init__(self) -> None:
        self.inner: ASGIApp | None = None
        self.service: NativeService | None = None

    def wrap(self, inner: ASGIApp) -> NativeTunnel:
        """This middleware around *inner*."""
        self.inner = inner
        return self

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a native POST, or pass the request on."""
        assert self.inner is not None  # noqa: S101 - wrapped before use
        if (
            self.service is None
            or scope["type"] != "http"
            or scope["method"] != "POST"
            or _media_type(scope) != NATIVE_MEDIA_TYPE.encode()
        ):
            await self.inner(scope, receive, send)
            return
        try:
            response = await self.answer(Request(scope, receive), self.service)
        except Refused as exc:
            response = api_error(exc.response_code, message=exc.message, status=exc.status)
        await response(scope, receive, send)

    @staticmethod
    async def answer(request: Request, service: NativeService) -> Response:
        """The native messages of the body answered in the body of the response."""
        framer = TcpFramer()
        framer.feed(await read_body(request, MAX_MESSAGE_LENGTH + 20))
        out: list[bytes] = []
        for _ in range(MAX_HTTP_MESSAGES):
            try:
                unit = framer.next_unit()
            except HandleWireError as exc:
                raise Refused(RC_PROTOCOL_ERROR, f"the body is no native message: {exc}") from None
            if unit is None:
                break
            out += await service.answer_bytes(unit)
        return Response(b"".join(out), 200, media_type=NATIVE_MEDIA_TYPE)


def _media_type(scope: Scope) -> bytes:
    for name, value in scope["headers"]:
        if name == b"content-type":
            return bytes(value).partition(b";")[0].strip().lower()
    return b""
