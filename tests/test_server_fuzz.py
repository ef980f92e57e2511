"""Schemathesis fuzzes the published OpenAPI description against a real `doikit serve`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import positive_data_acceptance

from doikit.server._openapi import openapi

if TYPE_CHECKING:
    from schemathesis import Case

    from conftest import Server

schema = schemathesis.openapi.from_dict(openapi())


@schemathesis.serializer("application/x-ndjson")
def _ndjson(_ctx: object, value: object) -> bytes:
    # The deposit body is text (JSON Lines); the fuzzer's strings go as UTF-8.
    return (
        value.encode("utf-8", "surrogatepass")
        if isinstance(value, str)
        else json.dumps(value).encode()
    )


@pytest.fixture(scope="module")
def auth(server: Server) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.token}"}


@schema.parametrize()
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_follows_its_description(case: Case[Any], server: Server, auth: dict[str, str]) -> None:
    # Every check but positive_data_acceptance: a write can be schema-valid and still be
    # refused, because what a directory must refuse (a javascript: URL, an alias that is not
    # a DOI, a 10320/loc that is not XML, a name with a control character) is beyond JSON
    # Schema. Those refusals are tested one by one in test_server.py.
    # A case whose headers were made invalid on purpose is sent with them: replacing its
    # Authorization with the token would turn the negative case into a valid request.
    header = case.meta.components.get(ParameterLocation.HEADER) if case.meta else None
    negative = header is not None and header.mode == GenerationMode.NEGATIVE
    case.call_and_validate(
        base_url=server.url,
        headers={} if negative else auth,
        excluded_checks=[positive_data_acceptance],
    )


def test_the_published_description_is_this_one(server: Server) -> None:
    import httpx  # noqa: PLC0415

    assert httpx.get(server.url + "/openapi.json").json() == openapi()
