"""Two users behind a trusted reverse proxy in front of ``python -m retrieval serve --workers 2`` (README,
"Deploying for several users"): the proxy signs each browser in by its session cookie, sets ``X-Forwarded-User``
on every request (the page's HTTP requests and its WebSocket) and overwrites any copy the client sends; the
Caddy that serve starts passes it through from that proxy's address (``RETRIEVAL_TRUSTED_PROXY``) to the browser's
worker (Alice and Bob get one each); the app reads the user from
that header (``RETRIEVAL_USER_HEADER``) and the access policy gives Alice ``lumen`` and Bob ``ventura``.

Alice and Bob browse at the same time (two Chromium contexts, one server): each sees only their own tenant,
Bob's forged ``X-Forwarded-User: alice@…`` does not make him Alice, a link naming the other tenant is ignored,
and a browser the proxy has not signed in sees one "Not authorised" line whatever header it sends.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import urllib.parse
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from .test_browser import CHROMIUM, CHROMIUM_ARGS, running_app


pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent: install it with "
                                 "`apt-get install -y chromium` to run the browser tests")]

HEADER = "X-Forwarded-User"
COOKIE = "proxy_session"
#: The proxy's sessions: a cookie value → the user it signed in (its login is out of scope here).
SESSIONS = {"s-alice": "alice@example.com", "s-bob": "bob@example.com"}
POLICY = "users:\n  alice@example.com: [lumen]\n  bob@example.com: [ventura]\ndefault: []\n"
PX7 = "O PX-7 não foi ativado apesar do pagamento, o que faço?"
VT3 = "O que é o erro VT-3 que aparece na maquininha?"
#: Hop-by-hop headers (RFC 9110 §7.6.1) and the ones the client library sets itself.
HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
       "transfer-encoding", "upgrade", "host", "content-length"}
WS_OWN = HOP | {"sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "sec-websocket-protocol"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def upstream_headers(request, own: set[str]) -> list[tuple[str, str]]:
    """The client's headers without hop-by-hop ones and without any ``X-Forwarded-User`` it sent, plus the
    proxy's own ``X-Forwarded-User`` for the session's user (none for a browser it has not signed in)."""
    out = [(k, v) for k, v in request.headers.items() if k.lower() not in own and k.lower() != HEADER.lower()]
    user = SESSIONS.get(request.cookies.get(COOKIE, ""))
    if user is not None:
        out.append((HEADER, user))
    return out


async def relay(front, back) -> None:
    """Copy WebSocket messages both ways between the browser's socket (``front``, aiohttp's server side) and the
    app's (``back``, its client side) until either closes; then close ``front``."""
    import aiohttp

    async def pump(source, sink) -> None:
        async for msg in source:
            if msg.type == aiohttp.WSMsgType.BINARY:
                await sink.send_bytes(msg.data)
            elif msg.type == aiohttp.WSMsgType.TEXT:
                await sink.send_str(msg.data)
            else:
                break

    tasks = [asyncio.ensure_future(pump(front, back)), asyncio.ensure_future(pump(back, front))]
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in tasks:
        task.cancel()
    await front.close()


@contextmanager
def trusted_proxy(upstream: str) -> Iterator[str]:
    """An aiohttp reverse proxy on a free port in front of ``upstream`` (HTTP and WebSocket): ``its URL``."""
    import aiohttp
    from aiohttp import web
    from multidict import CIMultiDict

    target = urllib.parse.urlsplit(upstream)

    async def forward(request: web.Request) -> web.StreamResponse:
        session: aiohttp.ClientSession = request.app["session"]
        url = f"{upstream}{request.rel_url}"
        if request.headers.get("Upgrade", "").lower() == "websocket":
            protocols = tuple(p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")
                              if p.strip())
            headers = CIMultiDict(upstream_headers(request, WS_OWN))
            headers["Origin"] = upstream  # the app sees its own origin, as behind any reverse proxy
            async with session.ws_connect(f"ws://{target.netloc}{request.rel_url}", headers=headers,
                                          protocols=protocols, max_msg_size=0) as back:
                front = web.WebSocketResponse(protocols=(back.protocol,) if back.protocol else (), max_msg_size=0)
                await front.prepare(request)
                await relay(front, back)
                return front
        headers = CIMultiDict(upstream_headers(request, HOP))
        async with session.request(request.method, url, headers=headers, data=await request.read(),
                                   allow_redirects=False) as reply:
            response = web.StreamResponse(status=reply.status)
            for key, value in reply.headers.items():
                if key.lower() not in HOP:
                    response.headers.add(key, value)
            await response.prepare(request)
            async for chunk in reply.content.iter_chunked(65536):
                await response.write(chunk)
            await response.write_eof()
            return response

    port = free_port()
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    runner_box: dict = {}

    async def start() -> None:
        app = web.Application()
        app["session"] = aiohttp.ClientSession(auto_decompress=False)
        app.router.add_route("*", "/{tail:.*}", forward)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        runner_box["runner"], runner_box["session"] = runner, app["session"]
        ready.set()

    thread = threading.Thread(target=lambda: (loop.run_until_complete(start()), loop.run_forever()), daemon=True)
    thread.start()
    assert ready.wait(30), "the proxy did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        async def stop() -> None:
            await runner_box["session"].close()
            await runner_box["runner"].cleanup()

        asyncio.run_coroutine_threadsafe(stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory, chroma_dir: Path) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("proxy_users")
    policy = folder / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    # the proxy runs on the loopback address: serve's Caddy passes the user header from there only
    env = {"RETRIEVAL_ACCESS_POLICY": str(policy), "RETRIEVAL_USER_HEADER": HEADER,
           "RETRIEVAL_TRUSTED_PROXY": "127.0.0.1"}
    with running_app(tmp_path_factory, env, seed=chroma_dir, workers=2) as (url, log):
        try:
            with trusted_proxy(url) as proxy_url:
                yield proxy_url
        finally:
            log.seek(0)
            print("serve log tail:\n" + log.read()[-3000:].decode(errors="replace"))


def signed_in_page(browser, proxy_url: str, session: str | None, forged_user: str | None = None):
    """A browser context of its own (its own cookies: its own Streamlit session), signed in at the proxy by
    ``session`` (``None``: not signed in), sending ``X-Forwarded-User: forged_user`` itself when given."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000},
                                  extra_http_headers={HEADER: forged_user} if forged_user else None)
    if session is not None:
        context.add_cookies([{"name": COOKIE, "value": session, "url": proxy_url}])
    return context, context.new_page()


def wait_text(page, text: str, timeout_ms: int = 300_000) -> str:
    page.get_by_text(text, exact=False).first.wait_for(timeout=timeout_ms)
    return page.inner_text("body")


def test_two_users_behind_the_proxy_each_see_only_their_tenant(proxied: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            alice_ctx, alice = signed_in_page(browser, proxied, "s-alice")
            bob_ctx, bob = signed_in_page(browser, proxied, "s-bob", forged_user="alice@example.com")
            # both sessions open at once on one server (with a question and no tenant of theirs chosen, the page
            # names the tenants the user may open); Bob opens his once Alice's session (its WebSocket) is open, so
            # Caddy's least_conn gives him the other worker (between idle workers it draws at random)
            alice.goto(f"{proxied}/?{urllib.parse.urlencode({'q': PX7})}", wait_until="domcontentloaded")
            body = wait_text(alice, "yours here: lumen")
            assert "Signed in as alice@example.com" in body and "ventura" not in body.lower()
            bob.goto(f"{proxied}/?{urllib.parse.urlencode({'q': VT3, 'tenant': 'lumen'})}",
                     wait_until="domcontentloaded")
            body = wait_text(bob, "yours here: ventura")  # the forged header did not make him Alice
            assert "Signed in as bob@example.com" in body
            workers = [next(c["value"] for c in ctx.cookies() if c["name"] == "retrieval_worker")
                       for ctx in (alice_ctx, bob_ctx)]
            assert len(set(workers)) == 2  # one worker each, the header reaching both
            assert "URL parameter ignored: tenant: not one of the tenants you may open" in body
            assert "lumen" not in body.lower() and "alice" not in body.lower()

            # Alice asks about her own tenant while Bob's session stays open
            query = urllib.parse.urlencode({"q": PX7, "tenant": "lumen"})
            alice.goto(f"{proxied}/?{query}", wait_until="domcontentloaded")
            body = wait_text(alice, "Answered with")
            assert "lumen-px7" in body and "ventura" not in body.lower()
            bob.reload(wait_until="domcontentloaded")
            body = wait_text(bob, "yours here: ventura")
            assert "lumen" not in body.lower()
            alice_ctx.close()
            bob_ctx.close()

            # a browser the proxy has not signed in: its own header is dropped, so it names nobody
            stranger_ctx, stranger = signed_in_page(browser, proxied, None, forged_user="alice@example.com")
            stranger.goto(f"{proxied}/?{urllib.parse.urlencode({'q': PX7, 'tenant': 'lumen'})}",
                          wait_until="domcontentloaded")
            body = wait_text(stranger, "Not authorised")
            assert "Not authorised: sign in to use this workbench." in body
            assert "lumen" not in body.lower() and "ventura" not in body.lower()
            stranger_ctx.close()
        finally:
            browser.close()
