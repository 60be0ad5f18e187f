"""``models pull``: fetch a cross-encoder into the local Hugging Face cache, where a model hub is reachable.

Reachability is checked first with one short HEAD request (a few seconds at most), so a machine without a
hub gets one line at once instead of the hub client's retries. ``HF_HUB_OFFLINE=1`` is respected: nothing
is contacted and the command says so.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path

from ..core.errors import first_line
from .reads import INTERRUPTS

DEFAULT_CROSS_ENCODER = "BAAI/bge-reranker-v2-m3"
FALLBACK_CROSS_ENCODER = "BAAI/bge-reranker-base"


class HubUnreachable(Exception):
    """No model hub can be reached (offline mode, no network, or the endpoint does not answer)."""


def hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def looks_like_path(name: str) -> bool:
    """``name`` is meant as a local path (absolute, ``~``, ``.``-relative, or an existing file or folder)."""
    return name.startswith(("/", "~", ".", "\\")) or Path(name).expanduser().exists()


def model_folder_problem(name: str) -> str | None:
    """Why the local path ``name`` is not a model folder (``None`` when it is one: a folder with config.json)."""
    path = Path(name).expanduser()
    if not path.exists():
        return "no such file or folder"
    if not path.is_dir():
        return "a file, not a model folder"
    if not (path / "config.json").is_file():
        return "a folder without config.json, not a model folder"
    return None


def on_disk(name: str) -> bool:
    """``name`` is a local model folder, or a model id whose files the local Hugging Face cache holds (a
    check that reads the disk only: no network, no model library)."""
    if looks_like_path(name):
        return model_folder_problem(name) is None
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - installed with sentence-transformers
        return False
    try:
        found = try_to_load_from_cache(name, "config.json")
    except BaseException as exc:  # noqa: BLE001 - a malformed id (or a native panic) is simply not in the cache
        if isinstance(exc, INTERRUPTS):
            raise
        return False
    return isinstance(found, str)


def cache_folder() -> str:
    """Where the Hugging Face cache lives on this machine (``HF_HOME`` / ``HF_HUB_CACHE`` respected)."""
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


def check_hub(timeout_s: float = 3.0) -> str:
    """Return the hub endpoint when it answers a HEAD request within ``timeout_s``.

    Raises:
        HubUnreachable: ``HF_HUB_OFFLINE`` is set, or the endpoint does not answer.
    """
    endpoint = hub_endpoint()
    if _truthy(os.environ.get("HF_HUB_OFFLINE")):
        raise HubUnreachable(f"no model hub is reachable: HF_HUB_OFFLINE is set (unset it to download from {endpoint})")
    request = urllib.request.Request(endpoint, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s):
            return endpoint
    except urllib.error.HTTPError:
        return endpoint  # it answered (a 4xx/5xx still means the host is reachable)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise HubUnreachable(f"no model hub is reachable ({endpoint}: {str(reason)[:120] or exc.__class__.__name__})"
                             "; copy the model folder to this machine and set RETRIEVAL_RERANKER_MODEL to its path"
                             ) from None


def pull(name: str, timeout_s: float = 3.0) -> str:
    """Download ``name`` into the Hugging Face cache (progress bars on stderr); return its local path.

    When ``name`` is the default cross-encoder and it cannot be fetched, the fallback is tried.

    Raises:
        HubUnreachable: see :func:`check_hub`.
        RuntimeError: the hub answered but the model could not be downloaded.
    """
    check_hub(timeout_s)
    from huggingface_hub import snapshot_download

    names = [name] + ([FALLBACK_CROSS_ENCODER] if name == DEFAULT_CROSS_ENCODER else [])
    errors = []
    for candidate in names:
        try:
            return snapshot_download(candidate)
        except BaseException as exc:  # noqa: BLE001 - reported in one line by the CLI (hf_xet's Rust panic too)
            if isinstance(exc, INTERRUPTS):
                raise
            errors.append(f"{candidate}: {exc.__class__.__name__}: {first_line(exc, 120)}")
    raise RuntimeError("could not download " + "; ".join(errors))
