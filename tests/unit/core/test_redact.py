"""Secrets out of every output (retrieval/core/redact.py): URLs and scheme-less hosts lose their credentials,
credential parameters and token-looking path segments; the settings' dump, the log lines, the trace, the
evaluation report, the CLI's error lines and ``ask --json`` hold none of the secrets of
``RETRIEVAL_MILVUS_URI=http://root:pass@h:19530`` and ``RETRIEVAL_CHROMA_HOST=user:pw@h:8000``."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from retrieval.core.redact import (REDACTED, redact_record, redact_text, redact_url, scrub,
                                   setting_secrets)
from retrieval.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
MILVUS = "http://root:pass@h:19530"
CHROMA = "user:pw@h:8000"


@pytest.mark.parametrize("raw, shown", [
    (MILVUS, "http://***@h:19530"),
    (CHROMA, "***@h:8000"),
    ("https://h/v1?api-version=2&key=k1&token=t#frag", "https://h/v1?api-version=2&key=***&token=***#***"),
    ("https://h/v1;key=abc;mode=x/chat", "https://h/v1;key=***;mode=***/chat"),
    ("https://api.telegram.org/bot123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe",
     "https://api.telegram.org/***/getMe"),
    ("https://hooks.example.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXX1", "https://hooks.example.com/services/T000/B000/***"),
    ("http://localhost:8000/v1/chat/completions", "http://localhost:8000/v1/chat/completions"),
    (".retrieval/milvus.db", ".retrieval/milvus.db"),
    ("chroma.internal:8000", "chroma.internal:8000"),
    ("http://h:99999/v1", REDACTED),
])
def test_urls_and_hosts_lose_their_credentials(raw: str, shown: str) -> None:
    assert redact_url(raw) == shown


def test_text_loses_every_credential_it_quotes_and_keeps_the_rest() -> None:
    text = (f"Milvus at {MILVUS} unavailable; chroma {CHROMA} refused; token=abc123 password: hunter22 "
            "mailed alice@example.com about https://example.com/docs/page")
    out = redact_text(text, ["hunter22"])
    for secret in ("root:pass", "pass@", "user:pw", "pw@", "abc123", "hunter22"):
        assert secret not in out, secret
    assert "h:19530" in out and "alice@example.com" in out and "https://example.com/docs/page" in out
    assert redact_text("the key sk-LIVE-123456 leaked", ["sk-LIVE-123456"]) == "the key *** leaked"
    assert scrub({"a": ["x sk-LIVE-123456 y", 3], "sk-LIVE-123456": None}, ["sk-LIVE-123456"]) == \
        {"a": ["x *** y", 3], "***": None}
    assert scrub({"a": "token=keep me"}, []) == {"a": "token=keep me"}  # a document's text is left as it is


def test_the_settings_dump_holds_no_secret(monkeypatch) -> None:
    monkeypatch.setenv("RETRIEVAL_MILVUS_URI", MILVUS)
    monkeypatch.setenv("RETRIEVAL_CHROMA_HOST", CHROMA)
    monkeypatch.setenv("RETRIEVAL_MILVUS_TOKEN", "root:milvus-secret")
    # (user info and an API key together are refused, one would be dropped: the Milvus URI carries user info)
    monkeypatch.setenv("RETRIEVAL_LLM_BASE_URL", "https://llm.example.com/v1/llmpass1?key=llmkey1")
    monkeypatch.setenv("RETRIEVAL_LLM_API_KEY", "sk-abcdefgh")
    settings = Settings(_env_file=None)
    dumped = json.dumps(settings.public_dict())
    for secret in ("root:pass", "pass@", "pw@", "milvus-secret", "llmpass1", "llmkey1", "sk-abcdefgh"):
        assert secret not in dumped, secret
    data = settings.public_dict()
    assert data["milvus_uri"] == "http://***@h:19530" and data["chroma_host"] == "***@h:8000"
    assert data["llm_base_url"] == "https://llm.example.com"  # the LLM's endpoint: its origin alone
    assert {"pass", "milvus-secret", "llmkey1", "sk-abcdefgh"} <= set(setting_secrets(settings))


def test_log_lines_hold_no_secret(capfd) -> None:
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "cannot reach %s (%s)", (MILVUS, CHROMA), None)
    assert redact_record(record).getMessage() == "cannot reach http://***@h:19530 (***@h:8000)"
    try:
        raise RuntimeError(f"connect {MILVUS} failed with secret-token-9")
    except RuntimeError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "boom", (), sys.exc_info())
    redact_record(record, ["secret-token-9"])
    assert "root:pass" not in record.exc_text and "secret-token-9" not in record.exc_text
    assert "RuntimeError" in record.exc_text  # the traceback is kept, redacted
    # in a process: every logger, every handler
    code = ("import logging, sys\nfrom retrieval.core.redact import install_log_redaction\n"
            "logging.basicConfig(stream=sys.stderr)\ninstall_log_redaction(['tok-12345'])\n"
            f"logging.getLogger('pymilvus').error('uri %s tok-12345', {MILVUS!r})\n"
            "try:\n    raise ValueError('at user:pw@h:8000')\nexcept ValueError:\n"
            "    logging.getLogger('a.b').exception('failed')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert "http://***@h:19530 ***" in done.stderr and "***@h:8000" in done.stderr, done.stderr
    assert "pass@" not in done.stderr and "pw@" not in done.stderr and "tok-12345" not in done.stderr


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("RETRIEVAL_")}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "retrieval", *args], capture_output=True, text=True, cwd=ROOT,
                          env=full, timeout=240)


@pytest.mark.slow
def test_cli_errors_and_ask_json_hold_no_secret(tmp_path: Path) -> None:
    """``index --status`` against unreachable servers named with credentials, and ``ask --json`` whose store
    is such a server (the request runs lexical_only, the reason naming the server without them)."""
    chroma = "user:pw@127.0.0.1:1"
    done = _cli("index", "--status", RETRIEVAL_CHROMA_HOST=chroma, RETRIEVAL_CHROMA_PATH=str(tmp_path / "c"))
    assert done.returncode == 2 and "***@127.0.0.1:1" in done.stderr and "pw@" not in done.stderr, done.stderr
    done = _cli("index", "--status", RETRIEVAL_BACKEND="milvus", RETRIEVAL_MILVUS_URI="http://root:pass@127.0.0.1:1",
                RETRIEVAL_MILVUS_TIMEOUT="2")
    assert done.returncode == 2 and "http://***@127.0.0.1:1" in done.stderr and "pass" not in done.stderr, \
        done.stderr
    done = _cli("ask", "O que é o erro VT-3?", "--filter", "tenant=ventura", "--json", RETRIEVAL_CHROMA_HOST=chroma,
                RETRIEVAL_CHROMA_PATH=str(tmp_path / "c"), RETRIEVAL_MILVUS_URI="http://root:pass@h:19530",
                RETRIEVAL_LLM_API_KEY="sk-never-shown-1")
    assert done.returncode == 0, done.stderr[-2000:]
    trace = json.loads(done.stdout)
    assert trace["tier"] == "lexical_only" and trace["settings"]["chroma_host"] == "***@127.0.0.1:1"
    for secret in ("pw@", "pass@", "root:pass", "sk-never-shown-1", "dXNlcjpwdw"):
        assert secret not in done.stdout and secret not in done.stderr, secret
