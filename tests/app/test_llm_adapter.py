"""Generation by an authorized LLM, against a tiny local chat-completions server (no network, no mocks of
our code): the prompt carries the question and the numbered context, citations are checked against the
chunks sent, token usage lands in the costs, and the API key never reaches the trace or the page."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest

from retrieval.stages.answer import context_line

SECRET = "sk-secret-xyz"
QUESTION = "O PX-7 não foi ativado apesar do pagamento, o que faço?"
APP = str(Path(__file__).resolve().parents[2] / "app.py")


class FakeChatServer:
    """POST /v1/chat/completions → a fixed completion with ``usage``; records every request."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.reply = "Abra um chamado na categoria Ativação [1]. Não compre outra licença [9]."
        self.usage = {"prompt_tokens": 321, "completion_tokens": 17, "total_tokens": 338}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                server.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self.send_error(404)
                    return
                payload = json.dumps({
                    "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": server.reply}}],
                    "usage": server.usage,
                }).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "FakeChatServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def chat_server() -> Iterator[FakeChatServer]:
    with FakeChatServer() as server:
        yield server


@pytest.fixture(scope="module")
def bench(app_chroma_dir: Path):
    """A lab workbench on the session's app store (already indexed when the app tests ran first)."""
    from retrieval.backends.embedders import load_embedder
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    settings = Settings(chroma_path=app_chroma_dir, _env_file=None)
    embedder, why = load_embedder(settings.embedding_model, settings.allow_downloads)
    assert embedder is not None, why
    wb = Workbench(settings, embedder=embedder, progress=False)
    wb.load_corpus(None)
    return wb


def llm_settings(bench, server: FakeChatServer):
    return bench.settings.with_overrides(llm_base_url=server.base_url, llm_model="fake", llm_api_key=SECRET,
                                         llm_allow_hosts="127.0.0.1")  # the fake server is loopback


def test_llm_answer_prompt_citations_costs_and_no_secret(bench, chat_server: FakeChatServer) -> None:
    trace = bench.ask(QUESTION, {"tenant": "lumen"}, settings=llm_settings(bench, chat_server))
    data = trace.to_dict()

    # One request, with the key as the bearer token, the question and the numbered context.
    assert len(chat_server.requests) == 1
    request = chat_server.requests[0]
    assert request["headers"].get("authorization") == f"Bearer {SECRET}"
    assert request["body"]["model"] == "fake"
    prompt = "\n".join(m["content"] for m in request["body"]["messages"])
    assert QUESTION in prompt
    assert data["final"], "the lab question should pass the gate"
    for number, item in enumerate(data["final"], start=1):  # each chunk one line of data: {"n": 1, "texto": …}
        assert context_line(number, item["text"]) in prompt

    # [1] is kept and mapped to the first final chunk; [9] (only 5 chunks sent) is dropped.
    answer = data["answer"]
    assert answer["adapter"] == "llm:fake" and data["models"]["answer_adapter"] == "llm:fake"
    assert not answer["abstained"]
    assert answer["citations"] == [data["final"][0]["chunk_id"]]
    assert answer["dropped_citations"] == ["[9]"]
    assert "[1]" in answer["text"] and "[9]" not in answer["text"]
    assert all(c in [f["chunk_id"] for f in data["final"]] for s in answer["sentences"] for c in s["citations"])

    # Token usage from the server's `usage` block.
    assert data["costs"] == {"llm_calls": 1, "input_tokens": 321, "output_tokens": 17}

    # The key is never written to the trace.
    assert SECRET not in json.dumps(data, ensure_ascii=False)
    assert data["settings"]["llm_api_key_set"] is True


def test_llm_no_evidence_reply_is_an_abstention_with_costs(bench, chat_server: FakeChatServer) -> None:
    chat_server.reply = "SEM_EVIDENCIA"
    data = bench.ask(QUESTION, {"tenant": "lumen"}, settings=llm_settings(bench, chat_server)).to_dict()
    assert data["answer"]["abstained"] is True
    assert data["answer"]["citations"] == []
    assert data["costs"]["input_tokens"] == 321


def test_page_names_the_llm_adapter_and_never_shows_the_key(chat_server: FakeChatServer,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("RETRIEVAL_LLM_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("RETRIEVAL_LLM_MODEL", "fake")
    monkeypatch.setenv("RETRIEVAL_LLM_API_KEY", SECRET)
    monkeypatch.setenv("RETRIEVAL_LLM_ALLOW_HOSTS", "127.0.0.1")
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"q": QUESTION, "tenant": "lumen", "ab": "false"})
    at.run()
    assert not at.exception
    assert any("Dropped citations" in c.value and "[9]" in c.value for c in at.caption)
    rendered = "\n".join(str(getattr(node, "proto", "")) for node in _walk(at._tree))
    at.session_state["view_tab"] = "Timings, costs, downloads"  # the developer's lines: the adapter, the models
    at.run()
    assert not at.exception
    assert any(c.value == "Answered by `llm:fake`" for c in at.caption)
    rendered += "\n".join(str(getattr(node, "proto", "")) for node in _walk(at._tree))
    assert SECRET not in rendered
    assert len(chat_server.requests) == 1


def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)
