"""A multi-valued field (front matter's ``categories: [dados, api]``) filters by member on every path: BM25, Chroma
(``$contains``) and Milvus Lite (``json_contains_any`` in its JSON field), each giving the same lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval.pipeline.workbench import Workbench

pytestmark = pytest.mark.integration

POSTS = {
    "dados.md": "---\ncategories: [dados, api]\n---\n# Portal de dados\n\nA API de licitações publica os contratos "
                "em formato aberto todos os dias.\n",
    "saude.md": "---\ncategories: saude\n---\n# Postos de saúde\n\nOs contratos dos postos de saúde são publicados "
                "no portal toda semana.\n",
    "obras.md": "---\ncategories: [obras, dados]\n---\n# Obras\n\nOs contratos de obras públicas ficam no portal de "
                "dados com seus aditivos.\n",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("blog")
    for name, text in POSTS.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _lists(trace) -> tuple[list[str], list[str], list[str]]:
    return ([i.parent_id for i in trace.lexical.items], [i.parent_id for i in trace.dense.items],
            [f.parent_id for f in trace.final])


@pytest.mark.parametrize("backend", ["local", "milvus"])
def test_a_list_field_filters_by_member_on_every_path(settings, lab_bench, folder, tmp_path, backend) -> None:
    s = settings.with_overrides(backend=backend, milvus_uri=str(tmp_path / "list.db"),
                                chroma_path=tmp_path / "chroma", reranker_model="none")
    bench = Workbench(s, embedder=lab_bench.embedder, progress=False)
    bench.load_corpus(str(folder))
    lexical, dense, final = _lists(bench.ask("onde são publicados os contratos?", {"categories": "dados"}))
    assert sorted(lexical) == ["dados", "obras"] and sorted(dense) == ["dados", "obras"]
    assert set(final) <= {"dados", "obras"}
    lexical, dense, _ = _lists(bench.ask("onde são publicados os contratos?", [("categories", "saude"),
                                                                               ("categories", "api")]))
    assert sorted(lexical) == ["dados", "saude"] and sorted(dense) == ["dados", "saude"]
    assert _lists(bench.ask("onde são publicados os contratos?", {"categories": "nada"}))[:2] == ([], [])
