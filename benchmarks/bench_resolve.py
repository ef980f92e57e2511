"""Batch resolution against a local `doikit serve`, against a sequential urllib loop, same run.

    python benchmarks/bench_resolve.py [--records 10000] [--concurrency 64] [--rounds 2]

1. Fills a fresh SQLite store with N records (10.5555/bench-0 … N-1) and starts `doikit serve`
   on it (uvicorn, one worker), on this machine: client and server share its cores.
2. Resolves all N names, each way, in each round (the best round counts; the machine is
   shared):
   - the baseline: a sequential loop of plain `urllib.request.urlopen` calls to the REST API,
     reading each body (what python-doi's `validate_doi` does against doi.org);
   - `AsyncClient.resolve_many(concurrency=C)`, as shipped (aiohttp underneath), every
     answer parsed into a `HandleRecord`;
   - the same through httpx's own async transport, to show why the async client does not
     use it;
   - `resolve_many` again with every answer in the client's memory cache (cache hits).
3. Prints resolutions per second and the ratio to the urllib loop.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from bench_serve import fill, free_port
from doikit.client import AsyncClient, Cache
from doikit.server import new_token


def urllib_loop(base: str, names: list[str]) -> float:
    start = time.perf_counter()
    for name in names:
        with urllib.request.urlopen(f"{base}/api/handles/{name}") as reply:  # noqa: S310
            reply.read()
    return len(names) / (time.perf_counter() - start)


async def batch(client: AsyncClient, names: list[str], concurrency: int) -> float:
    start = time.perf_counter()
    done = 0
    async for item in client.resolve_many(names, concurrency=concurrency):
        if item.error is not None:
            raise item.error
        done += 1
    if done != len(names):
        raise RuntimeError(f"{done} of {len(names)} answered")
    return done / (time.perf_counter() - start)


async def clients(base: str, names: list[str], concurrency: int) -> dict[str, float]:
    out: dict[str, float] = {}
    async with AsyncClient(base, max_connections=concurrency) as client:
        out["resolve_many (aiohttp)"] = await batch(client, names, concurrency)
    transport = httpx.AsyncHTTPTransport(
        limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    )
    async with AsyncClient(base, transport=transport) as client:
        out["resolve_many (httpx transport)"] = await batch(client, names, concurrency)
    cache = Cache()
    async with AsyncClient(base, cache=cache) as client:
        await batch(client, names, concurrency)  # fill the cache
        out["resolve_many, cache hits"] = await batch(client, names, concurrency)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        store = f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"
        fill(store, args.records, new_token())
        port = free_port()
        doikit = str(Path(sys.executable).parent / "doikit")
        server = subprocess.Popen(
            [doikit, "serve", "--store", store, "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    urllib.request.urlopen(base + "/").read()  # noqa: S310
                    break
                except OSError:
                    time.sleep(0.1)
            names = [f"10.5555/bench-{i}" for i in range(args.records)]
            best: dict[str, float] = {}
            for _ in range(args.rounds):
                rates = {"urllib loop (baseline)": urllib_loop(base, names)}
                rates |= asyncio.run(clients(base, names, args.concurrency))
                for key, rate in rates.items():
                    best[key] = max(best.get(key, 0.0), rate)
        finally:
            server.terminate()
            server.wait(10)

    baseline = best["urllib loop (baseline)"]
    print(f"{args.records:,} DOIs, concurrency {args.concurrency}, best of {args.rounds}")
    for key, rate in best.items():
        print(f"{key:32} {rate:>10,.0f} /s  {rate / baseline:>7.1f}x")


if __name__ == "__main__":
    main()
