"""doikit serve under load, against a bare ASGI app on the same server in the same run.

    python benchmarks/bench_serve.py [--records 1000000] [--duration 10] [--connections 32]

1. Fills a fresh SQLite store with N records (10.5555/bench-0 … N-1) through the store API,
   each as a Handle client writes one: a URL and an HS_ADMIN value.
2. Starts `doikit serve` on it (one worker, uvloop, uvicorn's httptools protocol with doikit's
   limits, which writes the hot reads' replies itself), the same app on uvicorn's plain
   httptools protocol (no limits, every reply through ASGI), and the same uvicorn serving a
   bare ASGI app that returns a constant JSON body.
3. Loads each with wrk (Debian's package; one thread, C connections, a Lua script asking for
   random existing names): the bare app, GET /api/handles/{doi}, and the redirect GET /{doi}.
   Each target runs twice, interleaved, and the better run counts (the machine is shared).
4. Times reverse lookups (GET /hrls/handles?URL=…) among the N records: exact URLs and
   prefixes with '*', one at a time, median and p99.
5. Deposits M records with `doikit deposit` (CSV) and reports records/s.

Prints requests/s, the ratio to the bare app, and p50/p99 latency from wrk --latency.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from doikit import DOI
from doikit.handle import AdminData, HandleValue, values_to_json
from doikit.server import Row, hash_token, new_token, open_store

BARE_APP = """
BODY = b'{"responseCode":1,"handle":"10.5555/bench-1","values":[{"index":1,"type":"URL","data":{"format":"string","value":"https://example.org/bench/1"},"ttl":86400,"timestamp":"2026-11-22T00:00:00Z"}]}'

async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json;charset=UTF-8")]})
    await send({"type": "http.response.body", "body": BODY})
"""

# Each record as a Handle client writes one through the API: a URL and an HS_ADMIN value.
ADMIN = HandleValue(
    100, "HS_ADMIN", AdminData("0.NA/10.5555", 200, "111111111111"), timestamp=1763769600
)

LUA = """
math.randomseed(%(seed)d)
request = function()
  return wrk.format("GET", "%(prefix)s" .. math.random(0, %(last)d))
end
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fill(store_url: str, n: int, token: str) -> float:
    async def main() -> float:
        store = open_store(store_url)
        await store.open()
        start = time.perf_counter()
        batch: list[Row] = []
        for i in range(n):
            name = f"10.5555/bench-{i}"
            value = HandleValue(
                1, "URL", f"https://example.org/bench/{i}".encode(), timestamp=1763769600
            )
            batch.append(Row(DOI(name).key, name, "10.5555", values_to_json((value, ADMIN))))
            if len(batch) == 50_000:
                await store.put_many(batch)
                batch = []
        if batch:
            await store.put_many(batch)
        await store.add_token(hash_token(token), ("10.5555", "10.6666"))
        elapsed = time.perf_counter() - start
        await store.close()
        return elapsed

    return asyncio.run(main())


def wait(url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
        except httpx.HTTPError:
            time.sleep(0.1)
        else:
            return
    raise SystemExit(f"{url} did not answer")


def uvicorn(argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)


def wrk(url: str, script: Path, duration: int, connections: int) -> tuple[float, str, str]:
    out = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--latency", "-s", str(script), url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = re.search(r"^\s+50%\s+(\S+)", out, re.MULTILINE).group(1)  # type: ignore[union-attr]
    p99 = re.search(r"^\s+99%\s+(\S+)", out, re.MULTILINE).group(1)  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        print(f"  ! {errors.group(1)} non-2xx/3xx responses from {url}", file=sys.stderr)
    return rps, p50, p99


def lookups(base: str, token: str, records: int, rounds: int = 300) -> None:
    """Reverse lookups, one at a time: exact URLs, and prefixes matching about ten records."""
    rng = random.Random(11)
    headers = {"Authorization": f"Bearer {token}"}
    print(f"\nreverse lookup among {records:,} records, {rounds} requests each, one at a time")
    with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
        for label, pattern in (
            ("GET /hrls/handles?URL=<exact>", "https://example.org/bench/{n}"),
            ("GET /hrls/handles?URL=<prefix>*", "https://example.org/bench/{n}*"),
        ):
            times = []
            found = 0
            for _ in range(rounds):
                n = rng.randrange(max(1, records // 10))
                started = time.perf_counter()
                reply = http.get("/hrls/handles", params={"URL": pattern.format(n=n)})
                times.append(time.perf_counter() - started)
                reply.raise_for_status()
                found += len(reply.json())
            times.sort()
            median, p99 = times[len(times) // 2], times[int(len(times) * 0.99)]
            print(
                f"{label:<34} median {median * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms,"
                f" {found / rounds:.1f} names per answer"
            )


def main() -> None:  # noqa: PLR0915 - one linear script: fill, serve, load, deposit
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--deposit", type=int, default=200_000, help="records for the deposit run")
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed: apt-get install wrk")
    work = Path(tempfile.mkdtemp(prefix="doikit-bench-"))
    store = f"sqlite:///{work / 'bench.sqlite3'}"
    token = new_token()
    seconds = fill(store, args.records, token)
    rate = args.records / seconds
    print(f"filled {args.records} records in {seconds:.1f} s ({rate:,.0f}/s, store API)")

    (work / "bare_app.py").write_text(BARE_APP)
    bare_port, doikit_port = free_port(), free_port()
    common = [
        "--log-level",
        "warning",
        "--no-access-log",
        "--no-server-header",
        "--loop",
        "uvloop",
        "--http",
        "httptools",
    ]
    python = sys.executable
    bare = uvicorn(
        [
            python,
            "-m",
            "uvicorn",
            "bare_app:app",
            "--app-dir",
            str(work),
            "--port",
            str(bare_port),
            *common,
        ]
    )
    plain_port = free_port()
    doikit = str(Path(python).with_name("doikit"))
    served = uvicorn([doikit, "serve", "--store", store, "--port", str(doikit_port)])
    env = dict(os.environ, DOIKIT_STORE=store, DOIKIT_RA="doikit", DOIKIT_DEMO="0")
    plain = uvicorn(
        [
            python,
            "-m",
            "uvicorn",
            "doikit.server._run:app_from_env",
            "--factory",
            "--port",
            str(plain_port),
            *common,
        ],
        env=env,
    )
    try:
        wait(f"http://127.0.0.1:{bare_port}/")
        wait(f"http://127.0.0.1:{doikit_port}/")
        wait(f"http://127.0.0.1:{plain_port}/")
        last = args.records - 1
        scripts = {}
        for label, prefix in (
            ("bare", "/x/"),
            ("api", "/api/handles/10.5555/bench-"),
            ("api-plain", "/api/handles/10.5555/bench-"),
            ("redirect", "/10.5555/bench-"),
        ):
            path = work / f"{label}.lua"
            path.write_text(LUA % {"seed": 7, "prefix": prefix, "last": last})
            scripts[label] = path
        results: dict[str, list[tuple[float, str, str]]] = {
            "bare": [],
            "api": [],
            "api-plain": [],
            "redirect": [],
        }
        ports = {"bare": bare_port, "api-plain": plain_port}
        for _ in range(2):
            for label, runs in results.items():
                port = ports.get(label, doikit_port)
                runs.append(
                    wrk(f"http://127.0.0.1:{port}", scripts[label], args.duration, args.connections)
                )
        best = {label: max(runs) for label, runs in results.items()}
        base = best["bare"][0]
        load = f"wrk -t1 -c{args.connections} -d{args.duration}s"
        print(f"\n{load}, random existing names of {args.records:,}; best of 2")
        print(f"{'target':<34}{'req/s':>10}{'ratio':>8}{'p50':>10}{'p99':>10}")
        names = {
            "bare": "bare ASGI app (constant body)",
            "api": "GET /api/handles/{doi}",
            "api-plain": "  the same on plain uvicorn (ASGI)",
            "redirect": "GET /{doi} (302 redirect)",
        }
        for label, (rps, p50, p99) in best.items():
            print(f"{names[label]:<34}{rps:>10,.0f}{rps / base:>7.2f}x{p50:>10}{p99:>10}")

        lookups(f"http://127.0.0.1:{doikit_port}", token, args.records)

        csv_path = work / "deposit.csv"
        with csv_path.open("w") as out:
            out.write("doi,url\n")
            for i in range(args.deposit):
                out.write(f"10.6666/dep-{i},https://example.org/dep/{i}\n")
        start = time.perf_counter()
        subprocess.run(
            [
                doikit,
                "deposit",
                str(csv_path),
                "--server",
                f"http://127.0.0.1:{doikit_port}",
                "--token",
                token,
            ],
            check=True,
            capture_output=True,
        )
        elapsed = time.perf_counter() - start
        rate = args.deposit / elapsed
        print(f"\ndoikit deposit of {args.deposit:,} CSV records: ", end="")
        print(f"{elapsed:.1f} s, {rate:,.0f} records/s")
    finally:
        for process in (bare, served, plain):
            process.terminate()
            process.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
