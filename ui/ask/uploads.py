"""The sidebar's uploader and the analyst's own collection ("My documents"): files chosen in the browser are
checked, written, read and indexed while the page watches (a bar per file: read, then embedded), every refusal one
line naming the file; the collection's documents are listed with their pages and chunks, each removable. The work
is :mod:`retrieval.serving.uploads`'s; this module lays it out."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import streamlit as st

from retrieval.core.errors import PathRefused, RetrievalError
from retrieval.ingest.collection import Entry
from retrieval.ingest.formats import FORMATS
from retrieval.ingest.upload import accepted_extensions
from retrieval.pipeline.workbench import forget_reader_states
from retrieval.serving import uploads

from .. import resources
from ..escape import code, md
from ..format import num
from ..i18n import t
from ..intake import counted
from ..reasons import reason
from .page import MINE  # noqa: F401 - the link's name of the collection, used by the sidebar



def owner(page: Any) -> str:
    """Whose collection this page opens: the signed-in user under an access policy, else the single user."""
    return page.access.user if page.access.restricted and page.access.user else uploads.LOCAL_OWNER


def folder(page: Any) -> Path | None:
    """The folder of this user's collection (``None``: the uploads folder is misconfigured, said on the page)."""
    try:
        return uploads.collection_for(page.base, owner(page)).root
    except PathRefused as exc:
        st.error(reason(str(exc), page.lang))
        return None


def generation(page: Any) -> int:
    """The collection's manifest generation (moved on by each change, whichever process made it)."""
    try:
        return uploads.collection_for(page.base, owner(page)).manifest().generation
    except Exception:  # a damaged manifest or a misconfigured folder: the load says why
        return -1


def documents(page: Any) -> list[Entry]:
    try:
        return uploads.entries(page.base, owner(page))
    except RetrievalError:
        return []


def _indexer(page: Any, waiting: Callable[[Any], None]) -> Callable[[Path, Any], Any]:
    """Index the collection in ``folder`` on this process' shared Workbench of it (built on first use)."""
    key = resources.index_key(page.base)

    def index(path: Path, on_progress: Any) -> Any:
        corpus = str(path)
        if resources.is_loaded(corpus, key):
            bench = resources.open_workbench_cached(corpus, key)
            state = bench.load_corpus(corpus, on_progress=on_progress, on_wait=waiting)
        else:
            bench = resources.open_workbench_cached(corpus, key, on_progress or (lambda *_: None), waiting)
            state = bench.state
        resources.store_states_later(bench)  # the new chunks read by the reader, in the background
        return state

    return index


class _Bars:
    """A line and a bar per file while an upload is worked on: read, then its chunks embedded, then indexed."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.slots: dict[str, Any] = {}

    def __call__(self, name: str, stage: str, done: int, total: int) -> None:
        slot = self.slots.get(name)
        if slot is None:
            slot = self.slots[name] = st.empty()
        shown = code(name)
        if stage == "read":
            slot.progress(0.3, text=t("up_read", self.lang, name=shown))
        elif stage == "embedding":
            share = done / max(1, total)
            slot.progress(0.3 + 0.7 * share, text=t("up_embedding", self.lang, name=shown,
                                                    done=num(done, ",d", self.lang), total=num(total, ",d", self.lang)))
        elif stage == "indexed":
            slot.progress(1.0, text=t("up_indexed", self.lang, name=shown, chunks=num(done, ",d", self.lang)))
        elif stage == "refused":
            slot.empty()


def upload_panel(page: Any, waiting: Callable[[Any], None]) -> None:
    """The uploader: choosing files starts the work (no other click); then the page opens the collection."""
    ss, lang = st.session_state, page.lang
    ss.setdefault("upload_gen", 0)
    extensions = [ext.lstrip(".") for ext in accepted_extensions()]
    chosen = st.file_uploader(t("up_label", lang), type=extensions, accept_multiple_files=True,
                              key=f"uploader_{ss.upload_gen}", help=t("up_help", lang, limits=limits_line(page)),
                              max_upload_size=widget_limit_mb(page.base))
    if not chosen:
        return
    files = [(f.name, f.getvalue()) for f in chosen]
    with st.status(t("up_working", lang, n=num(len(files), ",d", lang)), expanded=True) as status:
        try:
            changed = uploads.add_uploads(page.base, owner(page), files, _indexer(page, waiting),
                                          on_file=_Bars(lang), on_wait=waiting)
        except (RetrievalError, OSError) as exc:
            status.update(label=t("up_failed", lang, error=reason(str(exc), lang)), state="error")
            ss.upload_gen += 1
            return
        status.update(label=t("up_done", lang, n=num(len(changed.entries), ",d", lang),
                              s=num(changed.seconds, ".1f", lang)),
                      state="complete" if changed.entries or not changed.refused else "error")
    ss.upload_notes = {"added": [(e.name, changed.chunks.get(e.doc_id, 0)) for e in changed.entries],
                       "refused": [r.line(lang) for r in changed.refused], "seconds": changed.seconds}
    ss.upload_gen += 1   # a fresh uploader: the files just taken are not taken again
    if changed.entries:
        ss._to_mine = True
    st.rerun()


def notes(lang: str) -> None:
    """What the last upload did, once: each document added and each file refused, one line each."""
    done = st.session_state.pop("upload_notes", None)
    if not done:
        return
    for name, chunks in done["added"]:
        st.success(t("up_added", lang, name=code(name), chunks=counted("up_chunks", chunks, lang)))
    for line in done["refused"]:
        st.error(t("up_refused", lang, line=md(line)))


def widget_limit_mb(settings: Any) -> int:
    """The size per file the uploader states under its button ("50MB per file") and checks in the browser, in whole
    MB: the app's own limit (``upload_max_file_mb``, rounded up: the app refuses what lies between with its own
    line), never above Streamlit's ``server.maxUploadSize``, which the server enforces whatever the widget says.
    Left to Streamlit, the widget would state its 200 MB default while the app refuses above 50 MB."""
    server = int(st.get_option("server.maxUploadSize"))
    return max(1, min(math.ceil(settings.upload_max_file_mb), server))


def limits_line(page: Any) -> str:
    s, lang = page.base, page.lang
    return t("up_limits", lang, file=num(s.upload_max_file_mb, ",.0f", lang), files=num(s.upload_max_files, ",d", lang),
             total=num(s.upload_max_collection_mb, ",.0f", lang), pages=num(s.upload_max_pdf_pages, ",d", lang))


def documents_list(page: Any, entries: Sequence[Entry], state: Any, waiting: Callable[[Any], None]) -> None:
    """The collection's documents: name, format, pages, chunks, and a button that removes one."""
    lang = page.lang
    pages = state.intake.doc_file if state is not None and state.intake is not None else {}
    chunks: dict[str, int] = {}
    for chunk in (state.chunks if state is not None else ()):
        chunks[chunk.parent_id] = chunks.get(chunk.parent_id, 0) + 1
    for entry in entries:
        left, right = st.columns([6, 1], vertical_alignment="center")
        n_pages = pages.get(entry.doc_id, ("", 0))[1]
        parts = [FORMATS.get(entry.format).label(lang) if entry.format in FORMATS else entry.format]
        if n_pages:
            parts.append(counted("up_pages", n_pages, lang))
        parts.append(counted("up_chunks", chunks.get(entry.doc_id, 0), lang))
        left.markdown(f"{md(entry.name)}  \n:gray[{' · '.join(parts)}]")
        if right.button(":material/delete:", key=f"rm_{entry.doc_id}", help=t("up_remove", lang, name=entry.name)):
            _remove(page, entry, waiting)


def _remove(page: Any, entry: Entry, waiting: Callable[[Any], None]) -> None:
    lang, key = page.lang, resources.index_key(page.base)
    path = folder(page)
    if path is None:
        return
    corpus = str(path)
    bench = resources.open_workbench_cached(corpus, key) if resources.is_loaded(corpus, key) else None

    def drop() -> None:
        if bench is not None and bench.state is not None and bench.state.store is not None:
            bench.state.store.drop()

    def index(folder_path: Path, on_progress: Any) -> Any:
        nonlocal bench
        if bench is None:
            bench = resources.open_workbench_cached(corpus, key, lambda *_: None, waiting)
        return bench.load_corpus(str(folder_path), on_progress=on_progress, on_wait=waiting)

    def forget(chunks: Any) -> int:   # the collection's reader forgets them (from its folder when not loaded)
        return bench.forget_passages(chunks) if bench is not None else forget_reader_states(page.base, chunks)

    started = time.perf_counter()
    try:
        uploads.remove_documents(page.base, owner(page), [entry.doc_id], index, drop, forget, on_wait=waiting)
    except RetrievalError as exc:
        st.session_state.upload_notes = {"added": [], "refused": [f"{entry.name}: {exc}"], "seconds": 0.0}
        st.rerun()
    st.session_state.removed_note = t("up_removed", lang, name=code(entry.name),
                                      s=num(time.perf_counter() - started, ".1f", lang))
    st.rerun()
