"""A fusion method and a reranker kind are each one declaration: declared here, in a test, and nowhere else,
they are validated by the settings, run in a trace, offered by the app's pickers, explained on the provenance
card and evaluated as a configuration; withdrawn, they are refused again.

Borda count (each list gives ``n − rank + 1`` points to an item at ``rank`` of its ``n``) and a reranker that
reverses the fused window are small enough to check by hand. A ranking metric is one declaration too: MAP@k,
declared here, is computed by the evaluation (checked by hand), shown where the headline metrics go and offered
by the Evaluation page's metric pickers."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.apptest import assert_ok, open_tab, page, plain

from retrieval.backends.embedders import EMBEDDERS, EmbeddingModel
from retrieval.core.kinds import Text
from retrieval.learned.reader.codecs import CODECS, CodecFamily, check_spec, tag_of
from retrieval.learned.reader.states import StateStore
from retrieval.core.types import RankedList
from retrieval.offline.evaluation import named_configs
from retrieval.pipeline.workbench import open_workbench
from retrieval.settings import Settings
from retrieval.stages.fusion import METHODS
from retrieval.stages.fusion.base import FusionMethod, check_weight_names, fused_items, weight_of
from retrieval.stages.rerank import KINDS
from retrieval.stages.rerank.base import LOADED, PassageReranker, RerankerKind, prefixed
from retrieval.stages.transforms import TRANSFORMS, Transform

PX7 = "O PX-7 não foi ativado apesar do pagamento, o que faço?"


def borda(lists, k, weights) -> RankedList:
    contributions, ranks, parents = {}, {}, {}
    for ranker, ranked in lists.items():
        n = len(ranked.items)
        for item in ranked.items:
            contributions.setdefault(item.chunk_id, {})[ranker] = weight_of(ranker, weights) * (n - item.rank + 1)
            ranks.setdefault(item.chunk_id, {})[ranker] = item.rank
            parents.setdefault(item.chunk_id, item.parent_id)
    return RankedList("fused", "borda_count", fused_items(contributions, ranks, parents))


class Reverse(PassageReranker):
    kind = "reverse"
    score_kind = "reversed fused rank"

    def __init__(self, name: str) -> None:
        self.name = name

    def score(self, question, passages):
        return [float(i) for i in range(len(passages))]  # the last candidate first


BORDA = FusionMethod(name="borda_count", fuse=borda, label=Text("Borda count", "Contagem de Borda"), rank_based=False,
                     check_weights=check_weight_names, term_weight=lambda term: weight_of(term.ranker, term.weights),
                     formula=lambda term, lang: f"{term.recorded:g} points",
                     evaluation=("borda_count", {"reranker_model": "none", "fusion": "borda_count"}))
REVERSE = RerankerKind(name="reverse", label=Text("Reverse (a test's kind)", "Ao contrário (tipo de teste)"),
                       described=Text("{name} (reversed)", "{name} (ao contrário)"), parse=prefixed("reverse"),
                       load=lambda spec, context: (Reverse(spec.text), LOADED(name=spec.text, kind="reverse")),
                       offer="reverse", evaluation=("hybrid+reverse", {"reranker_model": "reverse"}))


@pytest.fixture
def declared():
    with pytest.raises(ValueError, match="unknown fusion method .borda_count."):
        Settings(fusion="borda_count", _env_file=None)
    METHODS.declare(BORDA)
    KINDS.declare(REVERSE)
    try:
        yield
    finally:
        METHODS.withdraw("borda_count")
        KINDS.withdraw("reverse")
    with pytest.raises(ValueError, match="unknown fusion method .borda_count."):
        Settings(fusion="borda_count", _env_file=None)


def test_the_settings_take_them_and_a_trace_runs_them(declared, lab_bench) -> None:
    s = lab_bench.settings.with_overrides(fusion="borda_count", reranker_model="reverse", reranker_max_input=6)
    assert s.fusion == "borda_count" and s.reranker_model == "reverse"
    trace = lab_bench.ask(PX7, {"tenant": "lumen"}, settings=s)
    assert trace.fused.score_kind == "borda_count" and trace.tier == "full"
    assert trace.models["reranker_kind"] == "reverse"
    # Borda by hand from the trace's own windows.
    points: dict[str, int] = {}
    for ranked in (trace.lexical, trace.dense):
        for item in ranked.items:
            points[item.chunk_id] = points.get(item.chunk_id, 0) + len(ranked.items) - item.rank + 1
    assert [i.score for i in trace.fused.items] == sorted(points.values(), reverse=True)
    assert {i.chunk_id: i.score for i in trace.fused.items} == points
    # The reranker read the first six fused candidates and reversed them.
    assert [i.chunk_id for i in trace.reranked.items] == [i.chunk_id for i in trace.fused.items[:6]][::-1]
    assert [i.fused_rank for i in trace.reranked.items] == [6, 5, 4, 3, 2, 1]
    assert "borda_count" in named_configs() and "hybrid+reverse" in named_configs()


def test_the_app_offers_and_explains_them(declared) -> None:
    at = page(q=PX7, tenant="lumen", fusion="borda_count", reranker="reverse")
    assert_ok(at)
    assert "Borda count" in at.selectbox(key="fusion").options
    assert at.selectbox(key="fusion").value == "borda_count"
    assert at.radio(key="rerank_mode").value == "reverse"
    assert "Reverse (a test's kind)" in at.radio(key="rerank_mode").options
    cards = [m.value for m in at.markdown if m.value.startswith("Fused #") and "(Borda count): " in m.value]
    assert len(cards) == 1 and "points" in cards[0], cards
    assert any(m.value.startswith("Reranker (reverse) #") for m in at.markdown)


# --- A query transform is one declaration too -------------------------------------------------------------------

def head(question: str, glossary) -> list[str]:
    """The question up to its first comma: a variant small enough to check by hand (it keeps the code and the
    negation, so the invariants hold and it searches)."""
    return [question.split(",")[0]]


TAIL = Transform("tail", Text("head clause (a test's transform)", "oração inicial (transformação de teste)"),
                 Text("the question up to its first comma", "a pergunta até a primeira vírgula"), "variants",
                 local=head, evaluation=("hybrid+tail", {"reranker_model": "none", "transforms": ("tail",)}))


@pytest.fixture
def declared_transform():
    with pytest.raises(ValueError, match="unknown transform.s. tail"):
        Settings(transforms="tail", _env_file=None)
    TRANSFORMS.declare(TAIL)
    try:
        yield
    finally:
        TRANSFORMS.withdraw("tail")
    with pytest.raises(ValueError, match="unknown transform.s. tail"):
        Settings(transforms="tail", _env_file=None)


def test_a_declared_transform_is_validated_searched_fused_and_evaluated(declared_transform, lab_bench) -> None:
    s = lab_bench.settings.with_overrides(transforms=("tail",), reranker_model="none", fusion="weighted_rrf",
                                          fusion_weights="bm25:tail=2")
    assert s.transforms == ("tail",) and s.fusion_weight_map == {"bm25:tail": 2.0}
    trace = lab_bench.ask(PX7, {"tenant": "lumen"}, settings=s)
    assert [(q.kind, q.text) for q in trace.queries] == [("original", PX7), ("tail", "O PX-7 não foi ativado apesar do pagamento")]
    # Its own lists went into the fusion under its ranker names, weighted as the settings said.
    rankers = {r for item in trace.fused.items for r in item.contributions}
    assert {"bm25:tail", "dense:tail"} <= rankers
    once = lab_bench.ask(PX7, {"tenant": "lumen"}, settings=s.with_overrides(fusion_weights="bm25:tail=1"))
    first = {i.chunk_id: i for i in once.fused.items}[trace.fused.items[0].chunk_id]
    assert trace.fused.items[0].contributions["bm25:tail"] == pytest.approx(2 * first.contributions["bm25:tail"])
    assert "tail" in trace.costs["techniques"]
    assert named_configs()["hybrid+tail"] == {"reranker_model": "none", "transforms": ("tail",)}


def test_the_app_offers_a_declared_transform(declared_transform) -> None:
    at = page(q=PX7, tenant="lumen", transforms="tail")
    assert_ok(at)
    box = at.sidebar.multiselect(key="transforms")
    assert box.value == ["tail"]
    assert "head clause (a test's transform)" in box.options


# --- An embedding model is one declaration too ------------------------------------------------------------------

class Letters:
    """A 26-dimension embedder counting each letter a-z: dense scores small enough to check by hand."""

    name = "letters"
    batch = 64

    def _one(self, text: str) -> np.ndarray:
        v = np.array([text.lower().count(chr(ord("a") + i)) for i in range(26)], dtype=np.float32) + 1e-6
        return v / np.linalg.norm(v)

    def embed_queries(self, texts):
        return np.vstack([self._one(t) for t in texts])

    def embed_passages(self, texts):
        return self.embed_queries(texts)


LETTERS = EmbeddingModel("letters", Text("letter counts (a test's embedder)", "contagem de letras (modelo de teste)"),
                         lambda allow_downloads, threads: Letters(),
                         evaluation=("hybrid-letters", {"reranker_model": "none", "embedding_model": "letters"}))


@pytest.fixture
def declared_embedder(tmp_path, monkeypatch):
    EMBEDDERS.declare(LETTERS)
    monkeypatch.setenv("RETRIEVAL_EMBEDDING_MODEL", "letters")
    monkeypatch.setenv("RETRIEVAL_CHROMA_PATH", str(tmp_path / "chroma"))
    monkeypatch.setenv("RETRIEVAL_ONE_PASS", "false")
    try:
        yield Settings(_env_file=None)
    finally:
        EMBEDDERS.withdraw("letters")


def test_a_declared_embedder_indexes_searches_and_is_evaluated(declared_embedder) -> None:
    settings = declared_embedder
    assert settings.embedding_model == "letters"
    bench = open_workbench(settings.with_overrides(reranker_model="none"), progress=False)
    trace = bench.ask(PX7, {"tenant": "lumen"})
    assert trace.models["embedder"] == "letters" and trace.models["embedder_status"] == "loaded"
    # The dense list is the letter-count cosine, computed here by hand for its first chunk.
    top = trace.dense.items[0]
    passage = bench.state.chunk_by_id[top.chunk_id].passage(settings.passage_template)
    by_hand = float(Letters().embed_queries([PX7])[0] @ Letters().embed_passages([passage])[0])
    assert top.score == pytest.approx(by_hand, abs=1e-4)
    assert named_configs()["hybrid-letters"] == {"reranker_model": "none", "embedding_model": "letters"}


def test_the_app_names_a_declared_embedder(declared_embedder) -> None:
    at = open_tab(page(q=PX7, tenant="lumen"), "tab_timings")
    assert_ok(at)
    assert any("`letters` — letter counts (a test's embedder)" in plain(c.value) for c in at.caption), \
        [c.value for c in at.caption]


# --- A metric is one declaration too ----------------------------------------------------------------------------

def average_precision(ranked: list[str], relevant: set[str], k: int) -> float:
    """AP@k by hand: the precision at the rank of each relevant parent in the top k, summed, over the relevant
    parents (ranx's ``map``)."""
    hits, total = 0, 0.0
    for rank, parent in enumerate(ranked[:k], start=1):
        if parent in relevant:
            hits += 1
            total += hits / rank
    return total / len(relevant)


@pytest.fixture
def declared_metric():
    from retrieval.offline.evaluation import METRICS, Metric, metrics

    assert "map@10" not in metrics.headline(10) and "map" not in METRICS
    METRICS.declare(Metric("map", Text("MAP", "MAP"),
                           Text("the precision at each relevant parent's rank in the top k, averaged over the "
                                "relevant parents",
                                "a precisão na posição de cada pai relevante no top k, na média sobre os pais "
                                "relevantes"), headline=6))
    try:
        yield metrics
    finally:
        METRICS.withdraw("map")
    assert "map@10" not in metrics.headline(10) and "map@3" not in metrics.metric_names([3])
    assert "map@10" not in metrics.warm_metrics()


def test_a_declared_metric_is_computed_by_the_evaluation(declared_metric) -> None:
    from retrieval.core.types import Question
    from retrieval.offline.evaluation import scores

    metrics = declared_metric
    assert metrics.metric_names([3]) == ["ndcg@3", "recall@3", "precision@3", "mrr@3", "hit_rate@3", "map@3"]
    assert metrics.headline(10)[-1] == "map@10" and "map@10" in metrics.warm_metrics()
    assert metrics.label("map@10", "pt") == "MAP@10"
    # Relevant a and b; the list a, z, b: precision 1/1 at a, 2/3 at b, over 2 relevant parents = 5/6.
    got = scores([Question("q", "?", "g", ("a", "b"), {}, None)], {"q": ["a", "z", "b"]}, ["map@3"], "run")
    assert got["q"]["map@3"] == pytest.approx(5 / 6)
    assert average_precision(["a", "z", "b"], {"a", "b"}, 3) == pytest.approx(5 / 6)


def test_the_evaluation_page_reports_and_offers_a_declared_metric(declared_metric) -> None:
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from retrieval.offline.evaluation.metrics import relevant_grades
    from retrieval.offline.report import decision_record
    from retrieval.offline.report_html import evaluation_report

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "pages" / "2_Evaluation.py"),
                           default_timeout=300).run()
    at.selectbox(key="ev_split").set_value("heldout")
    at.multiselect(key="ev_configs").set_value(["bm25", "hybrid"])
    at.selectbox(key="ev_reranker").set_value("none")
    at.button[0].click().run()  # the form's submit button
    assert_ok(at)
    report, asked = at.session_state["ev_report"], at.session_state["ev_questions_by_id"]
    # Computed by the evaluation, each question's value by hand from its ranked parents and its judgments (the
    # parents it names relevant or grades above 0).
    for cfg in report["configs"].values():
        answerable = [r for r in cfg["questions"] if r["relevant"]]
        for r in answerable:
            relevant = set(relevant_grades(asked[r["id"]]))
            assert r["metrics"]["map@10"] == pytest.approx(average_precision(r["ranked"], relevant, 10))
        assert cfg["overall"]["map@10"] == pytest.approx(
            sum(r["metrics"]["map@10"] for r in answerable) / len(answerable), abs=1e-4)
        assert 0 < cfg["overall"]["map@10"] < 1
    assert {c["metric"] for c in report["comparisons"]} >= {"map@1", "map@10"}
    # Shown where the headline metrics go: the page's table, the decision record, the HTML report.
    frames = [d.value for d in at.dataframe]
    figures = next(f for f in frames if {"config", "tier", "ndcg@10"} <= set(f.columns))
    assert list(figures.columns[2:9]) == ["ndcg@10", "recall@10", "mrr@10", "hit_rate@10", "precision@10", "map@10",
                                          "abstention_accuracy"]
    # the comparison panel's table (the decision's one-row table comes before it)
    compared = [f for f in frames if {"split", "config", "metric", "value"} <= set(f.columns)][-1]
    assert set(compared["metric"]) == {"ndcg@10", "recall@10", "mrr@10", "hit_rate@10", "precision@10", "map@10",
                                       "abstention_accuracy"}
    assert "| config | ndcg@10 | recall@10 | mrr@10 | hit_rate@10 | precision@10 | map@10 | abstention_accuracy |" \
        in decision_record(report)
    assert "<th>precision@10</th><th>map@10</th><th>abstention_accuracy</th>" in evaluation_report(report)
    # Offered by the metric pickers, and said what it measures.
    for key in ("ev_two_metric", "ev_group_metric"):
        assert "map@10" in at.selectbox(key=key).options
    assert "- **MAP@10** (`map@10`): the precision at each relevant parent" in at.selectbox(key="ev_two_metric").help


# --- A reader state codec is one declaration too ----------------------------------------------------------------

SQ6 = CodecFamily("sq6", "sq6", "sq6", lambda spec, found, hidden: "SQ6", lambda found: 1,
                  Text("faiss scalar quantization, 6 bits a value (a test's codec)",
                       "quantização escalar do faiss, 6 bits por valor (codec de teste)"))


def test_a_declared_state_codec_is_accepted_stored_and_read(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"unknown reader state codec 'sq6' \(use auto, fp16, sq8, sq4"):
        Settings(reader_state_codec="sq6", _env_file=None)
    CODECS.declare(SQ6)
    try:
        assert Settings(reader_state_codec=" SQ6 ", _env_file=None).reader_state_codec == "sq6"
        rng = np.random.default_rng(0)
        rows = rng.normal(size=(300, 32)).astype(np.float32)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        store = StateStore(tmp_path / f"states{tag_of('sq6')}", 32, codec="sq6")
        assert store.row_bytes == 24 and store.folder.name == "states-sq6"   # 32 values × 6 bits
        assert store.fit(rows) and store.put_many({"p": (rows[:5], [(0, 5)])}) == 1
        back, spans = store.get_many(["p"])["p"]
        assert spans == ((0, 5),) and back.shape == (5, 32)
        assert np.abs(back.astype(np.float32) - rows[:5]).max() < 0.05   # 64 levels a value, range fitted
        with pytest.raises(ValueError, match=r"unknown reader state codec 'sq66' .*faiss:<factory> or sq6\)"):
            check_spec("sq66")
    finally:
        CODECS.withdraw("sq6")
    with pytest.raises(ValueError, match="unknown reader state codec 'sq6'"):
        Settings(reader_state_codec="sq6", _env_file=None)
