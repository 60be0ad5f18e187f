"""A user's collection on disk (retrieval.ingest.collection): files stored whole, the manifest round trip and its
generation, the reader's output kept and reused only while the digest matches, the sweep of what the manifest does
not name, a manifest of another version refused, the collection read as documents, and a folder corpus never
walking into a collection."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

import retrieval.ingest.collection as collection_module
from retrieval.ingest.collection import (INCOMING_DIR, MANIFEST, READ_DIR, Collection, CollectionError, Entry,
                                         Manifest, collection_documents, is_collection)
from retrieval.ingest.folder import folder_documents
from retrieval.ingest.formats import Unreadable

MD = "# Lei 8.666\n\nNormas gerais sobre licitações e contratos.\n".encode("utf-8")


def stored_entry(collection: Collection, name: str, data: bytes, doc_id: str | None = None,
                 folders: tuple[str, ...] = (), archive: str = "") -> Entry:
    doc_id = doc_id or collection.free_id(name, [])
    stored = collection.store(doc_id, Path(name).suffix, data)
    return Entry(doc_id, name, stored, "markdown", len(data), hashlib.sha256(data).hexdigest(), 1_700_000_000.5,
                 archive, folders)


def test_store_writes_the_file_whole_under_the_collections_name(tmp_path: Path) -> None:
    c = Collection(tmp_path / "c")
    stored = c.store("lei-8666", ".MD", MD)
    assert stored == "lei-8666.md"
    assert (c.root / stored).read_bytes() == MD
    assert list((c.root / INCOMING_DIR).iterdir()) == []  # the temporary file was renamed into place


def test_free_id_is_the_names_slug_numbered_where_taken(tmp_path: Path) -> None:
    c = Collection(tmp_path / "c")
    assert c.free_id("Lei 8.666 (1993).pdf", []) == "lei-8.666-1993"
    assert c.free_id("Relatório Final.md", []) == "relatório-final"
    assert c.free_id("a.md", ["a", "a-2"]) == "a-3"
    assert c.free_id("!!!.md", []) == "documento"
    assert len(c.free_id("x" * 300 + ".md", [])) == 80


def test_manifest_round_trip_and_generation(tmp_path: Path) -> None:
    c = Collection(tmp_path / "c")
    assert c.manifest() == Manifest()  # none written yet
    assert not is_collection(c.root)
    entry = stored_entry(c, "Lei 8666.md", MD, folders=("leis", "2024"), archive="acervo.zip")
    first = c.write_manifest(Manifest("ana", [entry]))
    assert first.generation == 1
    assert is_collection(c.root)
    back = c.manifest()
    assert back.owner == "ana"
    assert back.entries == [entry]
    assert back.entries[0].folders == ("leis", "2024")
    assert back.generation == 1
    assert back.total_bytes == len(MD)
    assert back.by_sha(entry.sha256) == entry
    assert back.by_sha("0" * 64) is None
    second = c.write_manifest(back)
    assert second.generation == 2 and c.manifest().generation == 2
    on_disk = json.loads((c.root / MANIFEST).read_text(encoding="utf-8"))
    assert on_disk["version"] == 1 and on_disk["generation"] == 2
    assert on_disk["entries"][0]["doc_id"] == entry.doc_id
    assert sorted(p.name for p in c.root.iterdir()) == [MANIFEST, INCOMING_DIR, entry.stored]  # no temp left


def test_read_keeps_the_readers_output_and_reuses_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    c = Collection(tmp_path / "c")
    entry = stored_entry(c, "Lei 8666.md", MD)
    calls: list[str] = []
    real = collection_module.read_bytes

    def counting(format_name: str, data: bytes, name: str):
        calls.append(name)
        return real(format_name, data, name)

    monkeypatch.setattr(collection_module, "read_bytes", counting)
    first = c.read(entry)
    assert calls == ["Lei 8666.md"]
    assert "Normas gerais sobre licitações" in first.text
    assert first.title == "Lei 8.666"
    assert c.read_path(entry).is_file()
    again = c.read(entry)
    assert calls == ["Lei 8666.md"]  # the kept read answered
    assert again == first


def test_the_kept_read_answers_only_while_the_digest_matches(tmp_path: Path) -> None:
    c = Collection(tmp_path / "c")
    entry = stored_entry(c, "lei.md", MD)
    first = c.read(entry)
    (c.root / entry.stored).unlink()
    assert c.read(entry) == first  # the file is gone, the kept read still answers
    other = dataclasses.replace(entry, sha256=hashlib.sha256(b"other").hexdigest())
    with pytest.raises(Unreadable) as exc:
        c.read(other)  # its digest does not match the kept one: the file is read, and it is gone
    assert exc.value.reason == "unreadable"
    assert "cannot be read" in str(exc.value)


def test_a_file_changed_on_disk_is_unreadable(tmp_path: Path) -> None:
    c = Collection(tmp_path / "c")
    entry = stored_entry(c, "lei.md", MD)
    (c.root / entry.stored).write_bytes(MD + b"tampered")
    with pytest.raises(Unreadable, match="changed on disk"):
        c.read(entry)
    assert not c.read_path(entry).exists()


def test_a_damaged_kept_read_is_read_again(tmp_path: Path) -> None:
    c = Collection(tmp_path / "c")
    entry = stored_entry(c, "lei.md", MD)
    first = c.read(entry)
    c.read_path(entry).write_text("{not json", encoding="utf-8")
    assert c.read(entry) == first
    assert json.loads(c.read_path(entry).read_text(encoding="utf-8"))["sha256"] == entry.sha256


def test_sweep_removes_what_the_manifest_does_not_name(tmp_path: Path) -> None:
    c = Collection(tmp_path / "c")
    entry = stored_entry(c, "lei.md", MD)
    c.write_manifest(Manifest("ana", [entry]))
    c.read(entry)
    (c.root / "orphan.md").write_bytes(b"# killed before its entry was written\n")
    (c.root / INCOMING_DIR / "half.pdf.123.456").write_bytes(b"%PDF-1.4 half")
    (c.root / READ_DIR / "removed.json").write_text("{}", encoding="utf-8")
    removed = c.sweep()
    assert sorted(removed) == sorted(["orphan.md", f"{INCOMING_DIR}/half.pdf.123.456", f"{READ_DIR}/removed.json"])
    assert not (c.root / "orphan.md").exists()
    assert (c.root / entry.stored).read_bytes() == MD
    assert c.read_path(entry).is_file()
    assert c.manifest().entries == [entry]
    assert c.sweep() == []


def test_sweep_deletes_nothing_on_a_damaged_manifest(tmp_path: Path) -> None:
    c = Collection(tmp_path / "c")
    c.root.mkdir()
    (c.root / MANIFEST).write_text("{damaged", encoding="utf-8")
    (c.root / "orphan.md").write_bytes(MD)
    assert c.sweep() == []
    assert (c.root / "orphan.md").exists()


def test_forget_deletes_the_file_and_its_kept_read(tmp_path: Path) -> None:
    c = Collection(tmp_path / "c")
    keep, gone = stored_entry(c, "a.md", MD), stored_entry(c, "b.md", MD + b"b")
    c.read(keep), c.read(gone)
    c.forget([gone])
    assert not (c.root / gone.stored).exists() and not c.read_path(gone).exists()
    assert (c.root / keep.stored).exists() and c.read_path(keep).exists()


@pytest.mark.parametrize("content, words", [
    ({"version": 2, "owner": "", "entries": [], "generation": 3}, "version 2, not 1"),
    ({"owner": "", "entries": []}, "version None, not 1"),
    ({"version": 1, "entries": [{"doc_id": "a"}]}, "not a collection manifest (KeyError)"),
    ("[1, 2]", "not a collection manifest (AttributeError)"),
    ("{damaged", "not a collection manifest (JSONDecodeError)"),
])
def test_a_manifest_of_another_version_or_damaged_is_refused(tmp_path: Path, content, words: str) -> None:
    c = Collection(tmp_path / "c")
    c.root.mkdir()
    (c.root / MANIFEST).write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    with pytest.raises(CollectionError) as exc:
        c.manifest()
    assert str(exc.value) == f"{c.root / MANIFEST}: {words}"
    with pytest.raises(CollectionError):
        collection_documents(c.root)
    assert (c.root / MANIFEST).read_text(encoding="utf-8") == (content if isinstance(content, str)
                                                              else json.dumps(content))  # never rewritten


def test_collection_documents_ids_titles_and_metadata(tmp_path: Path) -> None:
    c = Collection(tmp_path / "c")
    alone = stored_entry(c, "Lei 8666.md", MD)
    body = "---\ntenant: acme\nautor: Ana\n---\n# Portaria\n\nTexto da portaria de 2024.\n".encode("utf-8")
    zipped = stored_entry(c, "portaria.md", body, folders=("leis", "2024"), archive="acervo.zip")
    c.write_manifest(Manifest("ana", [alone, zipped]))
    (c.root / "orphan.md").write_bytes(b"# never read\n")
    found, report = collection_documents(c.root, "tenant")
    docs = [d for _, d in found]
    assert [(d.id, d.title) for d in docs] == [("lei-8666", "Lei 8666.md"), ("portaria", "portaria.md")]
    assert [where for where, _ in found] == [str(c.root / "lei-8666.md"), str(c.root / "portaria.md")]
    assert docs[0].metadata == {"format": "markdown", "folder": (".",)}
    assert docs[1].metadata["folder"] == ("leis", "leis/2024")
    assert docs[1].metadata["autor"] == "Ana"
    assert "tenant" not in docs[1].metadata
    assert any("portaria.md" in w and "'tenant'" in w for w in report.warnings)
    assert report.version == "1"
    assert report.totals.documents == 2
    assert report.skipped == []


def test_collection_documents_skip_an_entry_whose_file_is_gone(tmp_path: Path) -> None:
    c = Collection(tmp_path / "c")
    a, b = stored_entry(c, "a.md", MD), stored_entry(c, "b.md", MD + b"b")
    c.write_manifest(Manifest("ana", [a, b]))
    (c.root / b.stored).unlink()  # never read, so no kept read answers for it
    found, report = collection_documents(c.root)
    assert [d.id for _, d in found] == ["a"]
    assert [(s.path, s.reason) for s in report.skipped] == [("b.md", "unreadable")]


def test_the_folder_walker_skips_a_collection_subfolder(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "uploads" / "abc").mkdir(parents=True)
    (corpus / "lei.md").write_bytes(MD)
    (corpus / "uploads" / "abc" / "segredo.md").write_bytes(b"# Segredo\n\nDocumento de outro usuario.\n")
    found, report = folder_documents(corpus)
    assert sorted(d.id for _, d in found) == ["lei", "uploads/abc/segredo"]  # a plain folder is walked
    Collection(corpus / "uploads" / "abc").write_manifest(Manifest("bia", []))
    found, report = folder_documents(corpus)
    assert [d.id for _, d in found] == ["lei"]
    assert [(s.path, s.reason) for s in report.skipped] == [("uploads/abc/", "collection")]
    assert report.skipped_line("en") == "skipped 1: a user's uploaded collection (opened by its owner only): 1"


def test_a_pdfs_kept_read_is_what_the_reader_made_of_it(tmp_path: Path) -> None:
    import io

    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    pdf = canvas.Canvas(buf)
    pdf.setTitle("Relatório anual")
    pdf.setAuthor("Ana Lima")
    for n in (1, 2):
        pdf.drawString(72, 800, f"texto da pagina {n}")
        pdf.showPage()
    pdf.save()
    data = buf.getvalue()
    c = Collection(tmp_path / "c")
    entry = dataclasses.replace(stored_entry(c, "relatorio.pdf", data), format="pdf")
    fresh = c.read(entry)
    assert (fresh.title, dict(fresh.metadata), fresh.pages) == ("Relatório anual", {"author": "Ana Lima"}, 2)
    assert "<!-- page 2 -->" in fresh.text and "texto da pagina 2" in fresh.text
    (c.root / entry.stored).unlink()
    assert c.read(entry) == fresh  # read back from .read/, field for field
