"""The balancer of ``retrieval serve`` (retrieval/serve.py) in front of two real aiohttp servers standing for the
workers: a browser stays on the worker its cookie names, over HTTP and WebSocket; a new browser goes to the
worker with the fewest open sessions; headers pass through but for the hop-by-hop ones; a forged or stale cookie
is as good as none; a worker that is down is one line, HTTP 502. (``make stress`` runs the real app behind it.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from retrieval.serving.serve import WORKER_COOKIE, Balancer, balancer_app, free_port


def test_pick_follows_a_valid_cookie_and_otherwise_the_least_busy_worker() -> None:
    b = Balancer(["http://a", "http://b", "http://c"])
    assert b.pick("2") == (2, False)
    assert b.pinned("3") is None and b.pinned("-1") is None and b.pinned("x") is None and b.pinned("") is None
    assert b.pinned("00000001") is None and b.pinned("01") is None  # not a number as the balancer writes it
    assert b.pinned("²") is None and b.pinned("١") is None  # digits to str.isdigit, not to int()
    b.open_sessions[:] = [2, 0, 1]
    assert b.pick(None) == (1, True)
    assert b.pick("7") == (1, True)  # a stale cookie (more workers before a restart): re-pinned
    b.open_sessions[:] = [0, 0, 0]
    picks = [b.pick(None)[0] for _ in range(6)]
    assert sorted(picks[:3]) == [0, 1, 2] and picks[3:] == picks[:3]  # round-robin between equals
    b.up[1] = False  # a worker that is down: its browsers and new ones go to the others until it is up
    assert b.pick("1")[0] != 1 and b.pick("1")[1] is True
    assert {b.pick(None)[0] for _ in range(6)} == {0, 2}
    b.up[:] = [False, False, False]
    assert b.pick("2")[1] is True  # none up: any (the request says it is starting), pinned anew
    with pytest.raises(ValueError):
        Balancer([])


def _worker(name: str) -> web.Application:
    async def who(request: web.Request) -> web.Response:
        seen = {k.lower(): v for k, v in request.headers.items()}
        body = await request.read()
        reply = web.json_response({"worker": name, "headers": seen, "method": request.method,
                                   "path": request.raw_path, "body": body.decode()})
        reply.set_cookie("_app", name)  # the app's own cookies pass through
        return reply

    async def refuse(request: web.Request) -> web.Response:
        return web.Response(status=403, text="origin refused")

    async def stream(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(protocols=("streamlit",))
        await ws.prepare(request)
        async for msg in ws:
            await ws.send_bytes(name.encode() + b":" + msg.data)
        return ws

    app = web.Application(client_max_size=16 << 20)
    app.router.add_get("/_stcore/stream", stream)
    app.router.add_get("/refuse", refuse)
    app.router.add_route("*", "/{tail:.*}", who)
    return app


async def _start(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner, f"http://127.0.0.1:{port}"


async def _scenario() -> dict:
    runners, upstreams = [], []
    for name in ("w0", "w1"):
        runner, url = await _start(_worker(name))
        runners.append(runner)
        upstreams.append(url)
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    balancer = Balancer(upstreams)
    front, base = await _start(balancer_app(balancer))
    mixed = Balancer([dead, upstreams[1]])
    mixed_front, mixed_base = await _start(balancer_app(mixed))
    down_front, down_base = await _start(balancer_app(Balancer([dead])))
    out: dict = {"front": base.removeprefix("http://")}
    try:
        jar = lambda: aiohttp.CookieJar(unsafe=True)  # noqa: E731 - cookies for 127.0.0.1
        async with aiohttp.ClientSession(cookie_jar=jar()) as alice, aiohttp.ClientSession(cookie_jar=jar()) as bob:
            first = await alice.get(base + "/?q=1")
            out["alice_first"] = (await first.json())["worker"]
            out["alice_cookie"] = first.cookies[WORKER_COOKIE].value
            out["alice_cookie_flags"] = (first.cookies[WORKER_COOKIE]["httponly"],
                                         first.cookies[WORKER_COOKIE]["samesite"])
            out["app_cookie"] = first.cookies["_app"].value
            out["alice_next"] = [(await (await alice.get(base + f"/page/{k}")).json())["worker"] for k in range(5)]
            bob_first = await bob.get(base + "/")
            out["bob_first"] = (await bob_first.json())["worker"]
            echo = await (await alice.post(base + "/_stcore/upload_file/x?y=1", data=b"payload",
                                           headers={"X-Forwarded-User": "alice@example.com", "Connection": "close",
                                                    "Keep-Alive": "timeout=5", "Proxy-Authorization": "x"})).json()
            out["echo"] = echo
            async with alice.ws_connect(base.replace("http", "ws") + "/_stcore/stream",
                                        protocols=("streamlit", "token")) as ws:
                out["ws_protocol"] = ws.protocol
                await ws.send_bytes(b"hello")
                out["alice_ws"] = (await ws.receive()).data
                # while Alice's session is open on her worker, a client without a cookie goes to the other one
                out["open"] = list(balancer.open_sessions)
                async with aiohttp.ClientSession() as stranger:
                    async with stranger.ws_connect(base.replace("http", "ws") + "/_stcore/stream",
                                                   protocols=("streamlit",)) as ws2:
                        await ws2.send_bytes(b"hi")
                        out["stranger_ws"] = (await ws2.receive()).data
            forged = await (await bob.get(base + "/", headers={"Cookie": f"{WORKER_COOKIE}=9"})).json()
            out["forged"] = forged["worker"]
            big = b"x" * (3 << 20)
            streamed_reply = await bob.post(base + "/upload", data=big)
            streamed = await streamed_reply.json()
            out["streamed"] = (len(streamed["body"]), streamed["headers"].get("content-length"),
                               streamed["headers"].get("transfer-encoding"),
                               streamed_reply.headers.get("Content-Length") is not None,
                               streamed_reply.headers.get("Transfer-Encoding"))
            head = await bob.head(base + "/page")
            out["head"] = (head.status, head.headers.get("Content-Length") is not None)
            try:
                async with bob.ws_connect(base.replace("http", "ws") + "/refuse"):
                    out["refused"] = None
            except aiohttp.WSServerHandshakeError as exc:
                out["refused"] = exc.status
            await asyncio.sleep(0.05)
            out["open_after"] = list(balancer.open_sessions)
            async with aiohttp.ClientSession() as carol:  # pinned to worker 0, which is down
                moved = await carol.get(mixed_base + "/", headers={"Cookie": f"{WORKER_COOKIE}=0"})
                out["moved"] = ((await moved.json())["worker"], moved.cookies[WORKER_COOKIE].value)
                out["up_after"] = list(mixed.up)
                async with carol.ws_connect(mixed_base.replace("http", "ws") + "/_stcore/stream",
                                            headers={"Cookie": f"{WORKER_COOKIE}=0"}) as ws:
                    await ws.send_bytes(b"again")
                    out["moved_ws"] = (await ws.receive()).data
                down = await carol.get(down_base + "/")  # no worker up at all
                out["down"] = (down.status, down.headers.get("Retry-After"), "reloads in a few seconds" in await down.text())
            # stopping while a session is open: the balancer closes it instead of waiting for the browser
            async with alice.ws_connect(base.replace("http", "ws") + "/_stcore/stream") as ws:
                await ws.send_bytes(b"x")
                await ws.receive()
                started = asyncio.get_running_loop().time()
                await front.cleanup()
                out["stop_s"] = asyncio.get_running_loop().time() - started
                out["closed"] = (await ws.receive()).type
    finally:
        for runner in [front, mixed_front, down_front, *runners]:
            await runner.cleanup()
    return out


def test_browsers_stay_on_their_worker_and_headers_pass_through() -> None:
    out = asyncio.run(_scenario())
    alice = out["alice_first"]
    other = "w1" if alice == "w0" else "w0"
    assert out["alice_cookie"] == alice[1] and out["alice_cookie_flags"] == (True, "Lax")
    assert out["app_cookie"] == alice
    assert out["alice_next"] == [alice] * 5
    assert out["bob_first"] == other  # round-robin: the second new browser, the other worker
    echo = out["echo"]
    assert echo["worker"] == alice and echo["method"] == "POST" and echo["body"] == "payload"
    assert echo["path"] == "/_stcore/upload_file/x?y=1"
    assert echo["headers"]["x-forwarded-user"] == "alice@example.com"
    assert echo["headers"]["host"] == out["front"]  # the browser's Host, not the worker's address
    assert not {"keep-alive", "proxy-authorization"} & set(echo["headers"])
    assert f"{WORKER_COOKIE}={alice[1]}" in echo["headers"]["cookie"]
    assert out["ws_protocol"] == "streamlit"
    assert out["alice_ws"] == alice.encode() + b":hello"
    assert out["open"] == ([1, 0] if alice == "w0" else [0, 1])
    assert out["stranger_ws"] == other.encode() + b":hi"
    assert out["open_after"] == [0, 0]
    assert out["forged"] in ("w0", "w1")  # a worker that does not exist: served, and pinned anew
    # streamed through whole, its length kept both ways (not re-sent chunked: a download shows its progress)
    assert out["streamed"] == (3 << 20, str(3 << 20), None, True, None)
    assert out["head"] == (200, True)
    assert out["refused"] == 403  # the worker's refusal, not "unavailable"
    assert out["moved"] == ("w1", "1")  # its worker down: served by the other one at once, and pinned to it
    assert out["up_after"] == [False, True]
    assert out["moved_ws"] == b"w1:again"
    assert out["down"] == (502, "3", True)  # none up: a page that reloads itself
    assert out["stop_s"] < 3 and out["closed"] in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)


class _Stub:
    """A worker process that stays up: ``poll()`` is None."""

    returncode = None

    def poll(self):
        return None


def test_a_worker_that_stops_answering_its_health_check_is_skipped_until_it_answers(monkeypatch) -> None:
    """A worker whose port is open but that no longer answers (stopped, deadlocked) is marked down after two
    failed health checks in a row, and up again once one answers; one failure alone changes nothing."""
    from retrieval.serving import serve as serving

    monkeypatch.setattr(serving, "SUPERVISE_INTERVAL_S", 0.01)
    monkeypatch.setattr(serving, "HEALTH_TIMEOUT_S", 0.0)
    answers = {0: [True] * 1000, 1: [False, True, False, False, True] + [True] * 1000}
    seen: list[tuple[int, ...]] = []

    class Scripted(serving.Worker):
        def healthy(self, timeout_s: float = 2.0) -> bool:
            if self.index == 1:
                seen.append(tuple(balancer.up))  # the state each check of worker 1 finds
            return answers[self.index].pop(0)

    workers = [Scripted(k, 0, [], {}, Path("."), process=_Stub()) for k in range(2)]
    balancer = Balancer(["http://a", "http://b"])

    async def run() -> None:
        stop = asyncio.Event()
        task = asyncio.ensure_future(serving._supervise(workers, balancer, stop, lambda line: None))
        while len(seen) < 6:
            await asyncio.sleep(0.005)
        stop.set()
        await task

    asyncio.run(run())
    # worker 1 fails once (still up), answers, fails twice (down after the second), answers (up again)
    assert seen[:6] == [(True, True)] * 4 + [(True, False), (True, True)]
