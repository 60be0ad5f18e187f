"""``index``: build or refresh a corpus' index (or report it, drop it, rebuild a damaged store, encode on a
Ray cluster), and change a user's uploaded collection (``--collection`` with ``--add`` and ``--remove``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Optional

import typer

from ..core.errors import RetrievalError
from .common import CorpusOpt, SetOpt, command_settings, echo, fail, open_bench, printable, setup_logging


def _collection(settings, owner: str, add: list[Path], remove: list[str]) -> Optional[tuple[Path, Any]]:
    """Add ``add`` to and remove ``remove`` from ``owner``'s uploaded collection, a line per file on stderr and
    each refusal in one line; returns the collection's folder and the Workbench that indexed it (``None``: the
    collection is empty now)."""
    from ..ingest.collection import is_collection
    from ..pipeline.workbench import Workbench
    from ..serving import uploads

    folder = uploads.collection_for(settings, owner).root
    bench = Workbench(settings)

    def index(path: Path, on_progress: Any) -> Any:
        return bench.load_corpus(path, on_progress=on_progress)

    def waiting(holder: Any) -> None:
        typer.echo(f"waiting for process {holder.get('pid', '?')} ({holder.get('what', '')})", err=True)

    def on_file(name: str, stage: str, done: int, total: int) -> None:
        if stage in ("read", "indexed"):
            typer.echo(printable(f"{name}: {stage}" + (f", {done} chunks" if stage == "indexed" else "")), err=True)

    uploaded = []
    for path in add:
        try:
            uploaded.append((path.name, path.read_bytes()))
        except OSError as exc:
            fail(f"{path}: cannot be read ({exc.strerror or exc})")
    if remove:
        def drop() -> None:
            if bench.state is not None and bench.state.store is not None:
                bench.state.store.drop()

        if is_collection(folder) and uploads.entries(settings, owner) and bench.state is None:
            bench.load_corpus(folder)  # the index its vectors are dropped from when nothing is left
        gone = uploads.remove_documents(settings, owner, remove, index, drop, bench.forget_passages,
                                        on_wait=waiting)
        missing = sorted(set(remove) - {e.doc_id for e in gone.entries})
        for doc_id in missing:
            echo(f"{doc_id}: not in the collection")
        echo(f"removed {len(gone.entries)} document{'s' if len(gone.entries) != 1 else ''} from {folder}")
    if uploaded:
        changed = uploads.add_uploads(settings, owner, uploaded, index, on_file=on_file, on_wait=waiting)
        for refusal in changed.refused:
            typer.echo(printable(f"refused: {refusal.line()}"), err=True)
        echo(f"added {len(changed.entries)} document{'s' if len(changed.entries) != 1 else ''} to {folder} in "
             f"{changed.seconds:.1f} s")
        if not changed.entries and changed.refused:
            raise typer.Exit(1)
    if not uploads.entries(settings, owner):
        echo(f"the collection of {owner!r} is empty ({folder})")
        return None
    return folder, bench


def _states_progress():
    """A progress line on stderr while the reader reads the corpus: done, total, rate and ETA (every 2 s)."""
    last = [0.0, -1]   # when the last line was printed, and its count

    def show(done: int, total: int, eta_s: float) -> None:
        now = time.monotonic()
        if total and done != last[1] and (now - last[0] >= 2 or done == total):
            last[0], last[1] = now, done
            eta = f", about {eta_s:.0f} s left" if eta_s == eta_s and done < total else ""
            typer.echo(f"reader states: {done}/{total} passages{eta}", err=True)

    return show


def index(
    corpus: Optional[Path] = CorpusOpt,
    status: bool = typer.Option(False, "--status", help="Report the index without changing it."),
    drop: bool = typer.Option(False, "--drop", help="Remove this corpus' vector collection."),
    contextual: bool = typer.Option(False, "--contextual", help="Index a context line with each chunk "
                                    "(use RETRIEVAL_CONTEXTUAL=true for ask/app to read that index)."),
    sets: list[str] = SetOpt,
    json_: bool = typer.Option(False, "--json", help="Print one JSON object: what was read and skipped (every "
                               "file), the chunks and the vectors."),
    add: list[Path] = typer.Option([], "--add", help="Add this file (any format the folder reader reads, or a .zip "
                                   "of them) to the collection --collection names, as the app's uploader does "
                                   "(repeatable)."),
    remove: list[str] = typer.Option([], "--remove", help="Remove this document id from the collection "
                                     "--collection names (repeatable)."),
    collection: Optional[str] = typer.Option(None, "--collection", help="An uploaded collection by its owner: the "
                                             "signed-in user as the app names them, or 'local' in single-user "
                                             "mode. Alone: index it again."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Build the index again from nothing: a damaged vector "
                                 "store is moved aside (renamed <path>.damaged-<time>, not deleted) and a new one "
                                 "built; on a whole store, this corpus' vectors are dropped and embedded again."),
    ray: Optional[str] = typer.Option(None, "--ray", help="Encode the chunks on a Ray cluster at this address "
                                      "(HOST:6379, or 'local' for one started on this machine for the run); needs "
                                      "`make ray`. Vectors and states are written here as they come back."),
    ray_workers: int = typer.Option(2, "--ray-workers", help="Encoder actors on the Ray cluster (one CPU each)."),
) -> None:
    """Build or refresh the persistent index of a corpus (progress on stderr), then say what was read: files per
    format, documents, pages, chunks, and every file skipped with its reason. With --collection, a user's
    uploaded collection (the app's "My documents"): --add and --remove change it as the page does. A damaged vector
    store is one line naming --rebuild (exit 2)."""
    setup_logging()
    settings = command_settings(sets, contextual=True if contextual else None)
    if (add or remove) and collection is None:
        fail("--add and --remove change an uploaded collection: name it with --collection (its owner, or 'local')")
    if collection is not None and corpus is not None:
        fail("--corpus and --collection name two corpora: give one")
    if rebuild and (status or drop or add or remove):
        fail("--rebuild builds the index again: give it with --corpus or --collection only (not --status, --drop, "
             "--add or --remove)")
    from ..backends.base import DAMAGED

    moved = None
    try:
        from ..core.paths import LAB_CORPUS

        loaded = None
        if collection is not None:
            found = _collection(settings, collection, add, remove)
            if found is None:
                return
            path, loaded = found
        else:
            path = (corpus or LAB_CORPUS).resolve()
        if rebuild:  # before anything opens the store: a damaged one is moved aside whole
            from ..pipeline.index import rebuild_store

            moved = rebuild_store(settings, path)
            line = (f"moved the damaged vector store to {moved} (kept, not deleted); building a new one at "
                    f"{settings.chroma_path}" if moved is not None else
                    f"the vector store at {settings.chroma_path} is not damaged: {path}'s vectors were dropped; "
                    "embedding them again")
            typer.echo(printable(line), err=json_)   # stdout holds only the JSON with --json
        if status or drop:  # the store backend's own line (retrieval.backends.BACKENDS)
            from ..backends import BACKENDS

            typer.echo(BACKENDS.get(settings.backend).status(settings, path, drop))
            return
        if loaded is None or loaded.state is None:
            from ..backends.local import damaged_store

            damaged = damaged_store(settings, path)   # before anything opens it: one line, nothing else
            if damaged is not None:
                fail(damaged.text())
        if ray is not None:
            from ..pipeline.workbench import Workbench

            try:
                import ray as _ray  # noqa: F401 - installed by `make ray`
            except ImportError:
                fail("--ray needs Ray: run `make ray` (requirements-ray.txt) in this environment")
            bench = loaded or Workbench(settings)
            bench.use_cluster(ray, ray_workers)
            bench.load_corpus(path)
        else:
            bench = loaded if loaded is not None and loaded.state is not None else open_bench(settings, path)
        state = bench.state
        assert state is not None  # open_bench and load_corpus load a corpus or raise
        if DAMAGED.matches(state.store_reason):  # found while syncing: one line with the remedy
            fail(state.store_reason.text())
        states = bench.store_reader_states(_states_progress()) if settings.reader_states_at_index else None
    except RetrievalError as exc:
        fail(str(exc))
    report = state.sync
    if json_:
        typer.echo(json.dumps({
            **({"moved_aside": str(moved) if moved is not None else None} if rebuild else {}),
            "corpus": str(state.corpus_path), "documents": len(state.documents), "chunks": len(state.chunks),
            "intake": state.intake.to_dict() if state.intake else None,
            "intake_file": state.intake.written_to if state.intake else "",
            "vectors": ({"added": report.added, "updated": report.updated, "removed": report.removed,
                         "unchanged": report.unchanged} if report else None),
            "store_reason": state.store_reason.text(),
            "reader_states": states.line() if states is not None else None,
        }, indent=2))  # ASCII escapes: a file name's odd bytes never reach the terminal raw
        if report is None:
            fail(f"the index has no vectors ({state.store_reason.text()}); requests would run lexical_only")
        return
    if state.intake is not None:
        for line in state.intake.table().split("\n"):
            echo(line)
        if state.intake.written_to and (state.intake.skipped or state.intake.warnings):
            echo(f"every file read and skipped: {state.intake.written_to}")
    typer.echo(
        f"indexed {len(state.documents)} documents as {len(state.chunks)} chunks in {state.load_ms / 1000:.1f} s; "
        + (f"vectors: +{report.added} ~{report.updated} -{report.removed} ={report.unchanged}"
           + (f" >{report.migrated} moved from another layout (not re-embedded)" if report.migrated else "")
           + (" (rebuilt: model changed)" if report.rebuilt else "")
           + (f" (embedded again: {report.earlier_model} made this corpus' vectors before, kept under its own "
              "name)" if report.earlier_model else "")
           + (f"; {report.layout}, {report.collections} collection{'s' if report.collections != 1 else ''}"
              if report.layout else "")
           + (f" ({len(report.created)} created, {len(report.dropped)} dropped)"
              if report.created or report.dropped else "")
           if report else f"no vectors: {state.store_reason.text()}")
    )
    if states is not None:
        typer.echo(states.line())
    if bench.memory is not None:
        typer.echo(bench.memory.line())
    if report is None:  # an index that failed to build its vectors is a failed index
        fail(f"the index has no vectors ({state.store_reason.text()}); requests would run lexical_only")
