"""Properties of the client's sans-IO parts: totality of what reads server text, bounds of
the retry policy, and the SQLite cache's round trip."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import doikit
from doikit.client import Cache
from doikit.client._policy import HostGate, RetryPolicy, parse_retry_after
from doikit.handle import HandleRecord, HandleValue
from doikit.handle.resolution import shortdoi_name
from test_handle import values


@given(st.text())
def test_retry_after_reading_is_total(text: str) -> None:
    seconds = parse_retry_after(text, now=1_700_000_000.0)
    assert seconds is None or seconds >= 0


@given(st.text())
def test_shortdoi_reading_is_total(text: str) -> None:
    try:
        handle = shortdoi_name(text)
    except doikit.InvalidDOI:
        return
    assert handle.startswith("10/")
    assert shortdoi_name(handle) == handle  # idempotent


@given(
    st.integers(0, 10),
    st.integers(0, 20),
    st.floats(0, 5),
    st.floats(0, 60),
    st.none() | st.floats(0, 120),
)
def test_retry_delays_stay_within_bounds(
    retries: int, attempt: int, backoff: float, max_backoff: float, retry_after: float | None
) -> None:
    delay = RetryPolicy(retries, backoff, max_backoff).delay(attempt, retry_after)
    if attempt >= retries or (retry_after is not None and retry_after > max_backoff):
        assert delay is None
        return
    assert delay is not None
    assert 0 <= delay <= max(min(max_backoff, backoff * 2**attempt), retry_after or 0)
    assert delay >= (retry_after or 0)


@given(st.floats(0.5, 1000), st.integers(1, 50))
def test_rate_limit_spaces_slots_evenly(rate: float, requests: int) -> None:
    gate = HostGate(rate_limit=rate)
    waits = [gate.wait(0.0) for _ in range(requests)]
    assert waits[0] == 0
    for before, after in itertools.pairwise(waits):
        assert abs(after - before - 1 / rate) < 1e-9


@settings(max_examples=50, deadline=None)
@given(st.lists(values, min_size=1, max_size=4, unique_by=lambda v: v.index))
def test_sqlite_cache_round_trip(vals: list[HandleValue]) -> None:
    record = HandleRecord("10.1000/x", tuple(vals))
    if min(v.ttl_seconds() for v in record.values) <= 0:
        return
    with tempfile.TemporaryDirectory() as tmp:  # Hypothesis runs many examples per test
        path = Path(tmp) / "cache.sqlite3"
        with Cache(path) as cache:
            cache.put("k", record)
        with Cache(path) as again:
            assert again.get("k") == record
