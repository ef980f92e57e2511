"""server/_uvicorn.py borrows members of uvicorn's HttpToolsProtocol (issue 30, point 5): the
installed uvicorn has every one, and one that lacks any gets uvicorn's own protocol and a
warning that says what is off, not a traceback mid-request."""

from __future__ import annotations

import pytest
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from doikit.server._uvicorn import GuardedProtocol, http_protocol, missing_members


def test_the_installed_uvicorn_has_every_member_borrowed() -> None:
    assert missing_members() == []
    assert http_protocol() == (GuardedProtocol, None)


@pytest.mark.parametrize("member", ["_unset_keepalive_if_required", "on_response_complete"])
def test_a_uvicorn_without_one_gets_its_own_protocol_and_a_warning(
    monkeypatch: pytest.MonkeyPatch, member: str
) -> None:
    monkeypatch.delattr(HttpToolsProtocol, member)  # (uvicorn's class: as a newer one may be)
    assert member in missing_members()
    protocol, warning = http_protocol()
    assert protocol == "httptools"
    assert warning is not None
    assert member in warning
    assert "deadlines" in warning
