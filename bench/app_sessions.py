"""Many users at once, over HTTP: ``python -m bench.app_sessions --workers 1,2`` (``make bench-sessions``).

For each worker count, ``python -m retrieval serve --workers N`` is started on a fresh store (the lab corpus),
and eight users ask at once. Each user is a client of its own, as a browser is: it opens the page (``GET /``,
which sets its cookies, the proxy's ``retrieval_worker`` among them), then, for each of four questions of its
tenant in the lab set, opens the link ``?tenant=…&q=…&tab=timings`` on the app's WebSocket, as Streamlit's own
client does. A request is timed from the link sent to the run's end (``script_finished``). The request's trace
is then downloaded through the proxy from the Timings tab's "Trace (JSON)" button (unmeasured), so every
download must reach the worker that holds the session.

Every request runs once alone first (the reference lists; it also loads each worker's models), then in four
phases: one user at a time, eight at once, eight at once, one at a time, so that a change in the machine's load
weighs on both sides alike. Every request's lists (every list's ranked ids, the final items, the tier) must be
those of its run alone. The query vectors are cached by every phase alike (the reference pass computed them).

Printed, and written as JSON with ``--out``: per worker count, p50 / p95 per request and requests per second,
eight users at once against one at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
USERS, PER_USER = 8, 4
LISTS = ("lexical", "dense", "fused", "reranked")
TRACE_LABEL = "Trace (JSON)"


@dataclass
class Request:
    qid: str
    seconds: float = 0.0
    lists: dict | None = None
    problems: list[str] = field(default_factory=list)


def users(path: Path = ROOT / "data" / "lab" / "questions.jsonl") -> list[tuple[str, list[tuple[str, str]]]]:
    """Eight users, alternately of the lab's two tenants, each with four questions of their own tenant."""
    by_tenant: dict[str, list[tuple[str, str]]] = {}
    for line in path.read_text("utf-8").splitlines():
        row = json.loads(line)
        by_tenant.setdefault(row["filters"]["tenant"], []).append((row["id"], row["question"]))
    tenants = sorted(by_tenant)
    out = []
    for k in range(USERS):
        tenant = tenants[k % len(tenants)]
        n = k // len(tenants)
        questions = by_tenant[tenant][n * PER_USER:(n + 1) * PER_USER]
        if len(questions) < PER_USER:
            raise ValueError(f"the lab set has fewer than {(n + 1) * PER_USER} questions of tenant {tenant}")
        out.append((tenant, questions))
    return out


def lists_of(trace: dict) -> dict:
    """What must not change with load: the tier, every list's ranked ids, the final items."""
    out = {"tier": trace["tier"], "final": [i["chunk_id"] for i in trace["final"]]}
    for name in LISTS:
        out[name] = [i["chunk_id"] for i in ((trace.get(name) or {}).get("items") or [])]
    return out


async def ask(http: Any, base: str, tenant: str, qid: str, question: str) -> Request:
    """One link opened on the app's WebSocket, timed to the run's end; its trace downloaded afterwards."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    out = Request(qid)
    msg = BackMsg()
    msg.rerun_script.query_string = urllib.parse.urlencode({"tenant": tenant, "q": question, "tab": "timings"})
    msg.rerun_script.page_script_hash = ""
    ws_url = base.replace("http://", "ws://", 1) + "/_stcore/stream"
    async with http.ws_connect(ws_url, protocols=("streamlit",), headers={"Origin": base}, max_msg_size=0) as ws:
        started = time.perf_counter()
        await ws.send_bytes(msg.SerializeToString())
        trace_url, finished = None, False
        async for frame in ws:
            if frame.type.name != "BINARY":
                out.problems.append(f"websocket: {frame.type.name}")
                break
            forward = ForwardMsg()
            forward.ParseFromString(frame.data)
            kind = forward.WhichOneof("type")
            if kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
                element = forward.delta.new_element
                if element.WhichOneof("type") == "exception":
                    out.problems.append(f"exception: {element.exception.message[:200]}")
                elif element.WhichOneof("type") == "download_button" and element.download_button.label == TRACE_LABEL:
                    trace_url = element.download_button.url
            elif kind == "script_finished" and forward.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                out.seconds = time.perf_counter() - started
                finished = True
                break
        if not finished:
            out.problems.append("the run did not finish")
        elif trace_url is None:
            out.problems.append("no trace download on the page")
        else:  # while the session is open: its files live as long as it does
            async with http.get(urllib.parse.urljoin(base + "/", trace_url.lstrip("/"))) as reply:
                if reply.status != 200:
                    out.problems.append(f"trace download: HTTP {reply.status}")
                else:
                    out.lists = lists_of(json.loads(await reply.read()))
    return out


async def user(base: str, tenant: str, questions: list[tuple[str, str]]) -> list[Request]:
    """One browser: its own cookies, the page opened once, then each question's link in turn."""
    import aiohttp

    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.get(base + "/") as reply:
            await reply.read()
        return [await ask(http, base, tenant, qid, q) for qid, q in questions]


async def phase(base: str, plan: list, at_once: bool) -> tuple[float, list[Request]]:
    started = time.perf_counter()
    if at_once:
        done = await asyncio.gather(*(user(base, tenant, qs) for tenant, qs in plan))
    else:
        done = [await user(base, tenant, qs) for tenant, qs in plan]
    return time.perf_counter() - started, [r for rs in done for r in rs]


def wait_quiet(idle_share: float = 0.8, timeout_s: float = 180.0) -> float:
    """Wait (at most ``timeout_s``) until the machine is idle ``idle_share`` of one second (the workers' readers
    warm their passages in the background after their first request): seconds waited."""
    def times() -> tuple[int, int]:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(values), values[3] + values[4]

    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        total0, idle0 = times()
        time.sleep(1.0)
        total1, idle1 = times()
        if total1 > total0 and (idle1 - idle0) / (total1 - total0) >= idle_share:
            break
    return time.monotonic() - started


class Served:
    """``python -m retrieval serve --workers N`` on a free port and a store of its own, healthy; stopped on exit."""

    def __init__(self, workers: int, store: Path, log: Any, timeout_s: float = 600.0) -> None:
        from retrieval.serving.serve import die_with_parent, free_port

        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "RETRIEVAL_CHROMA_PATH": str(store / "chroma"), "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "retrieval", "serve", "--workers", str(workers), "--port", str(self.port)],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent if os.name == "posix" else None)
        deadline = time.monotonic() + timeout_s
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"retrieval serve exited with status {self.process.returncode}")
            try:
                with urllib.request.urlopen(self.base + "/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"retrieval serve not healthy after {timeout_s:g} s")
            time.sleep(0.5)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _ms(values: list[float], q: float) -> int:
    """The ``q``-th percentile of ``values`` (seconds) in whole milliseconds."""
    import numpy as np

    return round(float(np.percentile(values, q)) * 1000)


def figures(wall: float, requests: list[Request]) -> dict:
    seconds = [r.seconds for r in requests]
    return {"requests": len(requests), "wall_s": round(wall, 2), "requests_per_s": round(len(requests) / wall, 3),
            "p50_ms": _ms(seconds, 50), "p95_ms": _ms(seconds, 95)}


def measure(workers: int, store: Path, log: Any) -> dict:
    """One deployment of ``workers`` processes: the reference pass, then the four phases; figures and every
    request's difference from its run alone (``unlike``) and problems."""
    plan = users()
    served = Served(workers, store, log)
    try:
        _, reference = asyncio.run(phase(served.base, plan, at_once=False))
        waited = wait_quiet()
        alone = {r.qid: r.lists for r in reference}
        phases = [(at_once, *asyncio.run(phase(served.base, plan, at_once)))
                  for at_once in (False, True, True, False)]
    finally:
        served.stop()
    problems = [(r.qid, r.problems) for r in reference if r.problems or r.lists is None]
    unlike = []
    for _, _, requests in phases:
        problems += [(r.qid, r.problems) for r in requests if r.problems or r.lists is None]
        unlike += [r.qid for r in requests if r.lists is not None and r.lists != alone.get(r.qid)]

    def pooled(at_once: bool) -> dict:
        runs = [p for p in phases if p[0] == at_once]
        return figures(sum(p[1] for p in runs), [r for p in runs for r in p[2]])

    one, eight = pooled(False), pooled(True)
    return {"workers": workers, "users": USERS, "questions_per_user": PER_USER, "cpus": os.cpu_count(),
            "quiet_wait_s": round(waited, 1), "phase_walls_s": [round(p[1], 1) for p in phases],
            "one_at_a_time": one, "all_at_once": eight,
            "throughput_ratio": round(eight["requests_per_s"] / one["requests_per_s"], 2),
            "unlike": unlike, "problems": problems[:5]}


def line(result: dict) -> str:
    one, eight = result["one_at_a_time"], result["all_at_once"]
    return (f"{result['workers']} worker(s): one user at a time p50 {one['p50_ms']} ms, p95 {one['p95_ms']} ms, "
            f"{one['requests_per_s']} req/s; {result['users']} at once p50 {eight['p50_ms']} ms, p95 "
            f"{eight['p95_ms']} ms, {eight['requests_per_s']} req/s: throughput {result['throughput_ratio']}× "
            f"(phases {result['phase_walls_s']} s; lists unlike their run alone: {len(result['unlike'])}; "
            f"problems: {len(result['problems'])})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2", help="Worker counts, comma-separated (default 1,2).")
    parser.add_argument("--out", type=Path, help="Write the figures as JSON here.")
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="app-sessions-") as folder:
        for count in [int(c) for c in args.workers.split(",") if c.strip()]:
            log_path = Path(folder) / f"serve-{count}.log"
            with log_path.open("wb") as log:
                try:
                    result = measure(count, Path(folder) / f"store-{count}", log)
                except RuntimeError as exc:
                    print(f"error: {exc}; the log's tail:\n{log_path.read_text(errors='replace')[-2000:]}",
                          file=sys.stderr)
                    return 2
            results.append(result)
            print(line(result), flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
