"""The guarded LLM call against a hostile OpenAI-compatible server on 127.0.0.1 (a real HTTP server in a thread,
no mocks of our code): the key it echoes never reaches the answer or the trace, a slow drip is cut at the
deadline, empty, oversized and malformed replies are refused, an uncited answer is marked, and the base URL's
credentials never reach the trace."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

from retrieval.core.llm import ChatClient, LLMFailure, redact_url, url_secrets
from retrieval.core.types import FinalItem
from retrieval.settings import Settings
from retrieval.stages.answer import UNCITED, LLMAnswerer, answer_stage
from retrieval.stages.transforms import LLMTransformer

SECRET = "sk-hostile-0123456789"
QUESTION = "Quando o PX-7 é ativado?"
CONTEXT = [FinalItem("a#0", "a", 1, 1.0, 0.9, "O PX-7 é ativado em 24 horas após o pagamento."),
           FinalItem("b#0", "b", 2, 0.5, 0.85, "O reembolso leva 7 dias.")]
DRIP_SECONDS = 0.05  # one byte every 50 ms: each read succeeds, so a per-read timeout never fires
DEADLINE = 1.0
MARGIN = 1.0  # thread start, client set-up and a loaded machine
LOCAL = "127.0.0.1"  # the hostile server's address: loopback, refused unless RETRIEVAL_LLM_ALLOW_HOSTS lists it


class HostileServer:
    """A chat-completions server whose reply ``mode`` is set by the test: ``text`` (``reply``), ``echo`` (the
    ``Authorization`` credential in the reply), ``drip_body`` / ``drip_head`` (a byte at a time, for up to 30 s or until
    the client leaves), ``raw`` (``reply`` as the whole body). Records each request's path, query and headers."""

    def __init__(self) -> None:
        self.mode = "text"
        self.reply: Any = "O PX-7 é ativado em 24 horas [1]."
        self.usage: Any = {"prompt_tokens": 50, "completion_tokens": 9}
        self.requests: list[dict[str, Any]] = []
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                url = urlsplit(self.path)
                server.requests.append({"path": url.path, "query": parse_qs(url.query),
                                        "headers": {k.lower(): v for k, v in self.headers.items()}})
                if url.path.rstrip("/") != "/v1/chat/completions":
                    self.send_error(404)
                    return
                content = server.reply
                if server.mode == "echo":
                    credential = self.headers.get("Authorization", "").partition(" ")[2]  # Bearer or Basic
                    content = f"Sua chave é {credential} [1]."
                body = (server.reply.encode() if server.mode == "raw" else json.dumps(
                    {"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": content}}],
                     "usage": server.usage}).encode())
                head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                        "\r\n").encode()
                if server.mode == "drip_head":
                    self._drip(head + body)
                elif server.mode == "drip_body":
                    self.wfile.write(head)
                    self.wfile.flush()
                    self._drip(body + b" " * 10_000)
                else:
                    self.wfile.write(head + body)
                self.close_connection = True

            def _drip(self, data: bytes) -> None:
                ends = time.monotonic() + 30  # bounded even if nobody stops it
                for byte in data:
                    if server.stop.is_set() or time.monotonic() > ends:
                        return
                    try:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    except OSError:  # the client left: that is the point
                        return
                    time.sleep(DRIP_SECONDS)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)

    def __enter__(self) -> "HostileServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[HostileServer]:
    with HostileServer() as hostile:
        yield hostile


def settings_for(server: HostileServer, **more: Any) -> Settings:
    return Settings(_env_file=None, llm_base_url=server.base_url, llm_model="fake", llm_api_key=SECRET,
                    llm_timeout=DEADLINE, llm_allow_hosts=LOCAL, **more)


def ask(server: HostileServer, **more: Any):
    return answer_stage(QUESTION, CONTEXT, settings_for(server, **more))


def test_a_grounded_reply_is_accepted_with_its_citations_and_usage(server: HostileServer) -> None:
    answer = ask(server)
    assert answer.adapter == "llm:fake" and not answer.uncited and answer.citations == ["a#0"]
    assert answer.costs == {"llm_calls": 1, "input_tokens": 50, "output_tokens": 9}
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"


def test_a_reply_that_echoes_the_key_is_refused_and_the_extractive_answer_says_why(server: HostileServer) -> None:
    server.mode = "echo"
    answer = ask(server)
    assert answer.adapter == "local-extractive" and not answer.abstained
    assert answer.note.startswith("llm:fake reply refused (the reply holds the API key")
    assert answer.costs == {"llm_calls": 1, "input_tokens": 50, "output_tokens": 9}
    assert SECRET not in json.dumps(answer.to_dict(), ensure_ascii=False)


def test_a_transform_reply_that_echoes_the_key_is_refused(server: HostileServer) -> None:
    server.mode = "echo"
    llm = LLMTransformer.from_settings(settings_for(server))
    with pytest.raises(LLMFailure, match="API key") as refused:
        llm.run("hyde", QUESTION)
    assert refused.value.refused and SECRET not in str(refused.value)
    assert llm.costs == {"llm_calls": 1, "input_tokens": 50, "output_tokens": 9}


@pytest.mark.parametrize("mode", ["drip_body", "drip_head"])
def test_a_slow_drip_is_cut_at_the_total_deadline(server: HostileServer, mode: str) -> None:
    server.mode = mode
    started = time.monotonic()
    answer = ask(server)
    elapsed = time.monotonic() - started
    assert elapsed < DEADLINE + MARGIN, f"{mode}: the call took {elapsed:.2f} s for a {DEADLINE} s deadline"
    assert elapsed >= DEADLINE * 0.9  # it did wait for the server, up to the deadline
    assert answer.adapter == "local-extractive"
    assert answer.note.startswith(f"llm:fake failed (no complete reply within the {DEADLINE:g} s deadline)")
    assert answer.costs["llm_calls"] == 1 and answer.costs["input_tokens"] is None
    # The call's worker stops reading too (its connection is closed): no thread is left on the drip.
    gone_by = time.monotonic() + 1.0
    while any(t.name == "llm-call" for t in threading.enumerate()) and time.monotonic() < gone_by:
        time.sleep(0.02)
    assert not any(t.name == "llm-call" for t in threading.enumerate())


def test_a_transform_call_has_the_same_deadline(server: HostileServer) -> None:
    server.mode = "drip_body"
    llm = LLMTransformer.from_settings(settings_for(server))
    started = time.monotonic()
    with pytest.raises(LLMFailure, match="deadline"):
        llm.run("rewrite", QUESTION)
    assert time.monotonic() - started < DEADLINE + MARGIN


@pytest.mark.parametrize("reply", ["Abra um chamado na categoria Ativação.", "Abra um chamado [9]. Depois [0]."])
def test_an_answer_that_cites_no_chunk_of_the_context_is_marked_uncited(server: HostileServer, reply: str) -> None:
    server.reply = reply
    answer = ask(server)
    assert answer.adapter == "llm:fake" and answer.uncited and answer.citations == []
    assert answer.note == UNCITED().text() and "not a grounded answer" in answer.note
    assert answer.to_dict()["uncited"] is True
    assert answer.dropped_citations == ([] if "[9]" not in reply else ["[9]", "[0]"])


@pytest.mark.parametrize("reply, reason", [("", "empty reply"), ("   \n ", "empty reply"), (None, "empty reply"),
                                           ("x" * 201, "oversized reply (201 characters, limit 200)")])
def test_an_empty_or_oversized_reply_is_refused(server: HostileServer, reply: str | None, reason: str) -> None:
    server.reply = reply
    answer = ask(server, llm_max_reply_chars=200)
    assert answer.adapter == "local-extractive" and not answer.uncited
    assert answer.note.startswith(f"llm:fake reply refused ({reason}); extractive fallback.")
    assert answer.costs == {"llm_calls": 1, "input_tokens": 50, "output_tokens": 9}


def test_a_body_past_its_byte_bound_is_refused_before_it_is_all_read(server: HostileServer) -> None:
    server.reply = "y" * 500_000
    chat = ChatClient(server.base_url, "fake", SECRET, timeout_s=DEADLINE, max_reply_chars=100, allow_hosts=LOCAL)
    with pytest.raises(LLMFailure, match=r"oversized reply \(body over"):
        chat.complete("s", "u")


@pytest.mark.parametrize("body", ["not json", "[]", '{"choices": []}', '{"choices": [{"message": {"content": 7}}]}'])
def test_a_malformed_body_is_refused_in_our_words(server: HostileServer, body: str) -> None:
    server.mode, server.reply = "raw", body
    chat = ChatClient(server.base_url, "fake", SECRET, timeout_s=DEADLINE, allow_hosts=LOCAL)
    with pytest.raises(LLMFailure, match="malformed reply") as refused:
        chat.complete("s", "u")
    assert body not in refused.value.reason.text() or body == "[]"


def test_usage_that_is_not_a_count_is_not_recorded(server: HostileServer) -> None:
    server.usage = {"prompt_tokens": SECRET, "completion_tokens": True}
    answer = ask(server)
    assert answer.costs == {"llm_calls": 1, "input_tokens": None, "output_tokens": None}


def test_an_http_error_is_recorded_by_status_never_by_its_body(server: HostileServer) -> None:
    answer = answer_stage(QUESTION, CONTEXT, settings_for(server).with_overrides(
        llm_base_url=server.base_url.removesuffix("/v1") + "/nowhere"))
    assert answer.note.startswith("llm:fake failed (HTTP 404); extractive fallback.")


def test_the_base_url_credentials_never_reach_the_trace(server: HostileServer, tmp_path) -> None:
    """A whole request through the pipeline with ``http://user:secret@…/v1?api_key=zzz`` and an echoing server
    (no API key besides: user info and a key together are refused as settings)."""
    from retrieval.pipeline.index import build_index
    from retrieval.pipeline.workbench import Workbench

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in [
        {"id": "a", "title": "Ativação", "text": CONTEXT[0].text, "metadata": {"tenant": "t1"}},
        {"id": "b", "title": "Reembolso", "text": CONTEXT[1].text, "metadata": {"tenant": "t1"}}]), encoding="utf-8")
    base = Settings(_env_file=None)
    bench = Workbench(base, embedder=None, progress=False)
    bench.state = build_index(base, corpus, None, "no embedder in this test", lambda: (None, "unused"),
                              threading.RLock())
    url = f"http://user:secret@127.0.0.1:{server.port}/v1?api_key=zzz"
    s = base.with_overrides(llm_base_url=url, llm_model="fake", llm_timeout=DEADLINE, llm_allow_hosts=LOCAL,
                            min_bm25=0.0, reranker_model="none", support_gate=False, evidence_model=False,
                            transforms=("rewrite", "hyde"))
    server.mode = "echo"
    data = bench.ask(QUESTION, {"tenant": "t1"}, settings=s).to_dict()
    dumped = json.dumps(data, ensure_ascii=False)

    # httpx sends the userinfo as HTTP Basic in place of the bearer key: its token is a credential too.
    for secret in (SECRET, "secret", "zzz", "user:", "dXNlcjpzZWNyZXQ="):
        assert secret not in dumped, secret
    assert data["settings"]["llm_base_url"] == f"http://127.0.0.1:{server.port}"  # the origin alone
    # Three calls (rewrite, HyDE, the answer), each refused: the key went nowhere but to the server.
    assert len(server.requests) == 3 and data["costs"]["llm_calls"] == 3
    assert data["answer"]["adapter"] == "local-extractive" and data["final"]
    assert "reply refused (the reply holds the API key" in data["answer"]["note"]
    for technique in ("rewrite", "hyde"):  # the transforms fell back to their local adapter, and say why
        assert "refused (the reply holds the API key" in data["costs"]["techniques"][technique]["fallback"]
    # The base URL's query is sent as a query, on the chat-completions path.
    assert {r["path"] for r in server.requests} == {"/v1/chat/completions"}
    assert all(r["query"] == {"api_key": ["zzz"]} for r in server.requests)


def test_redact_url_removes_userinfo_credential_parameters_fragments_and_the_key() -> None:
    assert redact_url("http://user:secret@127.0.0.1:8000/v1?api_key=zzz") == "http://***@127.0.0.1:8000/v1?api_key=***"
    assert redact_url("https://h/v1?api-version=2024-06&key=k&token=t&sig=s#access_token=a") == \
        "https://h/v1?api-version=2024-06&key=***&token=***&sig=***#***"
    assert redact_url("https://h/keys/sk-abcdef/v1", ["sk-abcdef"]) == "https://h/keys/***/v1"
    assert redact_url("http://h:99999/v1") == "***" and redact_url(None) is None
    assert redact_url("http://localhost:8000/v1") == "http://localhost:8000/v1"
    assert url_secrets("http://user:pass1@h/v1?api_key=zzzz&api-version=2") == ("pass1", "dXNlcjpwYXNzMQ==", "zzzz")
    assert url_secrets("https://sk-token@h/v1") == ("sk-token", "c2stdG9rZW46")


def test_public_settings_record_the_endpoint_redacted() -> None:
    s = Settings(_env_file=None, llm_base_url="http://u:p4ss@h/v1?token=t0k3n", llm_model="m")
    public = s.public_dict()
    assert public["llm_base_url"] == "http://h" and public["llm_api_key_set"] is False  # the origin alone
    assert not any(x in json.dumps(public) for x in ("p4ss", "t0k3n"))
    s = Settings(_env_file=None, llm_base_url="http://h:8000/v1?token=t0k3n", llm_model="m", llm_api_key="k3y-x")
    public = s.public_dict()
    assert public["llm_base_url"] == "http://h:8000" and public["llm_api_key_set"] is True
    assert not any(x in json.dumps(public) for x in ("t0k3n", "k3y-x"))


def test_the_answerer_is_built_from_settings(server: HostileServer) -> None:
    answerer = LLMAnswerer.from_settings(settings_for(server, llm_max_reply_chars=123))
    assert answerer._chat.timeout_s == DEADLINE and answerer._chat.max_reply_chars == 123
    assert SECRET not in repr(answerer._chat)


@pytest.mark.parametrize("disguise", [
    lambda key: key.upper(),
    lambda key: "\u200b".join(key),  # split by zero-width spaces
    lambda key: "\u2060".join(key[:6]) + key[6:],  # word joiners in part of it
    lambda key: base64.b64encode(key.encode()).decode(),
    lambda key: "token " + base64.b64encode(b"user:" + key.encode()).decode(),  # inside a longer run
    lambda key: base64.urlsafe_b64encode(b"\xfb" + key.encode()).decode().rstrip("="),
    lambda key: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key),  # full-width letters
])
def test_a_reply_that_echoes_the_key_disguised_is_refused(server: HostileServer, disguise) -> None:
    server.reply = f"O PX-7 é ativado em 24 horas [1]. {disguise(SECRET)}"
    answer = ask(server)
    assert answer.adapter == "local-extractive"
    assert answer.note.startswith("llm:fake reply refused (the reply holds the API key")


def test_an_ordinary_reply_with_base64_and_capitals_is_kept(server: HostileServer) -> None:
    server.reply = "O PX-7 É ATIVADO EM 24 HORAS [1]. Código: " + base64.b64encode(b"nothing secret here").decode()
    answer = ask(server)
    assert answer.adapter == "llm:fake"
