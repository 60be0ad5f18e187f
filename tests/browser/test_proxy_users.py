"""Two users behind a trusted reverse proxy in front of ``python -m retrieval serve --workers 2`` (README,
"Deploying for several users"): the proxy signs each browser in by its session cookie, sets ``X-Forwarded-User``
on every request (the page's HTTP requests and its WebSocket) and overwrites any copy the client sends; the
Caddy that serve starts passes it through from that proxy's address (``RETRIEVAL_TRUSTED_PROXY``) to the browser's
worker (Alice and Bob get one each); the app reads the user from
that header (``RETRIEVAL_USER_HEADER``) and the access policy gives Alice ``lumen`` and Bob ``ventura``.

Alice and Bob browse at the same time (two Chromium contexts, one server): each sees only their own tenant,
Bob's forged ``X-Forwarded-User: alice@…`` does not make him Alice, a link naming the other tenant is ignored,
and a browser the proxy has not signed in sees one "Not authorised" line whatever header it sends.

Each signed-in user also has an uploaded collection of their own ("My documents", kept under the served app's write
root, ``uploads/<digest of the user>/``; the write root is a data root too): what Alice uploads is never shown to
Bob, whether he opens his own collection, names her collection's path (a link, the corpus box, the Evaluation and
Team judging pages' boxes) or opens the folder above it as a corpus.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import socket
import threading
import urllib.parse
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from helpers.browser import CHROMIUM, CHROMIUM_ARGS, IDLE_JS, running_app, timing_caption, watch_runs


pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent: install it with "
                                "`apt-get install -y chromium` to run the browser tests")

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
def write_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The served app's only write root (the users' collections: ``uploads/`` in it), also one of its data roots,
    so a path typed into the app may name anything in it: the collections are refused by what they are, not by
    lying outside the roots."""
    return Path(os.path.realpath(tmp_path_factory.mktemp("proxy_write_root")))


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory, chroma_dir: Path, write_root: Path) -> Iterator[str]:
    from retrieval.serving.roots import default_roots

    folder = tmp_path_factory.mktemp("proxy_users")
    policy = folder / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    # the proxy runs on the loopback address: serve's Caddy passes the user header from there only
    env = {"RETRIEVAL_ACCESS_POLICY": str(policy), "RETRIEVAL_USER_HEADER": HEADER,
           "RETRIEVAL_TRUSTED_PROXY": "127.0.0.1", "RETRIEVAL_WRITE_ROOTS": str(write_root),
           "RETRIEVAL_DATA_ROOTS": os.pathsep.join([str(write_root), *map(str, default_roots())]),
           "RETRIEVAL_UPLOADS_PATH": ""}  # the default: uploads/ in the first write root
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


#: Alice's upload: a file name and a sentence nothing else in the corpora holds.
SECRET_NAME = "segredo-alice.md"
SECRET = "O código do cofre da Alice é 7319."
#: The answer's tier line, whichever tier: the page laid out an answer (or said that none passed the gate).
TIER = re.compile(r"Answered with|No answer: no evidence passed the gate")
SETTLED_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
    && !document.querySelector('[data-stale="true"]');
}"""


def settle(page, timeout_ms: int = 300_000) -> None:
    page.wait_for_timeout(300)
    page.wait_for_function(SETTLED_JS, timeout=timeout_ms)


def nothing_of_alice(page, where: str, typed: tuple[str, ...] = ()) -> str:
    """The page's whole text (and its HTML) holds neither Alice's file name, nor her sentence, nor its number, nor
    her name, once the paths Bob typed himself (``typed``: echoed in his refusal lines and his boxes) are taken out;
    ``where`` names the step in the failure. Returns the page's text."""
    body, html = page.inner_text("body"), page.content()
    for path in sorted(typed, key=len, reverse=True):  # the longest first: one may hold another
        body, html = body.replace(path, "<typed>"), html.replace(path, "<typed>")
    for text in (body, html):  # the number alone in the text only (the HTML's generated class names are random)
        for secret in (SECRET_NAME, "segredo-alice", SECRET, "cofre da Alice") + (("7319",) if text is body else ()):
            assert secret not in text, f"{where}: {secret!r} leaked:\n{body[-3000:]}"
    assert "alice" not in body.lower(), f"{where}: Alice named:\n{body[-3000:]}"
    return body


def ask(page, question: str) -> None:
    """Type ``question``, press Ask, wait until the page is laid out with a new timing line."""
    before = timing_caption(page)
    page.get_by_label("Question", exact=True).fill(question)
    watch_runs(page)
    page.get_by_role("button", name="Ask").click()
    page.wait_for_function(IDLE_JS, arg=before, timeout=300_000)


def refused(page, raw: str, after: str = "", before: str = "") -> None:
    """Wait for the one-line refusal of the path ``raw`` as inside the uploaded collections' folder (``before`` and
    ``after``: the words the page puts around it)."""
    line = (f"{before}refused: '{raw}' is inside the uploaded collections' folder; your own documents open from the "
            f"sidebar's \"My documents\"{after}")
    page.get_by_text(line).first.wait_for(timeout=120_000)
    settle(page)


def submit_box(page, label: str, value: str) -> None:
    box = page.get_by_role("textbox", name=label, exact=True)
    box.wait_for(timeout=300_000)
    box.fill(value)
    box.press("Enter")
    settle(page)


def test_one_users_uploads_are_never_shown_to_another(proxied: str, write_root: Path) -> None:
    """Alice uploads a Markdown file through the sidebar's uploader and is answered from it; Bob, signed in at the
    same time, never sees its name or its text: his own collection is empty, her collection's path is refused
    (a link, the corpus box, the Evaluation and Team judging pages), and the write root opened as a folder corpus
    reads the other file there but skips her collection."""
    from playwright.sync_api import sync_playwright

    collection = write_root / "uploads" / hashlib.sha256(b"alice@example.com").hexdigest()[:24]
    (write_root / "aviso-publico.md").write_text("# Aviso\n\nA recepção do prédio atende das 9h às 17h.\n",
                                                 encoding="utf-8")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            alice_ctx, alice = signed_in_page(browser, proxied, "s-alice")
            bob_ctx, bob = signed_in_page(browser, proxied, "s-bob")

            # 1. Alice chooses the file in the sidebar's uploader; the page opens her collection; she asks
            alice.goto(proxied, wait_until="domcontentloaded")
            alice.get_by_label("Question", exact=True).wait_for(timeout=300_000)
            settle(alice)
            sidebar = alice.locator('[data-testid="stSidebar"]')
            uploader = sidebar.locator('[data-testid="stFileUploader"]')
            uploader.first.wait_for(timeout=120_000)
            uploader.locator('input[type="file"]').first.set_input_files(
                [{"name": SECRET_NAME, "mimeType": "text/markdown",
                  "buffer": f"# Segredo\n\n{SECRET}\n".encode("utf-8")}])
            sidebar.get_by_text("ask about it now.").first.wait_for(timeout=300_000)
            settle(alice)
            side = sidebar.inner_text()
            assert f"Added {SECRET_NAME}" in side and "My documents (1)" in side, side
            assert (collection / ".collection.json").is_file(), sorted(p.name for p in collection.parent.iterdir())
            ask(alice, "Qual é o código do cofre da Alice?")
            body = alice.inner_text("body")
            assert "7319" in body and SECRET in body, body[-3000:]
            files_before = sorted(str(p.relative_to(collection)) for p in collection.rglob("*"))

            # 2a. Bob's own collection, while Alice's session stays open: empty
            bob.goto(f"{proxied}/?corpus=%40mine", wait_until="domcontentloaded")
            bob.get_by_text("Your collection is empty").first.wait_for(timeout=300_000)
            settle(bob)
            body = nothing_of_alice(bob, "Bob's own collection")
            assert "Signed in as bob@example.com" in body and "My documents (0)" in body, body[-3000:]

            # 2b. her collection's path: in a link (as the corpus, the questions, the judgments file), then typed
            files = sorted(p for p in collection.iterdir() if p.is_file() and not p.name.startswith("."))
            assert [p.suffix for p in files] == [".md"], files
            link = urllib.parse.urlencode({"corpus": str(collection), "questions": str(files[0]),
                                           "judgments": str(collection / "judged.jsonl")})
            bob.goto(f"{proxied}/?{link}", wait_until="domcontentloaded")
            bob.get_by_text("URL parameter ignored: corpus: refused").first.wait_for(timeout=300_000)
            settle(bob)
            body = nothing_of_alice(bob, "a link naming Alice's collection", (str(files[0]),))
            for key in ("corpus", "questions", "judgments"):
                assert f"URL parameter ignored: {key}: refused" in body, body[-3000:]
            assert body.count("inside the uploaded collections' folder") >= 3, body[-3000:]
            for typed in (str(collection), str(files[0]), str(collection.parent), f"{collection}/../{collection.name}"):
                submit_box(bob, "Corpus file or folder", typed)
                refused(bob, typed, "; still using the lab corpus")
                nothing_of_alice(bob, f"the corpus box naming {typed}", (typed, str(files[0])))

            # 2c. the folder above the uploads as a corpus: the other file is read, her collection skipped
            submit_box(bob, "Corpus file or folder", str(write_root))
            bob.get_by_text("1 documents · 1 chunks").first.wait_for(timeout=300_000)
            settle(bob)
            nothing_of_alice(bob, "the write root as a corpus", (str(files[0]),))
            for question in ("Qual é o código do cofre?", "Quando a recepção do prédio atende?"):
                ask(bob, question)
                assert TIER.search(bob.inner_text("body"))  # answered, or no answer passed the gate
                body = nothing_of_alice(bob, f"{question!r} over the write root", (str(files[0]),))
            assert "aviso-publico#0" in body, body[-3000:]  # the folder was searched (its other file found)

            # 2d. the Evaluation page's My set and the Team judging page's boxes
            bob.goto(f"{proxied}/Evaluation", wait_until="domcontentloaded")
            run = bob.get_by_role("button", name="Run the evaluation")
            run.wait_for(timeout=300_000)
            settle(bob)
            nothing_of_alice(bob, "the Evaluation page")
            bob.get_by_text("My set (corpus").first.click()
            settle(bob)
            lab_questions = Path(__file__).resolve().parents[2] / "data" / "lab" / "questions.jsonl"
            # her collection as the corpus; then the write root as the corpus and her file as the questions
            for corpus, questions, named in ((str(collection), str(lab_questions), str(collection)),
                                             (str(write_root), str(files[0]), str(files[0]))):
                bob.get_by_role("textbox", name="Corpus (My set)").fill(corpus)
                bob.get_by_role("textbox", name="Questions (My set)").fill(questions)
                run.click()
                refused(bob, named, "", "The evaluation did not run: ")
                nothing_of_alice(bob, f"the Evaluation page with {corpus!r}, {questions!r}", (str(files[0]),))
            bob.goto(f"{proxied}/Judging", wait_until="domcontentloaded")
            bob.get_by_text("Team judging").first.wait_for(timeout=300_000)
            settle(bob)
            nothing_of_alice(bob, "the Team judging page")
            submit_box(bob, "Question set (JSONL, BEIR or SQuAD)", str(files[0]))
            refused(bob, str(files[0]))
            submit_box(bob, "Ratings file (JSONL)", str(collection / "ratings.jsonl"))
            refused(bob, str(collection / "ratings.jsonl"))
            nothing_of_alice(bob, "the Team judging page naming Alice's files", (str(files[0]),))

            # nothing was written into her collection; she still has her document
            assert sorted(str(p.relative_to(collection)) for p in collection.rglob("*")) == files_before
            alice.reload(wait_until="domcontentloaded")
            alice.get_by_text("My documents (1)").first.wait_for(timeout=300_000)
            alice_ctx.close()
            bob_ctx.close()
        finally:
            browser.close()
