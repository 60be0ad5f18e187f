"""Lexical parity of the Milvus backend with the local BM25 engine, on the lab set and FaQuAD.

Two ways of running our lexical side in Milvus are compared with the local engine (``bm25s``):

* ``sparse``: our BM25 as sparse vectors (retrieval/milvus.py: our tokenizer, per-tenant Lucene IDF, inner
  product, candidates rescored exactly), the backend's lexical side;
* ``builtin``: Milvus's own BM25 function (analyzer ``standard`` with our stopword list, accented and
  folded spellings; statistics over the whole collection, not per tenant), on the same chunks;
* ``builtin_folded``: the same function fed our accent-folded text and query (``retrieval.core.text.fold``): the
  accents then match, but ``PX-17`` is still split into ``px`` and ``17``.

Per question: the window (``overfetch × top_k`` = 20) of each engine; rank parity = the share of questions
whose list equals the local list item for item, overlap@10 = |top10 ∩ local top10| / 10, and nDCG@10 of each
list over parent documents (graded gains where the question file has them; the evaluation's ranx metric). Run:

    python bench/milvus_parity.py [--faquad PATH] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from retrieval.ingest.corpus import chunk_documents, load_corpus, load_questions  # noqa: E402
from retrieval.backends.lexical import LexicalIndex  # noqa: E402
from retrieval.backends.milvus import MilvusLexical, MilvusStore, open_client, tenant_key, tenant_stats  # noqa: E402
from retrieval.core.filters import build_filters, field_types  # noqa: E402
from retrieval.core.paths import LAB_CORPUS, LAB_QUESTIONS  # noqa: E402
from retrieval.core.text import KEPT_WORDS, fold, stopwords  # noqa: E402
from retrieval.offline.evaluation.metrics import ranking_scores, relevant_grades  # noqa: E402
from retrieval.settings import Settings  # noqa: E402

FAQUAD = ROOT.parent / "shared" / "data" / "faquad"


def hash_embed(texts: list[str]) -> np.ndarray:
    """A cheap deterministic 8-dim embedding: only the lexical side is measured here."""
    out = np.zeros((len(texts), 8), dtype=np.float32)
    for i, t in enumerate(texts):
        rng = np.random.default_rng(abs(hash(t)) % 2**32)
        out[i] = rng.normal(size=8)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def _stop_list() -> list[str]:
    from stop_words import get_stop_words

    return sorted(stopwords() | {w for w in get_stop_words("portuguese") if fold(w) not in KEPT_WORDS})


def builtin_collection(client, name: str, chunks, tenant_field: str, folded: bool = False) -> None:
    """Milvus's own BM25 on the same chunks: a VARCHAR text field, the BM25 function, a sparse output."""
    from pymilvus import DataType, Function, FunctionType

    if client.has_collection(name):
        client.drop_collection(name)
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=1024)
    schema.add_field("tenant", DataType.VARCHAR, max_length=1024, is_partition_key=True)
    schema.add_field("text", DataType.VARCHAR, max_length=65535, enable_analyzer=True,
                     analyzer_params={"tokenizer": "standard",
                                      "filter": ["lowercase", {"type": "stop", "stop_words": _stop_list()}]})
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["text"],
                                 output_field_names=["sparse"]))
    index = client.prepare_index_params()
    index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                    params={"bm25_k1": 1.5, "bm25_b": 0.75})
    client.create_collection(name, schema=schema, index_params=index, consistency_level="Strong")
    rows = [{"id": c.chunk_id, "tenant": tenant_key(c.metadata.get(tenant_field)), "text": fold(c.indexed_text) if folded else c.indexed_text}
            for c in chunks]
    for start in range(0, len(rows), 2000):
        client.insert(name, rows[start : start + 2000])


def builtin_search(client, name: str, text: str, tenant, window: int) -> list[str]:
    hits = client.search(name, data=[text], anns_field="sparse", limit=window,
                         filter=f"tenant == {json.dumps(tenant_key(tenant))}", output_fields=["id"],
                         search_params={"metric_type": "BM25"})
    return [str(h["id"]) for h in hits[0]]


def measure(label: str, corpus: Path, questions: Path, client, settings: Settings) -> dict:
    docs = load_corpus(corpus)
    chunks = chunk_documents(docs, settings.chunk_tokens, settings.chunk_overlap, settings.contextual)
    qs = load_questions(questions)
    tf = settings.tenant_field
    types = field_types(chunks)
    started = time.perf_counter()
    local = LexicalIndex(chunks, tf, settings.bm25_engine)
    stats = tenant_stats(chunks, tf)
    store = MilvusStore(client, f"parity:{label}", "hash-8", "", tenant_field=tf, types=types)
    store.drop()
    store.sync(chunks, hash_embed, 256, False, stats=stats)
    lexical = MilvusLexical(store, chunks, tf, stats)
    builtin_collection(client, f"builtin_{label}", chunks, tf)
    builtin_collection(client, f"builtinf_{label}", chunks, tf, folded=True)
    setup_s = time.perf_counter() - started
    parent = {c.chunk_id: c.parent_id for c in chunks}
    window = settings.window
    rows: dict[str, dict[str, list[str]]] = {"local": {}, "sparse": {}, "builtin": {}, "builtin_folded": {}}
    grades: dict[str, dict[str, int]] = {}
    same = {"sparse": 0, "builtin": 0, "builtin_folded": 0}
    overlap = {"sparse": [], "builtin": [], "builtin_folded": []}
    score_diff = 0.0
    for number, q in enumerate(qs):
        flt = build_filters(q.filters, types, tf)
        a = local.search(q.question, flt, window)
        b = lexical.search(q.question, flt, window)
        tenants = flt.get(tf) or tuple(stats)
        c: list[str] = []
        d: list[str] = []
        for t in tenants:
            c += builtin_search(client, f"builtin_{label}", q.question, t, window)
            d += builtin_search(client, f"builtinf_{label}", fold(q.question), t, window)
        lists = {"local": [i.chunk_id for i in a.items], "sparse": [i.chunk_id for i in b.items], "builtin": c,
                 "builtin_folded": d}
        for x, y in zip(a.items, b.items):
            score_diff = max(score_diff, abs(x.score - y.score),
                             max((abs(x.terms[t] - y.terms.get(t, 0.0)) for t in x.terms), default=0.0))
        if relevant_grades(q):  # nDCG of the answerable questions (graded gains where the file has them)
            grades[str(number)] = relevant_grades(q)
        for name, ids in lists.items():
            rows[name][str(number)] = [parent[i] for i in ids]
        for name in ("sparse", "builtin", "builtin_folded"):
            same[name] += lists[name] == lists["local"]
            top = set(lists["local"][:10])
            overlap[name].append(len(top & set(lists[name][:10])) / len(top) if top else float(not lists[name]))
    n = len(qs)
    mean = lambda xs: round(float(np.mean([x for x in xs if x is not None])), 4)  # noqa: E731
    ndcg = {k: ranking_scores(grades, v, ["ndcg@10"], k) for k, v in rows.items()}
    return {"set": label, "questions": n, "chunks": len(chunks), "setup_s": round(setup_s, 1),
            "ndcg@10": {k: mean([x["ndcg@10"] for x in v.values()]) for k, v in ndcg.items()},
            "identical_lists": {k: f"{v}/{n}" for k, v in same.items()},
            "overlap@10": {k: mean(v) for k, v in overlap.items()},
            "max_abs_score_diff_sparse_vs_local": score_diff}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--faquad", type=Path, default=FAQUAD)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)
    settings = Settings(_env_file=None)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        client = open_client(Path(tmp) / "parity.db")
        results.append(measure("lab", LAB_CORPUS, LAB_QUESTIONS, client, settings))
        if (args.faquad / "questions.jsonl").exists():
            results.append(measure("faquad", args.faquad / "corpus.jsonl", args.faquad / "questions.jsonl",
                                   client, settings))
        client.close()
    for r in results:
        print(json.dumps(r, ensure_ascii=False))
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
