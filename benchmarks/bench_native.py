"""doikit's native Handle server under load, against CNRI's HANDLE.NET 9 in the same run.

    python benchmarks/bench_native.py [--records 1000000] [--requested K] [--duration 10]
        [--rounds 3] [--cnri HOST:PORT] [--window 128] [--connections 32] [--sources 1024]
        [--rate R] [--store-file PATH] [--processes N]

1. Compiles ``benchmarks/native_load.c`` (the load generator, the same for every server)
   with the C compiler at hand into a temporary directory.
2. Fills a fresh SQLite store with N records (10.5555/bench-0 … N-1) through the store
   API, each a URL and an HS_ADMIN value as in ``bench_serve.py`` (``--store-file PATH``
   keeps the file for the next run, and reuses it when it is there), and starts
   ``doikit serve --handle-port`` on it.
3. Writes 100,000 RESOLUTION requests (public-only, all values) for random names among the
   N (or the first K); every target gets the same requests in the same order.
4. Measures the generator's ceiling against its own trivial servers (an answer is the
   request with response code 1), UDP and TCP.
5. Each round loads each target in turn (the order alternates between rounds): UDP with
   ``--window`` requests in flight from ``--sources`` loopback addresses, then TCP with
   ``--connections`` connections at a time, one request each, as CNRI's client resolves
   over TCP; with ``--rate`` also UDP at that many requests per second (an open loop:
   latencies at the same load for both). One extra UDP run loads doikit from a single
   source address, where its per-address UDP budget applies.

CNRI's server is not started here: none of CNRI's code, and no script that builds or starts
it, is part of this repository. Start one yourself (``$HANDLE_PEER/README.txt``), holding
the same N names under 10.5555 with the same values (see BENCHMARKS.md), and give its
native port with ``--cnri HOST:PORT`` (or ``CNRI_NATIVE=HOST:PORT``; ``HANDLE_PEER``, the
build's directory, is printed with the figures). Without it, doikit runs alone. Both
targets are checked first: the first and last names asked for must resolve.

Prints answers/s, p50 and p99, timeouts and errors, the CPU the server used (cores, from
/proc), and doikit's ratio to CNRI: the median of the rounds' ratios, with their range.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from doikit import DOI
from doikit.handle import (
    AdminData,
    HandleValue,
    OpFlag,
    ResolutionRequest,
    decode,
    encode,
    values_to_json,
)
from doikit.server import Row, open_store

HERE = Path(__file__).resolve().parent
PREFIX = "10.5555"
REQUESTS = 100_000
ADMIN = HandleValue(
    100, "HS_ADMIN", AdminData(f"0.NA/{PREFIX}", 200, "111111111111"), timestamp=1763769600
)


def free_port() -> int:
    with socket.socket() as tcp, socket.socket(type=socket.SOCK_DGRAM) as udp:
        tcp.bind(("127.0.0.1", 0))
        port = int(tcp.getsockname()[1])
        udp.bind(("127.0.0.1", port))  # the same number free for UDP too
        return port


def fill(path: Path, n: int) -> float:
    async def main() -> float:
        store = open_store(f"sqlite:///{path}")
        await store.open()
        start = time.perf_counter()
        batch: list[Row] = []
        for i in range(n):
            name = f"{PREFIX}/bench-{i}"
            value = HandleValue(
                1, "URL", f"https://example.org/bench/{i}".encode(), timestamp=1763769600
            )
            batch.append(Row(DOI(name).key, name, PREFIX, values_to_json((value, ADMIN))))
            if len(batch) == 50_000:
                await store.put_many(batch)
                batch = []
        if batch:
            await store.put_many(batch)
        elapsed = time.perf_counter() - start
        await store.close()
        return elapsed

    return asyncio.run(main())


def compile_generator(work: Path) -> Path:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("a C compiler is needed to build the load generator (cc or gcc)")
    binary = work / "native_load"
    subprocess.run(
        [compiler, "-O2", "-o", str(binary), str(HERE / "native_load.c")],
        check=True,
    )
    return binary


def write_requests(path: Path, among: int) -> None:
    rng = random.Random(7)
    with path.open("wb") as out:
        for _ in range(REQUESTS):
            name = f"{PREFIX}/bench-{rng.randrange(among)}"
            out.write(encode(ResolutionRequest(name, request_id=1, op_flags=OpFlag.PUBLIC_ONLY)))


def resolve_code(address: tuple[str, int], name: str, timeout: float = 1.0) -> int | None:
    """The response code of one UDP resolution of *name*, or None when nothing answers."""
    request = encode(ResolutionRequest(name, request_id=4242, op_flags=OpFlag.PUBLIC_ONLY))
    with socket.socket(type=socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.sendto(request, address)
            return decode(sock.recv(65536)).response_code
        except OSError:
            return None


def wait_until_answering(
    address: tuple[str, int], name: str, process: subprocess.Popen[bytes]
) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"doikit serve exited with {process.returncode}")
        if resolve_code(address, name, 0.5) is not None:
            return
        time.sleep(0.2)
    raise SystemExit(f"nothing answers at {address[0]}:{address[1]}")


def check_holds(label: str, address: tuple[str, int], among: int) -> None:
    for name in (f"{PREFIX}/bench-0", f"{PREFIX}/bench-{among - 1}"):
        code = resolve_code(address, name)
        if code != 1:
            raise SystemExit(
                f"{label} at {address[0]}:{address[1]} answers {name} with {code}, not 1: "
                f"it must hold the {among:,} names asked for"
            )


def server_pid(port: int) -> int | None:
    """The process listening on UDP *port* (from ss), to read its CPU time."""
    ss = shutil.which("ss")
    if ss is None:
        return None
    out = subprocess.run(
        [ss, "-Hlunp", f"sport = :{port}"], capture_output=True, text=True, check=False
    ).stdout
    found = re.search(r"pid=(\d+)", out)
    return int(found.group(1)) if found else None


def cpu_seconds(pid: int | None) -> float | None:
    """The CPU time of *pid* and of its children (``doikit serve --handle-processes``)."""
    if pid is None:
        return None
    total = 0
    found = False
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(entry.name) == pid or int(fields[1]) == pid:
            found = found or int(entry.name) == pid
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK") if found else None


@dataclass
class Run:
    """What one run of the generator measured."""

    per_second: float
    p50_ms: float
    p99_ms: float
    timeouts: int
    errors: int
    other_codes: dict[str, int]
    server_cores: float | None
    load_cores: float


def load(
    generator: Path,
    mode: str,
    address: tuple[str, int],
    requests: Path,
    *,
    options: dict[str, float],
    pid: int | None,
) -> Run:
    argv = [str(generator), mode, "-h", address[0], "-p", str(address[1]), "-r", str(requests)]
    for flag, value in options.items():
        argv += [flag, str(value)]
    started, cpu = time.monotonic(), cpu_seconds(pid)
    out: dict[str, Any] = json.loads(
        subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    )
    wall = time.monotonic() - started
    after = cpu_seconds(pid)
    codes = out["codes"]
    return Run(
        per_second=float(codes.get("1", 0)) / float(out["seconds"]),
        p50_ms=out["p50_us"] / 1000,
        p99_ms=out["p99_us"] / 1000,
        timeouts=int(out["timeouts"]),
        errors=int(out["errors"]),
        other_codes={code: n for code, n in codes.items() if code != "1"},
        server_cores=None if cpu is None or after is None else (after - cpu) / wall,
        load_cores=float(out["cpu_s"]) / wall,
    )


def describe(label: str, runs: list[Run]) -> str:
    rate = statistics.median(r.per_second for r in runs)
    p50 = statistics.median(r.p50_ms for r in runs)
    p99 = statistics.median(r.p99_ms for r in runs)
    lost = sum(r.timeouts for r in runs)
    errors = sum(r.errors for r in runs) + sum(sum(r.other_codes.values()) for r in runs)
    cores = [r.server_cores for r in runs if r.server_cores is not None]
    server = f"{statistics.median(cores):.2f}" if cores else "?"
    low, high = min(r.per_second for r in runs), max(r.per_second for r in runs)
    return (
        f"{label:<30}{rate:>10,.0f}  ({low:,.0f}-{high:,.0f}){p50:>9.2f}{p99:>9.2f}"
        f"{lost:>9}{errors:>8}{server:>8}{statistics.median(r.load_cores for r in runs):>7.2f}"
    )


def main() -> None:  # noqa: PLR0915 - one linear script: build, fill, serve, load
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument(
        "--requested",
        type=int,
        help="ask for names among the first K only (default: all N); for a CNRI server"
        " holding only those",
    )
    parser.add_argument("--duration", type=float, default=10, help="seconds measured per run")
    parser.add_argument("--warmup", type=float, default=3, help="seconds before each run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cnri", default=os.environ.get("CNRI_NATIVE"), metavar="HOST:PORT")
    parser.add_argument("--window", type=int, default=128, help="UDP requests in flight")
    parser.add_argument("--connections", type=int, default=32, help="TCP connections at once")
    parser.add_argument("--sources", type=int, default=1024, help="loopback source addresses")
    parser.add_argument("--rate", type=float, default=0, help="also UDP at this many req/s")
    parser.add_argument("--store-file", type=Path, help="keep (or reuse) the SQLite store here")
    parser.add_argument(
        "--processes", type=int, help="doikit serve --handle-processes (default: its own)"
    )
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="doikit-bench-native-"))
    served: subprocess.Popen[bytes] | None = None
    try:
        generator = compile_generator(work)
        store_file = args.store_file or work / "bench.sqlite3"
        if store_file.exists():
            print(f"store: {store_file} as it is")
        else:
            seconds = fill(store_file, args.records)
            print(f"filled {args.records:,} records in {seconds:.1f} s (store API)")
        requests = work / "requests.bin"
        among = min(args.requested or args.records, args.records)
        write_requests(requests, among)

        port = free_port()
        doikit = str(Path(sys.executable).with_name("doikit"))
        served = subprocess.Popen(
            [
                doikit,
                "serve",
                "--store",
                f"sqlite:///{store_file}",
                "--port",
                str(free_port()),
                "--handle-port",
                str(port),
                *(["--handle-processes", str(args.processes)] if args.processes else []),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        targets = {"doikit": ("127.0.0.1", port)}
        wait_until_answering(targets["doikit"], f"{PREFIX}/bench-0", served)
        if args.cnri:
            host, _, cnri_port = args.cnri.rpartition(":")
            targets["CNRI"] = (host or "127.0.0.1", int(cnri_port))
        for label, address in targets.items():
            check_holds(label, address, among)
        pids = {"doikit": served.pid, "CNRI": server_pid(targets["CNRI"][1]) if args.cnri else None}

        timing = {"-d": args.duration, "-w": args.warmup}
        udp = {**timing, "-c": args.window, "-s": args.sources}
        tcp = {**timing, "-c": args.connections, "-s": args.sources}
        loads = {"udp": ("udp", udp), "tcp": ("tcp", tcp)}
        if args.rate:
            loads[f"udp @{args.rate:,.0f}/s"] = ("udp", {**udp, "-R": args.rate})

        # The generator's ceiling: its own trivial servers, one at a time.
        ceiling: dict[str, Run] = {}
        for mode in ("udp", "tcp"):
            echo_port = free_port()
            echo = subprocess.Popen(
                [str(generator), f"echo-{mode}", "-h", "127.0.0.1", "-p", str(echo_port)]
            )
            try:
                time.sleep(0.3)
                options = udp if mode == "udp" else tcp
                ceiling[mode] = load(
                    generator,
                    mode,
                    ("127.0.0.1", echo_port),
                    requests,
                    options=options,
                    pid=echo.pid,
                )
            finally:
                echo.terminate()
                echo.wait()

        results: dict[tuple[str, str], list[Run]] = {}
        order = list(targets)
        for round_ in range(args.rounds):
            for name, (mode, options) in loads.items():
                for label in order if round_ % 2 == 0 else order[::-1]:
                    run = load(
                        generator,
                        mode,
                        targets[label],
                        requests,
                        options=options,
                        pid=pids[label],
                    )
                    results.setdefault((label, name), []).append(run)
        single = load(
            generator,
            "udp",
            targets["doikit"],
            requests,
            options={**udp, "-s": 1},
            pid=served.pid,
        )

        print(
            f"\ndoikit holds {args.records:,} names, requests ask for {among:,} of them;"
            f" {args.rounds} rounds of {args.duration:g} s"
            f" (after {args.warmup:g} s of warm-up); UDP window {args.window},"
            f" TCP {args.connections} connections, {args.sources} source addresses;"
            f" {os.cpu_count()} cores"
        )
        if args.cnri:
            build = os.environ.get("HANDLE_PEER", "not given (HANDLE_PEER)")
            print(f"CNRI at {args.cnri}, pid {pids['CNRI']}, build {build}")
        head = f"{'target':<30}{'answers/s':>10}  {'(range)':<15}{'p50 ms':>9}{'p99 ms':>9}"
        print(f"{head}{'timeouts':>9}{'errors':>8}{'server':>8}{'load':>7}  (cores)")
        for mode, run in ceiling.items():
            print(describe(f"generator ceiling, {mode} (echo)", [run]))
        for name in loads:
            for label in targets:
                print(describe(f"{label}, {name}", results[label, name]))
        print(describe("doikit, udp, 1 source address", [single]))

        if args.cnri:
            print("\ndoikit / CNRI: median of the rounds' ratios (range)")
            for name in loads:
                pairs = list(zip(results["doikit", name], results["CNRI", name], strict=True))
                rates = [o.per_second / t.per_second for o, t in pairs if t.per_second] or [0.0]
                p99s = [o.p99_ms / t.p99_ms for o, t in pairs if t.p99_ms > 0] or [0.0]
                print(
                    f"  {name:<16}answers/s {statistics.median(rates):.3f}x"
                    f" ({min(rates):.3f}-{max(rates):.3f}),"
                    f" p99 {statistics.median(p99s):.3f}x ({min(p99s):.3f}-{max(p99s):.3f})"
                    " (below 1: doikit's is shorter)"
                )
    finally:
        if served is not None:
            served.terminate()
            served.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
