"""Each user's own collection of uploaded documents: where it lives, and adding and removing documents under its
lock, the index following each change.

Where: ``<uploads_path>/<digest of the owner>/`` (:func:`uploads_root`, :func:`collection_for`), the owner being the
signed-in user under an access policy, else :data:`LOCAL_OWNER` (the single user); the folder is named by a digest,
so no user's name becomes a path and no path from a client is ever used. The uploads folder must lie inside the
write roots, and no path typed in the app opens it (:func:`retrieval.serving.roots.confine` refuses it): a
collection is opened by its owner's identity only.

Adding (:func:`add_uploads`): every upload is checked before anything is written (:func:`retrieval.ingest.upload.accept`:
name, format, size, bytes, a ``.zip``'s members), then, holding the collection's lock (a second upload of the same
collection waits, told who holds it), each file is written whole, read once (what the reader made of it is kept),
entered in the manifest and the collection indexed: only the new file is read, only its chunks embedded
(the vector store syncs by content). An index that fails takes the file back out (manifest, disk), so the
collection is as it was. Removing (:func:`remove_documents`) takes the documents out of the manifest, indexes the
rest (BM25 rebuilt, their vectors deleted), deletes their files and kept reads, and forgets their reader states.

A write killed midway leaves the collection whole: a file whose entry was not written is swept at the next write
and never read; an entry written before its index was built is indexed by the next load (:mod:`retrieval.ingest.collection`).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Mapping, Sequence

from ..core.errors import PathRefused, RetrievalError
from ..ingest.collection import Collection, CollectionError, Entry, Manifest, collection_documents, is_collection
from ..ingest.chunking import chunk_documents
from ..ingest.formats import Unreadable
from ..ingest.upload import Incoming, Limits, Refusal, accept
from ..pipeline.index import store_write_lock
from ..settings import Settings
from .roots import uploads_root

#: The owner of the collection when no access policy is set (the app's single user).
LOCAL_OWNER = "local"

#: ``on_file(name, stage, done, total)``: ``stage`` one of "read", "embedding", "indexed", "refused".
OnFile = Callable[[str, str, int, int], None]
#: ``index(folder, on_progress)``: indexes the collection in ``folder`` (the Workbench's ``load_corpus``) and
#: returns its state.
Index = Callable[[Path, Callable[[int, int], None] | None], Any]


def owner_digest(owner: str) -> str:
    """The folder name of ``owner``'s collection: a digest of the name, so no user name becomes a path."""
    return hashlib.sha256(owner.strip().lower().encode("utf-8")).hexdigest()[:24]


def collection_for(settings: Settings, owner: str) -> Collection:
    """``owner``'s collection (its folder need not exist yet)."""
    return Collection(uploads_root(settings) / owner_digest(owner or LOCAL_OWNER))


def _lock(settings: Settings, collection: Collection, what: str,
          on_wait: Callable[[Mapping[str, Any]], None] | None) -> Any:
    """The collection's write lock (one writer per collection across the app's workers and ``index --add``): the
    store's lock file mechanism, under a key of its own (the index it then builds takes the store's lock)."""
    return store_write_lock(settings, f"collection|{collection.root}", what, on_wait)


@dataclass
class Changed:
    """What one add or remove did: the documents added (or removed), each refusal, the chunks of each document
    added, and the collection's index after (``None``: nothing was indexed, or the collection is empty now)."""

    entries: list[Entry] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    chunks: dict[str, int] = field(default_factory=dict)
    state: Any = None
    seconds: float = 0.0


def _no_file(*_: Any) -> None:
    return None


def add_uploads(settings: Settings, owner: str, uploads: Sequence[tuple[str, bytes]], index: Index, *,
                on_file: OnFile = _no_file, on_wait: Callable[[Mapping[str, Any]], None] | None = None) -> Changed:
    """Add the files of ``uploads`` (``(name as the client sent it, bytes)``; a ``.zip`` brings its members) to
    ``owner``'s collection and index it after each (module docstring). Every file refused is one
    :class:`~retrieval.ingest.upload.Refusal`; what was in the collection is never touched by a refusal."""
    started = time.perf_counter()
    limits = Limits.from_settings(settings)
    collection = collection_for(settings, owner)
    out = Changed()
    collection.root.mkdir(parents=True, exist_ok=True)
    with _lock(settings, collection, "adding to a collection", on_wait):
        collection.sweep()
        try:
            manifest = collection.manifest()
        except CollectionError as exc:
            raise RetrievalError(str(exc)) from None
        manifest.owner = owner
        if not is_collection(collection.root):  # a manifest before any file: a folder corpus skips the folder by it
            manifest = collection.write_manifest(manifest)
        for name, data in uploads:
            room = limits.collection_bytes - manifest.total_bytes
            incoming, refused = accept(name, data, limits, room)
            for refusal in refused:
                on_file(refusal.name, "refused", 0, 0)
            out.refused += refused
            batch = _stage(collection, manifest, incoming, limits, out, on_file)
            if not batch:
                continue
            manifest = _index_batch(collection, manifest, batch, index, out, on_file)
    out.seconds = time.perf_counter() - started
    return out


def _stage(collection: Collection, manifest: Manifest, incoming: Sequence[Incoming], limits: Limits, out: Changed,
           on_file: OnFile) -> list[Entry]:
    """Write and read each accepted file (not entered in the manifest yet); the refused are added to ``out``."""
    batch: list[Entry] = []
    for item in incoming:
        sha = hashlib.sha256(item.data).hexdigest()
        held = manifest.by_sha(sha) or next((e for e in batch if e.sha256 == sha), None)
        count = len(manifest.entries) + len(batch)
        size = manifest.total_bytes + sum(e.bytes for e in batch) + len(item.data)
        refusal = (Refusal(item.shown, "duplicate", {"title": held.name}) if held is not None else
                   Refusal(item.shown, "collection_files", {"n": f"{count:,}"}) if count >= limits.files else
                   Refusal(item.shown, "collection_bytes", {"mb": f"{size / 2**20:,.1f}",
                                                             "limit": f"{limits.collection_bytes / 2**20:,.1f}"})
                   if size > limits.collection_bytes else None)
        if refusal is not None:
            out.refused.append(refusal)
            on_file(item.shown, "refused", 0, 0)
            continue
        doc_id = collection.free_id(item.name, [e.doc_id for e in (*manifest.entries, *batch)])
        stored = collection.store(doc_id, PurePosixPath(item.name).suffix, item.data)
        entry = Entry(doc_id, item.name, stored, item.fmt.name, len(item.data), sha, time.time(), item.archive,
                      item.folders)
        try:
            collection.read(entry)
        except Unreadable as exc:
            collection.forget([entry])
            code = "no_text" if exc.reason == "no_text" else "unreadable"
            out.refused.append(Refusal(item.shown, code, {"detail": str(exc)}))
            on_file(item.shown, "refused", 0, 0)
            continue
        on_file(item.shown, "read", 1, 1)
        batch.append(entry)
    return batch


def _index_batch(collection: Collection, manifest: Manifest, batch: list[Entry], index: Index, out: Changed,
                 on_file: OnFile) -> Manifest:
    """Enter ``batch`` in the manifest and index the collection; where the index fails (or leaves a document out),
    those documents are taken back out. Returns the manifest now on disk."""
    grown = collection.write_manifest(Manifest(manifest.owner, [*manifest.entries, *batch], manifest.generation))

    def progress(done: int, total: int) -> None:
        for entry in batch:
            on_file(entry.name, "embedding", done, total)

    try:
        state = index(collection.root, progress)
    except RetrievalError as exc:  # the collection as it was: the batch out of the manifest and off the disk
        back = collection.write_manifest(Manifest(manifest.owner, list(manifest.entries), grown.generation))
        collection.forget(batch)
        out.refused += [Refusal(e.name, "failed", {"detail": str(exc)}) for e in batch]
        for entry in batch:
            on_file(entry.name, "refused", 0, 0)
        if back.entries:
            try:
                out.state = index(collection.root, None)
            except RetrievalError:  # the index fails whatever it holds (a store down): the next load says why
                out.state = None
        return back
    loaded = {d.id for d in state.documents}
    left_out = [e for e in batch if e.doc_id not in loaded]
    if left_out:  # read, then refused by the corpus' rules: out again, named with the reason
        skipped = {s.path: s.detail or s.reason for s in state.intake.skipped} if state.intake else {}
        kept = [e for e in grown.entries if e not in left_out]
        grown = collection.write_manifest(Manifest(manifest.owner, kept, grown.generation))
        collection.forget(left_out)
        out.refused += [Refusal(e.name, "failed", {"detail": skipped.get(e.name, "not indexed")}) for e in left_out]
        state = index(collection.root, None) if kept else None
    chunks: dict[str, int] = {}
    for chunk in (state.chunks if state is not None else ()):
        chunks[chunk.parent_id] = chunks.get(chunk.parent_id, 0) + 1
    for entry in batch:
        if entry not in left_out:
            out.entries.append(entry)
            out.chunks[entry.doc_id] = chunks.get(entry.doc_id, 0)
            on_file(entry.name, "indexed", chunks.get(entry.doc_id, 0), chunks.get(entry.doc_id, 0))
    out.state = state
    return grown


def remove_documents(settings: Settings, owner: str, doc_ids: Sequence[str], index: Index,
                     drop: Callable[[], None], forget_passages: Callable[[Sequence[Any]], Any], *,
                     on_wait: Callable[[Mapping[str, Any]], None] | None = None) -> Changed:
    """Take ``doc_ids`` out of ``owner``'s collection: out of the manifest, the rest indexed (their chunks out of
    BM25 and the vector store; ``drop()`` deletes the vectors when none is left), their files and kept reads
    deleted, their reader states forgotten (``forget_passages(chunks)``). Ids not in the collection are ignored."""
    started = time.perf_counter()
    collection = collection_for(settings, owner)
    out = Changed()
    with _lock(settings, collection, "removing from a collection", on_wait):
        try:
            manifest = collection.manifest()
        except CollectionError as exc:
            raise RetrievalError(str(exc)) from None
        wanted = set(doc_ids)
        gone = [e for e in manifest.entries if e.doc_id in wanted]
        if not gone:
            return out
        chunks = _chunks_of(collection, gone, settings)
        kept = [e for e in manifest.entries if e.doc_id not in wanted]
        collection.write_manifest(Manifest(manifest.owner or owner, kept, manifest.generation))
        if kept:
            out.state = index(collection.root, None)
        else:
            drop()
        collection.forget(gone)
        forget_passages(chunks)
        out.entries = gone
    out.seconds = time.perf_counter() - started
    return out


def _chunks_of(collection: Collection, entries: Sequence[Entry], settings: Settings) -> list[Any]:
    """The chunks of ``entries`` as the index cut them (what the reader's states are keyed by)."""
    try:
        docs = [d for _, d in collection_documents(collection.root, settings.tenant_field)[0]]
    except CollectionError:
        return []
    ids = {e.doc_id for e in entries}
    chunks = chunk_documents([d for d in docs if d.id in ids], settings.chunk_tokens, settings.chunk_overlap,
                             settings.contextual)
    return chunks


def entries(settings: Settings, owner: str) -> list[Entry]:
    """The documents of ``owner``'s collection (none where it has no manifest yet or it cannot be read)."""
    try:
        return collection_for(settings, owner).manifest().entries
    except (CollectionError, PathRefused):
        return []
