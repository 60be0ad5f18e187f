"""The reader's training pairs and its answer-span score, on tiny hand-made sets."""

from __future__ import annotations

import json

import pytest

from experiments.reader_pairs import chunk_words, load_set, split_of_article


def _write(folder, corpus, questions):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in corpus), "utf-8")
    (folder / "questions.jsonl").write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in questions), "utf-8")


def test_chunks_are_the_products_windows():
    words = " ".join(f"w{i}" for i in range(250))
    chunks = chunk_words(words, 120, 30)
    assert [c.split()[0] for c in chunks] == ["w0", "w90", "w180"]
    assert all(len(c.split()) <= 120 for c in chunks)


def test_pairs_positive_mentions_and_hard_negative(tmp_path):
    corpus = [{"id": "rio-p0", "title": "Rio", "text": "O rio Amazonas nasce nos Andes peruanos e corre para o leste."},
              {"id": "rio-p1", "title": "Rio", "text": "O rio Nilo corre para o norte e deságua no Mediterrâneo."},
              {"id": "rio-p2", "title": "Rio", "text": "Pontes cruzam o rio em Manaus desde o século vinte."}]
    questions = [{"id": "q1", "question": "Onde nasce o rio Amazonas?", "group": "answerable", "relevant": ["rio-p0"],
                  "answers": ["nos Andes peruanos"]},
                 {"id": "q2", "question": "Onde nasce o rio Nilo?", "group": "unanswerable", "relevant": [],
                  "plausible_answers": ["Mediterrâneo"], "near": ["rio-p1"]}]
    _write(tmp_path / "set", corpus, questions)
    chunks, pairs, qs, articles = load_set(tmp_path / "set", "toy")
    by_kind = {(p.qid, p.kind): p for p in pairs}
    assert by_kind[("q1", "positive")].chunk_id == "rio-p0#0" and by_kind[("q1", "positive")].label == 1
    # the hard negative is the article's other chunk BM25 ranks first: it shares "rio" and "nasce"? only "rio"
    assert by_kind[("q1", "hard_negative")].chunk_id in {"rio-p1#0", "rio-p2#0"}
    assert by_kind[("q1", "hard_negative")].label == 0
    assert by_kind[("q2", "mentions")].chunk_id == "rio-p1#0" and by_kind[("q2", "mentions")].label == 0
    assert {q["split"] for q in qs} == {split_of_article("toy", "rio")}


def test_held_out_parents_are_never_a_training_negative(tmp_path):
    corpus = [{"id": "a-p0", "title": "A", "text": "senha do cofre muda todo mês"},
              {"id": "a-p1", "title": "A", "text": "senha do portal expira em noventa dias"}]
    questions = [{"id": "q1", "question": "quando expira a senha do portal?", "group": "answerable",
                  "relevant": ["a-p1"], "answers": ["noventa dias"]},
                 {"id": "q2", "question": "quando muda a senha do cofre?", "group": "answerable",
                  "relevant": ["a-p0"], "answers": ["todo mês"]}]
    _write(tmp_path / "set", corpus, questions)
    _, pairs, qs, _ = load_set(tmp_path / "set", "toy", dev_share=0, heldout_share=0,
                               heldout_parents=frozenset({"a-p1"}))
    assert {q["id"]: q["split"] for q in qs} == {"q1": "heldout", "q2": "train"}
    train = [p for p in pairs if p.split == "train"]
    assert all(not p.chunk_id.startswith("a-p1") for p in train)


def test_span_support_is_best_span_minus_null():
    import torch
    from experiments.reader_model import span_support

    # two question tokens, three passage tokens; null = start[0] + end[0] = 1 + 1
    start = torch.tensor([[1.0, 0.0, 5.0, 0.0, 2.0]])
    end = torch.tensor([[1.0, 0.0, 0.0, 4.0, 9.0]])
    # passage spans (i ≤ j): best is start 2 (5.0) + end 4 (9.0) = 14 within max_answer 3; minus null 2
    assert float(span_support(start, end, [2], max_answer=3)[0]) == pytest.approx(12.0)
    # max_answer 2 forbids the 3-token span 2..4: best is 2..3 (5 + 4) or 4..4 (2 + 9): 11, minus 2
    assert float(span_support(start, end, [2], max_answer=2)[0]) == pytest.approx(9.0)
