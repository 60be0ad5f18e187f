"""The dense layout's names (retrieval/store.py DenseLayout): which collection holds a tenant, stable across
processes, exact in type, and which collections belong to an index. No store is opened."""

from __future__ import annotations

import hashlib

from retrieval.backends.store import DenseLayout, collection_name, owned_by, tenant_digest


def test_a_tenant_digest_is_sha1_of_its_type_and_value():
    assert tenant_digest("lumen") == hashlib.sha1(b"str\n'lumen'").hexdigest()  # never Python's salted hash()
    assert len({tenant_digest(t) for t in [1, True, 1.0, "1", 0, False]}) == 6


def test_each_layout_names_its_collections():
    base = collection_name("/data/corpus.jsonl", "e5-small", "chunks-120-30")
    per_tenant, buckets, one = DenseLayout(base, True, 0), DenseLayout(base, True, 8), DenseLayout(base, True, 1)
    assert per_tenant.name_for("lumen") == f"{base}-t-{tenant_digest('lumen')[:16]}"
    assert per_tenant.name_for("lumen") != per_tenant.name_for("ventura") and per_tenant.isolated
    assert buckets.name_for("lumen") == f"{base}-b8-{int(tenant_digest('lumen'), 16) % 8}" and not buckets.isolated
    assert {buckets.name_for(f"t{i}") for i in range(200)} == {f"{base}-b8-{i}" for i in range(8)}
    assert one.name_for("lumen") == base == DenseLayout(base, False, 0).name_for(None)  # the layout before
    assert [x.kind for x in (per_tenant, buckets, one, DenseLayout(base, False, 0))] == [
        "one collection per tenant", "8 tenant buckets", "one collection, tenant filtered",
        "one collection (single-tenant corpus)"]
    assert all(3 <= len(layout.name_for("x" * 1000)) <= 63 for layout in (per_tenant, buckets, one))


def test_an_index_owns_its_collections_in_every_layout_and_no_other_index_s():
    base = "chunks-0123456789abcdef"
    for name in (base, f"{base}-t-00ff00ff00ff00ff", f"{base}-b16-3", f"{base}-b1000-999"):
        assert owned_by(base, name), name
    for name in ("chunks-0123456789abcdeg", f"{base}0-t-00", f"{base}-bx-1", f"{base}-b16-", f"x{base}",
                 "chunks-0123456789abcde"):
        assert not owned_by(base, name), name
