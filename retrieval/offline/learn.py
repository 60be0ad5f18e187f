"""Learn the ranker from a corpus' own labels (``tune --learn-ranker``, the Evaluation page's button).

The labels are the corpus' judged questions: its question set (``relevant`` / ``graded``) and the judgments
made on the pages — the Ask page's judgments file (a question-set JSONL) and Team judging's ratings file (the
consensus grade of each pair, :func:`~.raters.consensus`) — merged by question (:func:`read_labels`: the same
text and filters are one question; a later source's grades replace an earlier one's for the same parent).

1. **Split.** The evaluation's fixed split by question id (:func:`~retrieval.core.split.split_of`), then by
   parent as the judge's trainer does (:func:`~.training.assign_splits`): a question is trained on only when it
   is in the dev split and none of its relevant parents is relevant to a held-out question. No held-out
   question is traced for training (:func:`training_questions` asserts it).
2. **Fit.** The corpus' training questions and the shipped training data (the lab set's training part, which
   ships with the project) are traced as ``train`` traces them (:func:`~.training.collect`, no
   leave-the-evidence-out cases: only the ranker is fitted); LambdaMART's rounds are chosen on the calibration
   part (20 % of the parents) and the ranker refit on the whole training part, seeded. The support gate, its
   threshold and the evidence model are the shipped judge's, unchanged: the new folder changes the order of the
   rerank window and nothing else.
3. **Check.** The corpus' current default (its adopted overrides, if any) and the same with
   ``reranker_model=ltr:<folder>`` are evaluated on the held-out split; :func:`~.tune.decide` recommends the
   learned ranker only for a held-out nDCG@10 gain with p < 0.05 and no relevant document lost.
4. **Keep.** Each training writes its own folder under ``<tuned dir>/<corpus key>.ranker/`` with the model card
   (what it was trained on, the held-out figures); ``last.json`` there records the last training (the Judging
   page shows it). :func:`adopt_ranker` stores ``reranker_model=ltr:<folder>`` in the corpus' tuned file beside
   the overrides already adopted there; folders of earlier trainings that nothing adopted are removed after an hour.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..core.paths import LAB_CORPUS, LAB_QUESTIONS
from ..core.split import split_of
from ..core.types import Question
from ..ingest.corpus import load_questions
from ..learned.judge.models import BoosterModel, JudgeModels, load_judge
from ..settings import Settings
from . import tuned
from .evaluation.compare import p_text
from .evaluation.configs import Config
from .evaluation.metrics import brief
from .evaluation.runner import evaluate_configs
from .judgments import question_id
from .raters import consensus, load_ratings
from .training import (MIN_TRAIN_QUESTIONS, RERANK_WINDOW, SEED, WINDOW, _fit_ranker, _hash_file, assign_splits,
                       collect)
from .tune import ALPHA, decide

#: The training data that ships with the project, traced beside the corpus' own labels: (corpus, questions).
SHIPPED: tuple[tuple[Path, Path], ...] = ((LAB_CORPUS, LAB_QUESTIONS),)
#: Where the last training of a corpus is recorded, inside its ranker folder.
LAST = "last.json"

#: ``(done, total, what)`` while tracing and while checking on held-out.
Progress = Callable[[int, int, str], None]
#: ``(corpus, settings) → Workbench`` loaded on that corpus.
OpenCorpus = Callable[[Path, Settings], Any]


def _question_key(question: str, filters: Mapping[str, Any] | None) -> str:
    """One question whatever its file: the judgments' id of its text (NFC, runs of spaces as one) and filters."""
    return question_id(" ".join(question.split()), filters)


@dataclass(frozen=True)
class Labels:
    """A corpus' labeled questions from every source, merged by question.

    Attributes:
        questions: one per question (text and filters), the first source's id, spans and group.
        sources: ``(file, questions read from it)`` in the order they were merged.
        judged_pairs: (question, parent) grades in all, zeros included.
    """

    questions: tuple[Question, ...]
    sources: tuple[tuple[str, int], ...]
    judged_pairs: int
    #: Records merged into a question an earlier source already held (the same text and filters).
    merged: int = 0
    #: Questions left out by :meth:`within`: judged only on parents the corpus does not hold.
    outside: int = 0

    def within(self, parents: set[str] | frozenset[str]) -> "Labels":
        """The questions of this corpus: each judged question needs a judged parent among ``parents`` (a
        judgments file holds every corpus' judgments); questions judged on nothing (abstentions) stay."""
        kept = tuple(q for q in self.questions if not _graded(q) or set(_graded(q)) & parents)
        return Labels(kept, self.sources, sum(len(_graded(q)) for q in kept), self.merged,
                      self.outside + len(self.questions) - len(kept))

    def counts(self) -> dict[str, int]:
        """Questions, answerable ones, judged pairs, and the answerable questions of each part of the split
        (``train``: trained on; ``dev_other``: dev, sharing a parent with a held-out question; ``heldout``)."""
        splits = assign_splits(self.questions)
        answerable = [q for q in self.questions if q.relevant]
        parts = {part: sum(1 for q in answerable if splits[q.id] == part) for part in ("train", "dev_other", "heldout")}
        return {"questions": len(self.questions), "answerable": len(answerable), "judged_pairs": self.judged_pairs,
                **parts, "merged": self.merged, "outside": self.outside}


def _graded(q: Question) -> dict[str, int]:
    grades = {str(p): int(g) for p, g in (q.graded or {}).items()}
    for p in q.relevant:
        grades.setdefault(str(p), 1)
    return grades


def _merge(into: dict[str, Question], order: list[str], q: Question) -> bool:
    """Add ``q``, or merge it into the question of the same text and filters; ``True`` when it was merged."""
    key = _question_key(q.question, q.filters)
    old = into.get(key)
    if old is None:
        into[key] = q
        order.append(key)
        return False
    grades = {**_graded(old), **_graded(q)}
    into[key] = replace(old, graded=grades, relevant=tuple(p for p, g in grades.items() if g > 0),
                        answers=old.answers or q.answers)
    return True


def _from_ratings(path: Path) -> list[Question]:
    out = []
    for qid, entry in consensus(load_ratings(path)).items():
        if not entry["question"]:
            continue  # a line imported from qrels holds no text: it cannot be asked
        grades = {str(p): int(g) for p, g in entry["graded"].items()}
        out.append(Question(id=str((entry.get("key") or {}).get("id") or qid), question=entry["question"],
                            group="judged", relevant=tuple(p for p, g in grades.items() if g > 0),
                            filters=dict(entry["filters"]), graded=grades))
    return out


def read_labels(question_sets: Sequence[str | Path], ratings: Sequence[str | Path] = (), *,
                max_question_chars: int | None = None) -> Labels:
    """Merge question sets (our JSONL, or any format :func:`~retrieval.ingest.corpus.load_questions` reads; the
    Ask page's judgments file is one) and Team judging ratings files (their consensus grades) into one set of
    labeled questions. A path that does not exist is skipped (a page's file before its first judgment): the
    caller checks the files the user named.

    Raises:
        CorpusError: a file that exists cannot be read (one line naming it).
    """
    merged: dict[str, Question] = {}
    order: list[str] = []
    sources = []
    joined = 0
    for path in question_sets:
        if not Path(path).exists():
            continue
        read = load_questions(path, max_question_chars=max_question_chars)
        joined += sum(_merge(merged, order, q) for q in read)
        sources.append((str(path), len(read)))
    for path in ratings:
        if not Path(path).is_file():
            continue
        read = _from_ratings(Path(path))
        joined += sum(_merge(merged, order, q) for q in read)
        sources.append((str(path), len(read)))
    # Ids unique in the merged set (two files may each hold a "q1"): the later one gets a suffix of its key.
    seen: set[str] = set()
    questions = []
    for key in order:
        q = merged[key]
        if q.id in seen:
            q = replace(q, id=f"{q.id}~{hashlib.sha1(key.encode('utf-8')).hexdigest()[:6]}")
        seen.add(q.id)
        questions.append(q)
    return Labels(tuple(questions), tuple(sources), sum(len(_graded(q)) for q in questions), joined)


def is_ratings_file(path: str | Path) -> bool:
    """Whether ``path`` is a Team judging ratings file (its first record names a ``rater`` and a ``parent``)
    rather than a question set."""
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    rec = json.loads(line)
                    return isinstance(rec, dict) and "rater" in rec and "parent" in rec
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return False


def read_label_files(paths: Sequence[str | Path], *, max_question_chars: int | None = None) -> Labels:
    """:func:`read_labels` over files of either kind, each told apart by :func:`is_ratings_file`."""
    ratings = [p for p in paths if is_ratings_file(p)]
    return read_labels([p for p in paths if p not in ratings], ratings, max_question_chars=max_question_chars)


def training_questions(questions: Sequence[Question]) -> list[Question]:
    """The answerable questions trained on: the ``train`` part of :func:`~.training.assign_splits`; never a
    question of the evaluation's held-out split (asserted), nor a dev question sharing a relevant parent with
    one."""
    splits = assign_splits(questions)
    chosen = [q for q in questions if q.relevant and splits[q.id] == "train"]
    held_parents = {p for q in questions if split_of(q.id) == "heldout" for p in q.relevant}
    assert not any(split_of(q.id) == "heldout" or set(q.relevant) & held_parents for q in chosen), \
        "a held-out question or parent reached the training part"
    return chosen


def readiness(labels: Labels) -> dict[str, Any]:
    """What the labels offer before any request: answerable questions to train on and to check on, against
    :data:`~.training.MIN_TRAIN_QUESTIONS`; ``why`` is the one-line refusal when they do not suffice."""
    counts = labels.counts()
    why = None
    if counts["train"] < MIN_TRAIN_QUESTIONS:
        why = (f"too few labels to learn a ranker from: {counts['train']} answerable question"
               f"{'s' if counts['train'] != 1 else ''} in the training part (split by parent), at least "
               f"{MIN_TRAIN_QUESTIONS} are needed; judge more questions on the Ask or Team judging page")
    elif counts["heldout"] == 0:
        why = "no answerable held-out question to check a learned ranker on: label more questions"
    return {**counts, "needed": MIN_TRAIN_QUESTIONS, "enough": why is None, "why": why}


def ranker_root(settings: Settings, corpus: str | Path | None) -> Path:
    """The corpus' ranker folders: ``<tuned dir>/<corpus key>.ranker`` (beside its tuned file)."""
    return tuned.tuned_dir(settings) / f"{tuned.corpus_key(settings, corpus)}.ranker"


def last_training(settings: Settings, corpus: str | Path | None) -> dict[str, Any] | None:
    """The record of the corpus' last training (:func:`learn_ranker`), or ``None`` (none, or unreadable)."""
    try:
        data = json.loads((ranker_root(settings, corpus) / LAST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _trace_cases(open_corpus: OpenCorpus, base: Settings, corpus: Path, questions: Sequence[Question], name: str,
                 tick: Callable[[int], None]) -> list:
    bench = open_corpus(corpus, base)
    return collect(bench, questions, name, {q.id: "train" for q in questions}, progress=tick, leave_out=False)


def fit_ranker(cases: Sequence[Any], seed: int = SEED, start: Any = None) -> tuple[Any, int]:
    """LambdaMART on the cases' candidate rows: rounds chosen on the calibration fold (early stopping), then
    refit on every case with those rounds. With ``start`` (a booster: the shipped ranker), the new trees are added
    to its trees (LightGBM's ``init_model``) rather than grown from nothing. Returns ``(booster, rounds)``, the
    rounds this fit added."""
    fit_part = [c for c in cases if c.fold == "fit"]
    calib = [c for c in cases if c.fold == "calib"]
    if not fit_part or not calib or not any(c.rank_labels.max(initial=0) > 0 for c in calib):
        fit_part, calib = list(cases), list(cases)
    _, rounds = _fit_ranker(fit_part, calib, "rows", 600, seed, start)
    if start is not None and rounds == 0:
        return start, 0
    booster, _ = _fit_ranker(list(cases), None, "rows", rounds, seed, start)
    return booster, rounds


def card(record: Mapping[str, Any]) -> str:
    """The model card of a learned ranker's folder."""
    counts, held = record["labels"], record.get("heldout") or {}
    lines = ["# Learned ranker for one corpus", "",
             f"Corpus `{record['corpus']}`. Trained {record['trained_at']} in {record['seconds']:.0f} s, seed "
             f"{record['seed']}, {record['rounds']} LambdaMART rounds (chosen on a calibration fold).", "",
             "Only the ranker (reranker kind `ltr`) was trained here; the support gate, its threshold and the "
             f"evidence model are those of `{record['judge']}`, unchanged.", "", "## Trained on", "",
             f"- this corpus' labels: {counts['train']} answerable questions of the training part (of "
             f"{counts['questions']} questions, {counts['judged_pairs']} judged pairs); {counts['dev_other']} "
             f"answerable dev questions that share a parent with a held-out question and {counts['heldout']} "
             "answerable held-out questions were not trained on"]
    lines += [f"  - `{path}`: {n} questions" for path, n in record["sources"]]
    lines += [f"- shipped training data `{s['corpus']}`: {s['questions']} questions of its training part"
              for s in record["shipped"]]
    lines += ["", "## Held-out check (the evaluation's held-out split, never trained on)", ""]
    if held:
        shown = brief(10)
        lines += ["| configuration | " + " | ".join(shown) + " |", "|" + " --- |" * (len(shown) + 1)]
        for name in ("default", "learned"):
            lines.append(f"| {name} | " + " | ".join(str(held[name].get(m)) for m in shown) + " |")
    lines += ["", f"Decision: {'recommended' if record['recommended'] else 'not recommended'} — {record['why']}", ""]
    return "\n".join(lines)


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _adopted_folder(settings: Settings, corpus: str | Path | None) -> str | None:
    adopted = tuned.load_adopted(settings, corpus)
    spec = str((adopted.overrides if adopted else {}).get("reranker_model", ""))
    return spec.partition(":")[2] or None if spec.startswith("ltr:") else None


#: A folder younger than this may be another training still checking itself: it is left for the next prune.
PRUNE_AGE_S = 3600.0


def _prune(root: Path, keep: Sequence[str | None]) -> None:
    """Remove the folders of earlier trainings that nothing adopted (the kept ones stay, and those of the last
    hour: another session may be training into one)."""
    kept = {str(Path(k).resolve()) for k in keep if k}
    now = time.time()
    for entry in root.iterdir():
        try:
            old = now - entry.stat().st_mtime > PRUNE_AGE_S
        except OSError:
            continue
        if entry.is_dir() and old and str(entry.resolve()) not in kept:
            shutil.rmtree(entry, ignore_errors=True)


def learn_ranker(open_corpus: OpenCorpus, base: Settings, corpus: str | Path | None, labels: Labels, *,
                 shipped: Sequence[tuple[Path, Path]] = SHIPPED, seed: int = SEED, warm: bool = True,
                 progress: Progress | None = None,
                 clock: Callable[[], float] = time.monotonic) -> dict[str, Any]:
    """Train a ranker on ``labels`` (training part only) and the shipped data, check it on held-out beside the
    corpus' current default, and record both (see the module docstring). Nothing is adopted here
    (:func:`adopt_ranker`).

    Returns:
        The training record (also in ``last.json`` and the folder's ``model_card.md``): ``folder``, ``labels``
        (:meth:`Labels.counts`), ``sources``, ``shipped``, ``heldout`` (both configurations' held-out metrics),
        ``comparison`` (delta, p_value, lost_relevant on nDCG@10), ``recommended``, ``why``, ``seconds``.

    Raises:
        ValueError: too few labels (:func:`readiness`' one line), or the shipped judge cannot be loaded.
    """
    started = clock()
    path = Path(corpus or LAB_CORPUS).resolve()
    labels = labels.within(frozenset(d.id for d in open_corpus(path, base).state.documents))
    ready = readiness(labels)
    if not ready["enough"]:
        raise ValueError(ready["why"])
    judge, unloaded = load_judge(base.judge_path)
    if judge is None:
        raise ValueError(f"the shipped judge cannot be loaded ({unloaded.text()}): its gate and evidence model are "
                         "kept")
    own = training_questions(labels.questions)
    others = []
    for c, qfile in shipped:
        if Path(c).resolve() == path:
            continue  # the shipped set is this corpus: its labels are read with the others'
        qs = load_questions(qfile)
        splits = assign_splits(qs)
        others.append((Path(c), [q for q in qs if q.relevant and splits[q.id] == "train"]))
    total = len(own) + sum(len(qs) for _, qs in others)
    done = [0]

    def tick(n: int) -> None:
        done[0] += n
        if progress:
            progress(done[0], total, "tracing the labeled questions")

    cases = _trace_cases(open_corpus, base, path, own, path.stem, tick)
    for c, qs in others:
        cases += _trace_cases(open_corpus, base, c, qs, Path(c).parent.name or Path(c).stem, tick)
    booster, rounds = fit_ranker(cases, seed, judge.reranker.booster if warm else None)
    root = ranker_root(base, path)
    root.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    folder = root / f"{stamp}-{hashlib.sha1(booster.model_to_string().encode()).hexdigest()[:8]}"
    record: dict[str, Any] = {
        "corpus": str(path), "folder": str(folder), "trained_at": stamp, "seed": seed, "rounds": rounds,
        "warm_start": warm,
        "judge": str(base.judge_path), "labels": labels.counts(), "sources": [list(s) for s in labels.sources],
        "shipped": [{"corpus": str(c), "questions": len(qs), "sha256": _hash_file(Path(c))} for c, qs in others],
        "cases": len(cases), "window": WINDOW, "rerank_window": RERANK_WINDOW}
    models = JudgeModels(BoosterModel(booster), judge.support, judge.evidence, judge.threshold,
                         manifest={**{k: v for k, v in judge.manifest.items()
                                      if k not in ("files", "sha256", "feature_set_version", "support_threshold")},
                                   "learned_for_corpus": record})
    models.save(folder)
    adopted = tuned.load_adopted(base, path)
    current = dict(adopted.overrides) if adopted else {}
    configs = [Config("default", current), Config("learned", {**current, "reranker_model": f"ltr:{folder}"})]
    report = evaluate_configs(lambda s: open_corpus(path, s), base, labels.questions, configs, split="heldout",
                              progress=progress)
    row = next((r for r in report["comparisons"] if r["metric"] == "ndcg@10"), None)
    recommended, why = decide(row, ALPHA)
    record.update(
        heldout={name: {m: entry["overall"].get(m) for m in brief(10)} | {"questions": report["questions"]}
                 for name, entry in report["configs"].items()},
        comparison=row and {k: row[k] for k in ("delta", "p_value", "lost_relevant", "improved", "worsened")},
        recommended=recommended, why=why, seconds=round(clock() - started, 1), baseline_overrides=current)
    (folder / "model_card.md").write_text(card(record), encoding="utf-8")
    _write_json(folder / "training.json", record)
    _write_json(root / LAST, record)
    _prune(root, [str(folder), _adopted_folder(base, path)])
    return record


def adopt_ranker(settings: Settings, corpus: str | Path | None, record: Mapping[str, Any]) -> Path:
    """Store the learned ranker of ``record`` as the corpus' reranker, beside what its tuned file already adopts
    (that file's other overrides and their justification are kept).

    Raises:
        ValueError: the record was not recommended by its held-out check, or its folder is gone.
    """
    if not record.get("recommended"):
        raise ValueError(f"not adopted: {record.get('why') or 'the held-out check did not recommend it'}")
    folder = Path(record["folder"])
    if not (folder / "manifest.json").is_file():
        raise ValueError(f"not adopted: the model folder {folder} is gone (train again)")
    path = tuned.tuned_path(settings, corpus)
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        data = {}
    data.pop("corpus", None)
    data.pop("key", None)
    row = record["comparison"]
    data["overrides"] = {**(data.get("overrides") or {}), "reranker_model": f"ltr:{folder}"}
    data["questions"] = max(int(data.get("questions") or 0), int(record["labels"]["questions"]))
    data["ranker"] = {"metric": "ndcg@10", "delta": row["delta"], "p_value": row["p_value"],
                      "questions": record["labels"]["heldout"], "trained_on": record["labels"]["train"],
                      "folder": str(folder), "trained_at": record["trained_at"]}
    data.setdefault("adopted_at", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    return tuned.adopt(settings, corpus, data)


def summary(record: Mapping[str, Any]) -> str:
    """One line: ``learned ranker on 34 labeled questions (+ 34 shipped): held-out nDCG@10 0.712 → 0.745
    (+0.033, p=0.02); recommended``."""
    held, labels = record.get("heldout") or {}, record["labels"]
    shipped = sum(s["questions"] for s in record.get("shipped") or [])
    before, after = (held.get("default") or {}).get("ndcg@10"), (held.get("learned") or {}).get("ndcg@10")
    row = record.get("comparison") or {}
    figures = (f"held-out nDCG@10 {before} → {after} ({row.get('delta', 0):+.4f}, {p_text(row.get('p_value'))}) on "
               f"{labels['heldout']} answerable held-out questions, {record.get('rounds', 0)} "
               f"tree{'s' if record.get('rounds', 0) != 1 else ''} added"
               if before is not None and after is not None else "no held-out figures")
    return (f"learned ranker on {labels['train']} labeled questions" + (f" (+ {shipped} shipped)" if shipped else "")
            + f": {figures}; " + ("recommended" if record.get("recommended") else "default kept"))
