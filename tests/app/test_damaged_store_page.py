"""A damaged vector store on the page (AppTest, real models): the page loads (no spinner left, no exception), the
sidebar says the store is damaged and offers **Rebuild the index**, and the button moves the store aside (kept)
and builds the index again, after which the dense store is in use and the button is gone."""

from __future__ import annotations

from pathlib import Path

from helpers.apptest import assert_ok, page, plain, rendered

from ui.i18n import t


def rebuild_buttons(at):
    return [b for b in at.sidebar.button if b.label == t("rebuild", "en")]


def test_a_damaged_store_offers_a_rebuild_that_heals_it(tmp_path: Path, monkeypatch) -> None:
    store = tmp_path / "chroma"
    store.mkdir()
    (store / "chroma.sqlite3").write_bytes(b"garbage, not a SQLite file " * 400)   # as an attacker would leave it
    monkeypatch.setenv("RETRIEVAL_CHROMA_PATH", str(store))
    at = page(300)
    assert_ok(at)
    captions = " ".join(plain(c.value) for c in at.sidebar.caption)
    assert "is damaged" in captions and "index --rebuild" in captions, captions
    assert len(rebuild_buttons(at)) == 1
    rebuild_buttons(at)[0].click().run(timeout=300)
    assert_ok(at)
    moved = [p for p in tmp_path.iterdir() if p.name.startswith("chroma.damaged-")]
    assert len(moved) == 1 and (moved[0] / "chroma.sqlite3").read_bytes().startswith(b"garbage")
    assert "rebuilt: the damaged store was moved to" in rendered(at) and moved[0].name in rendered(at)
    at.run()   # the next run of the page draws the corpus line from the new index
    assert_ok(at)
    captions = " ".join(plain(c.value) for c in at.sidebar.caption)
    assert "is damaged" not in captions and "dense store: ok" in captions, captions
    assert rebuild_buttons(at) == []
