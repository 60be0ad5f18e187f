"""One app worker: ``python -m retrieval.serving.worker app.py [streamlit options]``, which is ``streamlit run``
with the download files kept behind the access check.

Streamlit serves every download button's file (a report, a trace, a CSV) at ``/media/<id>.<ext>`` to whoever
asks for that URL: it checks neither the session nor the user. The id is a hash of the file's bytes, so it is
not guessed, but a URL travels (a browser's history, a shared screen, a log, a referrer). Under an access policy
whose users a trusted proxy names in a header (``RETRIEVAL_ACCESS_POLICY`` and ``RETRIEVAL_USER_HEADER``), this
worker records, for each file a page run adds, the user of that run (read from its request's header as the
page reads it: :func:`retrieval.serving.access.user_from_headers`), and answers a ``/media`` request only when
its own header names one of the file's users: a request with no user header, another user's, or the header
twice gets ``404``, as for a file that does not exist (nothing says it does).

Why in the worker and not in the proxy: the worker is the one place that knows both who made a file (the page
run) and who asks for it (the request's header, which Caddy passes only from the trusted proxy), so the check
needs no state shared between processes and holds the same behind ``retrieval serve``'s Caddy, behind another
proxy, and for workers on several machines. Caddy could only require *some* user header on ``/media``.

Without a policy, or under Streamlit's own login (no user header), the files are served as Streamlit serves them.
The patch targets Streamlit's Starlette server (``create_media_routes``, ``MemoryMediaFileStorage``) of the
pinned version; :func:`install` raises if they are not there, so a Streamlit upgrade that moves them fails the
worker's start and its test instead of serving files unchecked.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable, Iterable

from ..settings import Settings
from . import access


class MediaOwners:
    """Which users made each media file: ``file id → users``; thread-safe (page runs are threads)."""

    def __init__(self) -> None:
        self._owners: dict[str, set[str | None]] = {}
        self._lock = threading.Lock()

    def record(self, file_id: str, user: str | None) -> None:
        with self._lock:
            self._owners.setdefault(file_id, set()).add(user)

    def forget(self, file_id: str) -> None:
        with self._lock:
            self._owners.pop(file_id, None)

    def allows(self, file_id: str, user: str | None) -> bool:
        """Whether ``user`` (``None``: nobody) may fetch ``file_id``: a user among the file's makers."""
        if user is None:
            return False
        with self._lock:
            return user in self._owners.get(file_id, ())


def request_user(header: str, pairs: Iterable[tuple[str, str]]) -> str | None:
    """The user a request's headers name, as the page reads them (exactly one copy, any spelling)."""
    return access.user_from_headers(pairs, header)


def _session_user(header: str) -> str | None:
    """The user of the page run adding a file (its request's header), ``None`` outside a page run."""
    try:
        import streamlit as st
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        if get_script_run_ctx() is None:
            return None
        headers = st.context.headers
        return request_user(header, [(k, v) for k in headers for v in headers.get_all(k)])
    except Exception:  # noqa: BLE001 - no readable request: nobody
        return None


def guard_routes(routes: list[Any], owners: MediaOwners, header: str) -> list[Any]:
    """Streamlit's media routes with their ``GET``/``HEAD`` endpoint answering 404 unless the request's user
    made the file (``OPTIONS``, a CORS preflight that returns no file, is left as it is)."""
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    def guarded(endpoint: Callable[..., Any]) -> Callable[..., Any]:
        async def check(request: Any) -> Any:
            file_id = os.path.splitext(str(request.path_params.get("file_id", "")))[0]
            if not owners.allows(file_id, request_user(header, request.headers.items())):
                return PlainTextResponse("404: Not Found", status_code=404)
            return await endpoint(request)
        return check

    out = []
    for route in routes:
        methods = set(route.methods or ())
        if methods & {"GET", "HEAD"}:
            route = Route(route.path, guarded(route.endpoint), methods=sorted(methods - {"HEAD"}), name=route.name)
        out.append(route)
    return out


def install(settings: Settings, owners: MediaOwners | None = None) -> MediaOwners | None:
    """Keep the media files behind the access check in this process (before Streamlit's server starts), when
    ``settings`` name a policy and a user header; ``None`` (nothing patched) otherwise.

    Raises:
        RuntimeError: the Streamlit internals this patches are not there (another Streamlit version).
    """
    if not settings.access_policy.strip() or not settings.user_header:
        return None
    try:
        from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
        from streamlit.web.server.starlette import starlette_app, starlette_routes
    except ImportError as exc:
        raise RuntimeError(f"this Streamlit has no Starlette media routes to guard ({exc})") from None
    if not hasattr(starlette_app, "create_media_routes") or not hasattr(MemoryMediaFileStorage, "load_and_get_id"):
        raise RuntimeError("this Streamlit's media routes are not where the download guard expects them")
    owners = owners or MediaOwners()
    header = settings.user_header
    original_routes = starlette_routes.create_media_routes
    original_load = MemoryMediaFileStorage.load_and_get_id
    original_delete = MemoryMediaFileStorage.delete_file

    def create_media_routes(media_storage: Any, base_url: str | None) -> list[Any]:
        return guard_routes(original_routes(media_storage, base_url), owners, header)

    def load_and_get_id(self: Any, path_or_data: Any, mimetype: str, kind: Any, filename: str | None = None) -> str:
        file_id = original_load(self, path_or_data, mimetype, kind, filename)
        owners.record(file_id, _session_user(header))
        return file_id

    def delete_file(self: Any, file_id: str) -> None:
        original_delete(self, file_id)
        owners.forget(file_id)

    starlette_routes.create_media_routes = create_media_routes
    starlette_app.create_media_routes = create_media_routes
    setattr(MemoryMediaFileStorage, "load_and_get_id", load_and_get_id)  # a method replaced on the class itself
    setattr(MemoryMediaFileStorage, "delete_file", delete_file)
    return owners


def main(argv: list[str] | None = None) -> None:  # pragma: no cover - runs as the worker process
    """``streamlit run`` of ``argv`` (the app script and Streamlit's options) with :func:`install` first."""
    args = list(sys.argv[1:] if argv is None else argv)
    install(Settings())
    from streamlit.web import cli as streamlit_cli

    sys.argv = ["streamlit", "run", *args]
    streamlit_cli.main()


if __name__ == "__main__":  # pragma: no cover
    main()
