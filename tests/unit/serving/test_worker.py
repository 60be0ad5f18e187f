"""Downloads behind the access check (retrieval/serving/worker.py): a download button's file is served only to a
request whose user header names the user of the page run that made it.

The end-to-end test runs the real worker (``python -m retrieval.serving.worker``, Streamlit's server with the
guard) on a tiny page of its own instead of the workbench's app (what is tested is the media route, and the app
would load its models): the page offers a download of a text naming its user. Alice's session is opened on the
app's WebSocket (Streamlit's protocol, as a browser speaks it) with her header; then her file's URL is fetched
with her header (200), Bob's (404), none (404), hers twice (404). Without a policy the worker serves as
Streamlit does.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from retrieval.serving import worker
from retrieval.serving.serve import free_port
from retrieval.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
PAGE = '''import streamlit as st
user = st.context.headers.get("X-Forwarded-User", "nobody")
st.download_button("Report", ("the report of " + user).encode(), "report.txt", "text/plain", on_click="ignore")
'''


def test_owners_allow_only_the_users_who_made_a_file() -> None:
    owners = worker.MediaOwners()
    owners.record("f1", "alice")
    owners.record("f1", "bob")  # the same bytes made by two users: one id, both may fetch it
    owners.record("f2", None)  # made outside a page run: nobody
    assert owners.allows("f1", "alice") and owners.allows("f1", "bob")
    assert not owners.allows("f1", None) and not owners.allows("f1", "Alice") and not owners.allows("f2", "alice")
    assert not owners.allows("f3", "alice")
    owners.forget("f1")
    assert not owners.allows("f1", "alice")
    assert worker.install(Settings(_env_file=None)) is None  # no policy: nothing patched


def _wait(url: str, proc: subprocess.Popen, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the worker exited"
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(url)


async def _download_url(base: str, user: str) -> str:
    import aiohttp
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = BackMsg()
    msg.rerun_script.query_string = ""
    msg.rerun_script.page_script_hash = ""
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(base.replace("http://", "ws://") + "/_stcore/stream", protocols=("streamlit",),
                                   headers={"Origin": base, "X-Forwarded-User": user}) as ws:
            await ws.send_bytes(msg.SerializeToString())
            async for frame in ws:
                forward = ForwardMsg()
                forward.ParseFromString(frame.data)
                if forward.WhichOneof("type") == "delta" and forward.delta.WhichOneof("type") == "new_element":
                    element = forward.delta.new_element
                    if element.WhichOneof("type") == "download_button":
                        return element.download_button.url
                if forward.WhichOneof("type") == "script_finished":
                    break
    raise AssertionError("no download button on the page")


def _get(url: str, headers: list[tuple[str, str]]) -> tuple[int, bytes]:
    """A GET of ``url`` with exactly ``headers`` (a name may repeat)."""
    import http.client

    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.putrequest("GET", parts.path)
        for key, value in headers:
            conn.putheader(key, value)
        conn.endheaders()
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


@pytest.mark.parametrize("guarded", [True, False])
def test_a_download_reaches_only_the_user_who_made_it(tmp_path: Path, guarded: bool) -> None:
    page = tmp_path / "page.py"
    page.write_text(PAGE, encoding="utf-8")
    policy = tmp_path / "policy.yaml"
    policy.write_text("users:\n  alice@example.com: [lumen]\n  bob@example.com: [ventura]\n", encoding="utf-8")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRIEVAL_") or k == "RETRIEVAL_READER_STATES_AT_INDEX"}
    if guarded:
        env.update(RETRIEVAL_ACCESS_POLICY=str(policy), RETRIEVAL_USER_HEADER="X-Forwarded-User")
    proc = subprocess.Popen([sys.executable, "-m", "retrieval.serving.worker", str(page), "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true",
                             "--browser.gatherUsageStats", "false"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait(f"{base}/_stcore/health", proc)
        path = asyncio.run(_download_url(base, "alice@example.com"))
        url = urllib.parse.urljoin(base + "/", path.lstrip("/"))
        assert _get(url, [("X-Forwarded-User", "alice@example.com")]) == (200, b"the report of alice@example.com")
        others = [[("X-Forwarded-User", "bob@example.com")], [],
                  [("X-Forwarded-User", "alice@example.com"), ("x-forwarded-user", "alice@example.com")],
                  [("X-Forwarded-User", "Alice@example.com")]]
        for headers in others:
            status, body = _get(url, headers)
            if guarded:
                assert status == 404 and b"alice" not in body, headers
            else:
                assert status == 200, headers
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
