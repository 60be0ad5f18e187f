"""Each user's uploaded collection end to end (retrieval.serving.uploads) with a real lexical-only index (a
Workbench with no embedder: BM25 only): files added and indexed with their uploaded names as titles and a PDF's
pages on its chunks, a duplicate and the files limit refused, an index that fails rolling the file back, documents
removed from the index and the disk, two owners kept apart (and no typed path opening a collection), and a write
killed midway: an orphan file never read and swept, an entry never indexed picked up by the next load."""

from __future__ import annotations

import hashlib
import io
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from reportlab.pdfgen import canvas

from retrieval.core.errors import CorpusError, PathRefused
from retrieval.ingest.collection import MANIFEST, Collection, Entry, Manifest
from retrieval.ingest.folder import folder_documents
from retrieval.pipeline.workbench import Workbench
from retrieval.serving import roots
from retrieval.serving import uploads as uploads_module
from retrieval.serving.uploads import add_uploads, collection_for, entries, owner_digest, remove_documents
from retrieval.settings import Settings

MD = ("# Lei de licitações\n\nNormas gerais sobre licitações e contratos administrativos da administração "
      "pública.\n").encode("utf-8")
MD2 = "# Portaria\n\nA portaria fixa o horário de atendimento ao público.\n".encode("utf-8")


def pdf_bytes() -> bytes:
    """A real two-page PDF (reportlab): enough words on each page for chunks of their own (chunk_tokens=20)."""
    buf = io.BytesIO()
    c = canvas.Canvas(buf)
    for page, topic in ((1, "auditoria"), (2, "orçamento")):
        y = 800
        for n in range(6):
            c.drawString(72, y, f"Pagina {page} linha {n} relatorio de {topic} do tribunal de contas municipal.")
            y -= 14
        c.showPage()
    c.save()
    return buf.getvalue()


def make_settings(tmp_path: Path, **extra: Any) -> Settings:
    (tmp_path / "w").mkdir(exist_ok=True)
    return Settings(write_roots=str(tmp_path / "w"), chroma_path=tmp_path / "chroma", chunk_tokens=20,
                    chunk_overlap=5, _env_file=None, **extra)


class Indexer:
    """The app's index function: the Workbench's ``load_corpus`` of the collection's folder (lexical only)."""

    def __init__(self, settings: Settings) -> None:
        self.bench = Workbench(settings, embedder=None, progress=False)
        self.calls = 0

    def __call__(self, folder: Path, on_progress=None):
        self.calls += 1
        return self.bench.load_corpus(folder, on_progress=on_progress)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


def files_on_disk(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def test_a_markdown_file_and_a_pdf_are_added_and_indexed(settings: Settings) -> None:
    index = Indexer(settings)
    stages: list[tuple[str, str]] = []
    pdf = pdf_bytes()
    out = add_uploads(settings, "ana", [("Lei 8666.md", MD), ("Relatório TCM.pdf", pdf)], index,
                      on_file=lambda name, stage, done, total: stages.append((name, stage)))
    assert out.refused == []
    assert [(e.doc_id, e.name, e.stored, e.format, e.bytes) for e in out.entries] == [
        ("lei-8666", "Lei 8666.md", "lei-8666.md", "markdown", len(MD)),
        ("relatório-tcm", "Relatório TCM.pdf", "relatório-tcm.pdf", "pdf", len(pdf))]
    assert out.entries[1].sha256 == hashlib.sha256(pdf).hexdigest()
    assert out.chunks["lei-8666"] > 0 and out.chunks["relatório-tcm"] > 1
    state = out.state
    assert [(d.id, d.title) for d in state.documents] == [("lei-8666", "Lei 8666.md"),
                                                          ("relatório-tcm", "Relatório TCM.pdf")]
    assert {c.parent_id: 0 for c in state.chunks}.keys() == {"lei-8666", "relatório-tcm"}
    assert sum(1 for c in state.chunks if c.parent_id == "relatório-tcm") == out.chunks["relatório-tcm"]
    pdf_chunks = [c for c in state.chunks if c.parent_id == "relatório-tcm"]
    assert {c.metadata["page"] for c in pdf_chunks} == {1, 2}
    assert all(c.text.startswith(f"Pagina {c.metadata['page']} ") for c in pdf_chunks)  # each on its own page
    assert all("page" not in c.metadata for c in state.chunks if c.parent_id == "lei-8666")
    assert state.documents[0].metadata["folder"] == (".",)
    collection = collection_for(settings, "ana")
    assert state.intake.version == str(collection.manifest().generation)  # the index read the manifest on disk
    assert collection.root == roots.uploads_root(settings) / owner_digest("ana")
    assert roots.uploads_root(settings) == (Path(settings.write_roots) / "uploads").resolve()
    assert files_on_disk(collection.root) == ["lei-8666.md", "relatório-tcm.pdf"]
    assert [e.doc_id for e in entries(settings, "ana")] == ["lei-8666", "relatório-tcm"]
    assert index.calls == 2  # indexed after each file
    for name in ("Lei 8666.md", "Relatório TCM.pdf"):
        assert (name, "read") in stages and (name, "indexed") in stages
        assert stages.index((name, "read")) < stages.index((name, "indexed"))
    hits = [c.parent_id for c in index.bench.state.chunks if "orçamento" in c.text]
    assert hits and set(hits) == {"relatório-tcm"}


def test_a_zip_brings_its_folders_as_metadata(settings: Settings) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("leis/2024/lei.md", MD)
        archive.writestr("../fora.md", MD2)
    out = add_uploads(settings, "ana", [("acervo.zip", buf.getvalue())], Indexer(settings))
    assert [(r.name, r.code) for r in out.refused] == [("acervo.zip › ../fora.md", "zip_path")]
    assert [(e.doc_id, e.name, e.archive, e.folders) for e in out.entries] == [("lei", "lei.md", "acervo.zip",
                                                                                ("leis", "2024"))]
    assert out.state.documents[0].metadata["folder"] == ("leis", "leis/2024")


def test_a_duplicate_is_refused(settings: Settings) -> None:
    index = Indexer(settings)
    add_uploads(settings, "ana", [("Lei 8666.md", MD)], index)
    out = add_uploads(settings, "ana", [("copia.md", MD), ("outra.md", MD2), ("outra de novo.md", MD2)], index)
    assert [(r.name, r.code, dict(r.values)) for r in out.refused] == [
        ("copia.md", "duplicate", {"title": "Lei 8666.md"}),
        ("outra de novo.md", "duplicate", {"title": "outra.md"})]
    assert out.refused[0].line("en") == "copia.md: already in your collection, as Lei 8666.md"
    assert [e.name for e in entries(settings, "ana")] == ["Lei 8666.md", "outra.md"]
    assert files_on_disk(collection_for(settings, "ana").root) == ["lei-8666.md", "outra.md"]


def test_the_files_limit_keeps_the_first(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, upload_max_files=1)
    out = add_uploads(settings, "ana", [("a.md", MD), ("b.md", MD2)], Indexer(settings))
    assert [e.name for e in out.entries] == ["a.md"]
    assert [(r.name, r.code, dict(r.values)) for r in out.refused] == [("b.md", "collection_files", {"n": "1"})]
    assert out.refused[0].line("pt") == "b.md: a sua coleção já tem 1 documentos, o seu limite"
    assert [d.id for d in out.state.documents] == ["a"]
    assert files_on_disk(collection_for(settings, "ana").root) == ["a.md"]


def test_the_collection_bytes_limit(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, upload_max_collection_mb=(len(MD) + 10) / 2**20)
    out = add_uploads(settings, "ana", [("a.md", MD), ("b.md", MD2)], Indexer(settings))
    assert [e.name for e in out.entries] == ["a.md"]
    assert [(r.name, r.code) for r in out.refused] == [("b.md", "collection_bytes")]


def test_an_index_that_fails_rolls_the_file_back(settings: Settings) -> None:
    real = Indexer(settings)
    add_uploads(settings, "ana", [("a.md", MD)], real)
    collection = collection_for(settings, "ana")
    before = collection.manifest()

    def failing(folder: Path, on_progress=None):
        if (folder / "novo.md").exists():  # this file breaks the corpus
            raise CorpusError("novo.md: a value larger than every backend can store")
        return real(folder, on_progress)

    refused_stages: list[str] = []
    out = add_uploads(settings, "ana", [("novo.md", MD2)], failing,
                      on_file=lambda name, stage, *_: refused_stages.append(f"{name}:{stage}"))
    assert out.entries == []
    assert [(r.name, r.code) for r in out.refused] == [("novo.md", "failed")]
    assert out.refused[0].line("en") == ("novo.md: was not indexed (novo.md: a value larger than every backend can "
                                         "store); your collection is as it was")
    assert "novo.md:refused" in refused_stages
    after = collection.manifest()
    assert after.entries == before.entries
    assert after.generation == before.generation + 2  # written with it, then without it
    assert files_on_disk(collection.root) == ["a.md"]
    assert not (collection.root / ".read" / "novo.json").exists()
    assert [d.id for d in out.state.documents] == ["a"]  # the collection as it was, indexed again


def test_an_index_that_fails_on_the_first_file_leaves_an_empty_collection(settings: Settings) -> None:
    def failing(folder: Path, on_progress=None):
        raise CorpusError("the store is read-only")

    out = add_uploads(settings, "ana", [("a.md", MD)], failing)
    assert [(r.name, r.code) for r in out.refused] == [("a.md", "failed")]
    assert out.state is None
    collection = collection_for(settings, "ana")
    assert collection.manifest().entries == []
    assert files_on_disk(collection.root) == []


def test_remove_documents_takes_them_out_of_the_index_and_the_disk(settings: Settings) -> None:
    index = Indexer(settings)
    added = add_uploads(settings, "ana", [("a.md", MD), ("relatorio.pdf", pdf_bytes())], index)
    pdf_texts = [c.text for c in added.state.chunks if c.parent_id == "relatorio"]
    a_texts = [c.text for c in added.state.chunks if c.parent_id == "a"]
    collection = collection_for(settings, "ana")
    pdf_entry = next(e for e in added.entries if e.doc_id == "relatorio")
    assert collection.read_path(pdf_entry).is_file()
    dropped: list[int] = []
    forgotten: list[list[str]] = []   # the removed chunks' texts (their states are forgotten by chunk)
    out = remove_documents(settings, "ana", ["relatorio", "not-there"], index, lambda: dropped.append(1),
                           lambda chunks: forgotten.append([c.text for c in chunks]))
    assert [e.doc_id for e in out.entries] == ["relatorio"]
    assert [d.id for d in out.state.documents] == ["a"]
    assert {c.parent_id for c in index.bench.state.chunks} == {"a"}
    assert files_on_disk(collection.root) == ["a.md"]
    assert not collection.read_path(pdf_entry).exists()
    assert forgotten == [pdf_texts]
    assert dropped == []
    assert [e.doc_id for e in collection.manifest().entries] == ["a"]

    nothing = remove_documents(settings, "ana", ["not-there"], index, lambda: dropped.append(1),
                               lambda chunks: forgotten.append([c.text for c in chunks]))
    assert nothing.entries == [] and len(forgotten) == 1

    calls = index.calls
    last = remove_documents(settings, "ana", ["a"], index, lambda: dropped.append(1),
                            lambda chunks: forgotten.append([c.text for c in chunks]))
    assert [e.doc_id for e in last.entries] == ["a"]
    assert last.state is None
    assert index.calls == calls  # nothing left to index
    assert dropped == [1]
    assert forgotten[-1] == a_texts
    assert collection.manifest().entries == []
    assert files_on_disk(collection.root) == []


def test_two_owners_get_their_own_collections_and_no_path_opens_one(tmp_path: Path) -> None:
    write = tmp_path / "w"
    settings = make_settings(tmp_path, data_roots=str(write))
    ana = add_uploads(settings, "ana", [("a.md", MD)], Indexer(settings))
    bia = add_uploads(settings, "bia", [("b.md", MD2)], Indexer(settings))
    ana_root, bia_root = collection_for(settings, "ana").root, collection_for(settings, "bia").root
    assert ana_root != bia_root
    assert ana_root.parent == bia_root.parent == roots.uploads_root(settings)
    assert collection_for(settings, " ANA ").root == ana_root  # the same person, however the name is typed
    assert [d.id for d in ana.state.documents] == ["a"] and [d.id for d in bia.state.documents] == ["b"]
    assert files_on_disk(ana_root) == ["a.md"] and files_on_disk(bia_root) == ["b.md"]
    (write / "judgments").mkdir()
    (write / "judgments" / "j.jsonl").write_text("", encoding="utf-8")
    assert roots.confine_input(write / "judgments", settings) == (write / "judgments").resolve()  # the root is open
    for path in (bia_root, bia_root / "b.md", roots.uploads_root(settings), bia_root / ".." / bia_root.name):
        with pytest.raises(PathRefused, match="uploaded collections' folder"):
            roots.confine_input(str(path), settings)
    with pytest.raises(PathRefused, match="uploaded collections' folder"):
        roots.confine_output(str(bia_root / "judgments.jsonl"), settings)
    # the same refusal whether or not the path exists: no typed path tells who has a collection or what it holds
    for path in (bia_root / "nao-existe.md", collection_for(settings, "carla").root):
        for confine in (roots.confine_input, roots.confine_output):
            with pytest.raises(PathRefused, match="uploaded collections' folder"):
                confine(str(path), settings)
    assert roots.confine_output(str(write / "judgments" / "j.jsonl"), settings) == \
        (write / "judgments" / "j.jsonl").resolve()


def test_an_orphan_file_is_never_read_and_is_swept_at_the_next_add(settings: Settings) -> None:
    index = Indexer(settings)
    add_uploads(settings, "ana", [("a.md", MD)], index)
    collection = collection_for(settings, "ana")
    # a write killed after the file was renamed into place, before its entry was written
    collection.store("orfao", ".md", "# Órfão\n\nTexto jamais indexado sobre orçamento.\n".encode("utf-8"))
    assert (collection.root / "orfao.md").is_file()
    state = index.bench.load_corpus(collection.root)
    assert [d.id for d in state.documents] == ["a"]
    assert all("orçamento" not in c.text for c in state.chunks)
    out = add_uploads(settings, "ana", [("b.md", MD2)], index)
    assert not (collection.root / "orfao.md").exists()
    assert files_on_disk(collection.root) == ["a.md", "b.md"]
    assert [d.id for d in out.state.documents] == ["a", "b"]


def test_an_entry_written_but_never_indexed_is_picked_up_by_the_next_load(settings: Settings) -> None:
    index = Indexer(settings)
    add_uploads(settings, "ana", [("a.md", MD)], index)
    collection = collection_for(settings, "ana")
    manifest = collection.manifest()
    # a write killed after its entry was written, before the index was built
    stored = collection.store("retomado", ".md", MD2)
    entry = Entry("retomado", "Retomado.md", stored, "markdown", len(MD2), hashlib.sha256(MD2).hexdigest(),
                  time.time())
    collection.write_manifest(Manifest(manifest.owner, [*manifest.entries, entry], manifest.generation))
    assert not collection.read_path(entry).exists()
    fresh = Workbench(settings, embedder=None, progress=False)  # the app started again
    state = fresh.load_corpus(collection.root)
    assert [(d.id, d.title) for d in state.documents] == [("a", "a.md"),
                                                          ("retomado", "Retomado.md")]
    assert any(c.parent_id == "retomado" and "horário de atendimento" in c.text for c in state.chunks)
    assert collection.read_path(entry).is_file()  # read once, kept
    assert state.intake.version == str(manifest.generation + 1)
    assert (collection.root / MANIFEST).is_file()



def test_a_new_collection_is_never_read_as_part_of_a_folder_corpus(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder walker skips a collection by its manifest: a new user's first file must never lie in a folder
    without one, or anyone who types a data root above the uploads folder reads it (while it is being read, or for
    good where the write is killed between storing the file and writing its entry)."""
    write = tmp_path / "w"
    settings = make_settings(tmp_path, data_roots=str(write))
    seen: list[list[str]] = []

    def spy(name: str, stage: str, *_: Any) -> None:  # another user reads the data root meanwhile
        if stage == "read":  # the file is stored and read, its entry not written yet
            docs, report = folder_documents(roots.confine_input(str(write), settings))
            seen.append([d.id for _, d in docs] + [s.reason for s in report.skipped])

    add_uploads(settings, "bia", [("segredo.md", MD)], Indexer(settings), on_file=spy)
    assert len(seen) == 1
    assert not any("segredo" in item for item in seen[0]), seen
    assert "collection" in seen[0]

    class Killed(Collection):
        def write_manifest(self, manifest: Manifest) -> Manifest:  # killed as the first entry is written
            if manifest.entries:
                raise KeyboardInterrupt
            return super().write_manifest(manifest)

    monkeypatch.setattr(uploads_module, "collection_for", lambda s, owner: Killed(collection_for(s, owner).root))
    with pytest.raises(KeyboardInterrupt):
        add_uploads(settings, "caio", [("privado.md", MD2)], Indexer(settings))
    monkeypatch.undo()
    caio = collection_for(settings, "caio")
    assert (caio.root / "privado.md").is_file()  # left on disk by the kill
    docs, report = folder_documents(write)
    assert [d.id for _, d in docs] == []
    assert sorted(s.path for s in report.skipped if s.reason == "collection") == sorted(
        f"uploads/{owner_digest(o)}/" for o in ("bia", "caio"))
    assert caio.manifest().entries == []
    add_uploads(settings, "caio", [("outro.md", MD)], Indexer(settings))  # the next write sweeps it
    assert files_on_disk(caio.root) == ["outro.md"]
