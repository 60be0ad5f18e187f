"""A training from start to end (``python -m retrieval train``): trace each (corpus, questions) pair, fit,
measure every part and write the model folder with its card (:func:`train`)."""

from __future__ import annotations

import hashlib
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ...ingest.corpus import load_questions
from ...learned.judge.features import feature_set_version
from ...learned.judge.models import JudgeModels
from ...pipeline.workbench import Workbench
from .card import model_card, training_manifest
from .cases import SEED, Case, assign_splits, collect
from .fitting import fit
from .measuring import measure, operating_points, strongest_features


def _hash_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class TrainResult:
    models: JudgeModels
    metrics: dict[str, Any]
    seconds: float
    cases: list[Case] = field(default_factory=list)


def train(pairs: Sequence[tuple[Path, Path]], out: Path | None, settings: Any, seed: int = SEED,
          progress: bool = True, log: Callable[[str], None] | None = None) -> TrainResult:
    """Collect traces for each (corpus, questions) pair, fit, measure on the held-out parts and write the
    model folder to ``out`` (when given)."""
    from tqdm import tqdm


    say = log or (lambda m: print(m, file=sys.stderr))
    started = time.perf_counter()
    loaded = [(c, load_questions(q), q) for c, q in pairs]
    total = sum(len(qs) for _, qs, _ in loaded)
    cases: list[Case] = []
    sets = []
    with tqdm(total=total, desc="tracing questions", unit="q", file=sys.stderr, disable=not progress) as bar:
        for corpus, questions, qpath in loaded:
            bench = Workbench(settings, progress=progress)
            bench.load_corpus(corpus)
            splits = assign_splits(questions)
            name = Path(corpus).parent.name or Path(corpus).stem
            cases += collect(bench, questions, name, splits, progress=bar.update)
            sets.append({"corpus_name": name, "corpus_sha256": _hash_file(Path(corpus)),
                         "questions_sha256": _hash_file(Path(qpath)), "questions": len(questions),
                         "train_questions": sum(v == "train" for v in splits.values()),
                         "heldout_questions": sum(v == "heldout" for v in splits.values())})
    traced = time.perf_counter() - started
    say(f"traced {len(cases)} cases in {traced:.0f} s; fitting")
    return fit_and_write(cases, sets, out, seed, started, traced, say)


def fit_and_write(cases: Sequence[Case], sets: Sequence[Mapping[str, Any]], out: Path | None, seed: int,
                  started: float, traced: float, say: Callable[[str], None]) -> TrainResult:
    """Fit on traced cases, measure every part, and write the model folder with its card."""
    models, info = fit(cases, seed, say)
    metrics = {}
    for corpus in dict.fromkeys(c.corpus for c in cases):
        for part in ("train", "dev_other", "heldout"):
            part_cases = [c for c in cases if c.corpus == corpus and c.split == part]
            if part_cases:
                metrics[f"{corpus}/{part}"] = measure(models, part_cases)
                if part != "train":
                    metrics[f"{corpus}/{part}"]["operating_points"] = operating_points(models, part_cases)
    held = [c for c in cases if c.split == "heldout"]
    seconds = time.perf_counter() - started
    models.manifest = training_manifest(info, sets, metrics, strongest_features(models, held or cases), seconds, traced)
    if out is not None:
        manifest = {**models.manifest, "feature_set_version": feature_set_version(),
                    "support_threshold": models.threshold}
        models.save(out, model_card(manifest))
    return TrainResult(models, metrics, seconds, list(cases))
