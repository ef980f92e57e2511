"""Sessions of the native Handle protocol (handle-protocol.md §12), which CNRI's tools open
before any change: SESSION_SETUP by Diffie-Hellman (mode 4), then requests MAC'd with the
session key (``HS_MAC``, HMAC-SHA256 over :func:`~doikit.handle.signed_content`, with a
counter that must grow), SESSION_TERMINATE.

The identity a session is for is proved once, by the challenge its first change gets; from
then on the session's requests are that identity's. At most :data:`MAX_SESSIONS` are open;
one lasts what its client asked, at most :data:`MAX_TIMEOUT` seconds.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from doikit.handle import (
    KEY_EXCHANGE_DH,
    RC_INVALID_SESSIONSETUP_REQUEST,
    DHPublicKey,
    HandleWireError,
    public_key_from_bytes,
    public_key_to_bytes,
    signed_content,
)

if TYPE_CHECKING:
    from doikit.handle import Message, SessionSetupRequest
    from doikit.server._auth import Caller

MAX_SESSIONS: Final = 10_000
MAX_TIMEOUT: Final = 24 * 3600
#: The session key algorithm doikit answers with: AES (3), CNRI's default.
AES: Final = 3


@dataclass(slots=True)
class Session:
    """An open session: its key, the identity it was opened for, and, once proved, the
    caller its requests act as."""

    key: bytes
    identity: tuple[int, str]
    expires: float
    counter: int = 0
    caller: Caller | None = None


def session_key(shared: int, p: int) -> bytes:
    """The AES session key from the Diffie-Hellman shared value, as CNRI derives it: the
    value's big-endian bytes at the length of *p*, leading zero bytes stripped while more
    than 32 remain, the first 32."""
    raw = shared.to_bytes((p.bit_length() + 7) // 8, "big")
    while len(raw) > 32 and raw[0] == 0:
        raw = raw[1:]
    return raw[:32]


class Sessions:
    """The open sessions, by session id."""

    def __init__(self) -> None:
        self._open: dict[int, Session] = {}

    def setup(self, request: SessionSetupRequest, session_id: int) -> bytes | int:
        """Open session *session_id* for *request*: the response's data (``int4`` AES +
        this side's ``DH_PUB_KEY``), or the response code refusing it."""
        exchange = request.exchange
        if request.key_exchange_mode != KEY_EXCHANGE_DH or not isinstance(exchange, bytes):
            return RC_INVALID_SESSIONSETUP_REQUEST  # only Diffie-Hellman, as DO-IRP has it
        try:
            theirs = public_key_from_bytes(exchange)
        except HandleWireError:
            return RC_INVALID_SESSIONSETUP_REQUEST
        if not isinstance(theirs, DHPublicKey):
            return RC_INVALID_SESSIONSETUP_REQUEST
        p, g, y = theirs.p, theirs.g, theirs.y
        if not 1024 <= p.bit_length() <= 8192 or not 1 < g < p - 1 or not 1 < y < p - 1:
            return RC_INVALID_SESSIONSETUP_REQUEST
        mine = secrets.randbelow(p - 3) + 2
        key = session_key(pow(y, mine, p), p)
        now = time.monotonic()
        for old in [sid for sid, s in self._open.items() if s.expires < now]:
            del self._open[old]
        if len(self._open) >= MAX_SESSIONS:
            del self._open[next(iter(self._open))]
        timeout = min(max(request.timeout, 60), MAX_TIMEOUT)
        identity = (request.identity_index, request.identity_handle)
        self._open[session_id] = Session(key, identity, now + timeout)
        blob = public_key_to_bytes(DHPublicKey(p=p, g=g, y=pow(g, mine, p)))
        return AES.to_bytes(4, "big") + blob

    def get(self, session_id: int) -> Session | None:
        """The open session *session_id*, or ``None`` (never opened, ended, expired)."""
        session = self._open.get(session_id)
        if session is not None and session.expires < time.monotonic():
            del self._open[session_id]
            return None
        return session

    def end(self, session_id: int) -> None:
        """End a session."""
        self._open.pop(session_id, None)

    @staticmethod
    def authentic(session: Session, message: Message) -> bool:
        """Whether *message* carries the session's MAC with a counter above every one seen
        (a replay is refused); the counter is then taken."""
        credential = message.credential
        if credential is None or credential.type != "HS_MAC":
            return False
        if credential.digest_alg.upper() not in ("HMAC-SHA256", "HMACSHA256"):
            return False
        if credential.counter <= session.counter:
            return False
        try:
            content = signed_content(message, credential.counter)
        except HandleWireError:
            return False
        want = hmac.new(session.key, content, hashlib.sha256).digest()
        if not hmac.compare_digest(want, credential.signature):
            return False
        session.counter = credential.counter
        return True
