"""How much the reader's scores move when its passage token states are stored compressed (``make bench-codecs``).

For each labelled set (the lab set, and FaQuAD where ``../shared/data`` has it), every passage is read once by the
shipped reader (fp16 states, as the store keeps them today); each codec of :mod:`retrieval.learned.reader.codecs`
is fitted on that corpus' own states and each passage's states are put through it. On the reader's dev split
(:mod:`experiments.reader_pairs`: its train and dev parts, both unseen by the reader, which is not trained;
held-out articles never read) it reports, per codec:

* bytes a passage (the mean over the corpus) and what 100,000 such passages take;
* MaxSim AUC of the dev pairs (answering passage vs hard negative / mention);
* within-article MRR@10 (the answering chunk ranked among its article's chunks by MaxSim);
* Spearman's rank correlation of every dev (question, chunk) score against fp16's, and the largest score change.

Writes ``artifacts/bench/reader_codecs.json`` and prints a table. About a minute for the lab set, two for FaQuAD.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from retrieval.core.paths import PROJECT_ROOT

CODECS = ("fp16", "sq8", "sq4", "pq96", "pq128x5", "pq96x6", "pq64", "pq48", "rpq64")


def _auc(pos: list[float], neg: list[float]) -> float:
    if not pos or not neg:
        return float("nan")
    p, n = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float(((p > n).sum() + 0.5 * (p == n).sum()) / (p.size * n.size))


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


def measure(name: str, folder: Path, codecs: tuple[str, ...], parts: tuple[str, ...] = ("train", "dev")) -> dict:
    import torch

    from experiments.reader_pairs import evaluation_heldout_parents, load_set
    from retrieval.learned.reader.codecs import StateCodec
    from retrieval.learned.reader.loader import load_reader

    chunks, pairs, questions, articles = load_set(folder, name,
                                                  heldout_parents=evaluation_heldout_parents(folder.parent, name))
    reader, why = load_reader()
    if reader is None:
        raise SystemExit(f"the reader did not load: {why.text()}")
    # The shipped reader is not trained: its train and dev parts are both unseen by it (the held-out part is
    # left alone, as everywhere); the codecs are fitted on passages only, never on a question or a label.
    dev_q = [q for q in questions if q["split"] in parts and q.get("relevant")]
    dev_pairs = [p for p in pairs if p.split in parts]
    needed = sorted({p.chunk_id for p in dev_pairs} | {c.chunk_id for q in dev_q for c in articles[q["article"]].chunks})
    started = time.perf_counter()
    states = dict(zip(needed, (s.half().float().numpy() for s in
                               reader.token_states([chunks[c].text for c in needed], is_query=False))))
    encode_s = time.perf_counter() - started
    all_rows = np.concatenate(list(states.values()))
    texts = sorted({p.question for p in dev_pairs} | {q["question"] for q in dev_q})
    qstates = dict(zip(texts, (s.numpy() for s in reader.token_states(texts, is_query=True))))

    def maxsim(question: str, rows: np.ndarray) -> float:
        return float((qstates[question] @ rows.T).max(axis=1).mean())

    out = {"passages": len(states), "tokens_per_passage": round(len(all_rows) / len(states), 1),
           "dev_pairs": len(dev_pairs), "dev_questions": len(dev_q), "encode_s": round(encode_s, 1), "codecs": {}}
    reference: np.ndarray | None = None
    for spec in codecs:
        codec = StateCodec.build(spec, all_rows.shape[1])
        fit_started = time.perf_counter()
        codec.train(all_rows)
        fit_s = time.perf_counter() - fit_started
        stored = {c: codec.roundtrip(rows).astype(np.float32) for c, rows in states.items()}
        pos = [maxsim(p.question, stored[p.chunk_id]) for p in dev_pairs if p.label == 1]
        neg = [maxsim(p.question, stored[p.chunk_id]) for p in dev_pairs if p.label == 0]
        rr = []
        flat = []
        for q in dev_q:
            cands = articles[q["article"]].chunks
            scores = [maxsim(q["question"], stored[c.chunk_id]) for c in cands]
            flat += scores
            order = sorted(range(len(cands)), key=lambda i: -scores[i])[:10]
            rr.append(next((1 / (r + 1) for r, i in enumerate(order) if cands[i].parent_id in q["relevant"]), 0.0))
        flat_arr = np.asarray(flat + pos + neg)
        if reference is None:
            reference = flat_arr
        out["codecs"][spec] = {
            "bytes_per_passage": round(codec.code_size * len(all_rows) / len(states)),
            "gb_per_100k": round(codec.code_size * len(all_rows) / len(states) * 100_000 / 1e9, 2),
            "fit_s": round(fit_s, 1),
            "auc": round(_auc(pos, neg), 4),
            "mrr10": round(float(np.mean(rr)) if rr else float("nan"), 4),
            "spearman": round(_spearman(reference, flat_arr), 4),
            "max_abs_change": round(float(np.abs(reference - flat_arr).max()), 4),
        }
        torch.cuda.empty_cache() if torch.cuda.is_available() else None
    base = out["codecs"][codecs[0]]
    for spec, row in out["codecs"].items():
        row["d_auc"] = round(row["auc"] - base["auc"], 4)
        row["d_mrr10"] = round(row["mrr10"] - base["mrr10"], 4)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=PROJECT_ROOT.parent / "shared" / "data")
    parser.add_argument("--sets", default="faquad")
    parser.add_argument("--codecs", default=",".join(CODECS),
                        help="comma-separated; ';'-separated when a faiss factory has commas (faiss:OPQ64,PQ64)")
    parser.add_argument("--out", type=Path, default=PROJECT_ROOT / "artifacts" / "bench" / "reader_codecs.json")
    args = parser.parse_args()
    codecs = tuple(c.strip() for c in args.codecs.split(";" if ";" in args.codecs else ",") if c.strip())
    report = {}
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        folder = PROJECT_ROOT / "data" / "lab" if name == "lab" else args.data / name
        if not (folder / "questions.jsonl").exists():
            print(f"{name}: no set at {folder}; skipped")
            continue
        report[name] = measure(name, folder, codecs)
        print(f"\n{name}: {report[name]['passages']} passages, {report[name]['tokens_per_passage']} tokens each, "
              f"{report[name]['dev_pairs']} dev pairs, {report[name]['dev_questions']} dev questions")
        print(f"{'codec':8} {'B/passage':>10} {'GB/100k':>8} {'AUC':>7} {'ΔAUC':>7} {'MRR@10':>7} {'ΔMRR':>7} "
              f"{'Spearman':>8} {'max Δ':>6}")
        for spec, row in report[name]["codecs"].items():
            print(f"{spec:8} {row['bytes_per_passage']:>10} {row['gb_per_100k']:>8} {row['auc']:>7} {row['d_auc']:>7} "
                  f"{row['mrr10']:>7} {row['d_mrr10']:>7} {row['spearman']:>8} {row['max_abs_change']:>6}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
