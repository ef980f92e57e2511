"""HANDLE.NET's HTTP interface on ``doikit serve``'s HTTP port: native Handle messages
POSTed as ``application/x-hdl-message`` (handle-protocol.md §15), answered by the native
service of ``--handle-port`` (:mod:`._native`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from starlette.responses import Response

from doikit.handle import MAX_MESSAGE_LENGTH, RC_PROTOCOL_ERROR, HandleWireError, TcpFramer
from doikit.server._http import Refused
from doikit.server._writes import read_body

if TYPE_CHECKING:
    from starlette.requests import Request

    from doikit.server._native import NativeService

#: The media type of native messages over HTTP.
NATIVE_MEDIA_TYPE: Final = "application/x-hdl-message"
#: The most native messages one HTTP request may carry.
MAX_HTTP_MESSAGES: Final = 16


class NativeTunnel:
    """The route ``POST /<handle>``: the native messages of the body answered in the body
    of the response; without ``--handle-port`` (no :attr:`service`), 405."""

    def __init__(self) -> None:
        self.service: NativeService | None = None

    async def answer(self, request: Request) -> Response:
        """Answer one POST."""
        given = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if self.service is None or given != NATIVE_MEDIA_TYPE:
            detail = f"POST carries native Handle messages ({NATIVE_MEDIA_TYPE})"
            if self.service is None:
                detail += ", served when doikit serve is given --handle-port"
            raise Refused(RC_PROTOCOL_ERROR, detail, 405 if self.service is None else 415)
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
            out += await self.service.answer_bytes(unit)
        return Response(b"".join(out), 200, media_type=NATIVE_MEDIA_TYPE)
