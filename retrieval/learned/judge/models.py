"""The judge's three models and their folder.

* **reranker** — LightGBM ``lambdarank`` (LambdaMART; Burges, 2010) over the candidate features. Scores are
  raw LambdaMART scores (unbounded, higher is better, comparable only within one request).
* **support** — P(the chunk supports an answer): a calibrated binary model, a logistic regression or a
  LightGBM ``binary`` model, whichever measured better on the calibration part of the training set. The
  gate is its maximum over the final chunks.
* **evidence** — ranks the context's sentences for the extractive answer (LightGBM ``lambdarank`` over the
  sentence features, or a logistic regression).

Every model explains its scores: LightGBM's ``pred_contrib=True`` (per-feature contributions plus a bias
term that sum to the raw score), and for a logistic regression ``w_i · z_i`` (z standardized) plus the
intercept, which sum to the logit.

A model folder holds ``reranker.txt`` / ``support.txt|support.json`` / ``evidence.txt|evidence.json``,
``manifest.json`` (feature set version, feature names, threshold, training sets' hashes, parameters, held-out
metrics) and ``model_card.md``. :func:`load_judge` refuses a folder whose feature set differs from this
code's (:func:`retrieval.learned.judge.features.feature_set_version` and names).

Loaded models are cached by what their folder holds, never by its path alone (:func:`folder_fingerprint`): a
model retrained into the same folder ("judge more, train again") is loaded anew, so a comparison after the
retraining reads the new model, not the first one.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from ...core.reasons import Reason, declare, error
from .features import CANDIDATE_NAMES, GATE_NAMES, GATE_SIGNS, SENTENCE_NAMES, feature_set_version

MANIFEST = "manifest.json"
CARD = "model_card.md"
RERANKER_KIND = "ltr"
RERANKER_LABEL = "learned ranker (LambdaMART) over BM25, dense, coverage and reader features"
FAQUAD_ATTRIBUTION = ("FaQuAD (Sayama, Araujo and Fernandes, 2019; repository liafacom/faquad), licensed "
                      "Creative Commons Attribution 4.0 (CC BY 4.0)")


class JudgeModelError(Exception):
    """A model folder is missing, unreadable, or was trained on another feature set: :attr:`reason` says which."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason.text())
        self.reason = reason


MISSING = declare("judge.missing", en="no judge model at {folder} ({file} missing)",
                  pt="não há modelo do juiz em {folder} ({file} ausente)")
UNREADABLE = declare("judge.unreadable", en="{file} is unreadable ({error})", pt="{file} está ilegível ({error})")
NOT_OBJECT = declare("judge.not_object", en="{file} is not a JSON object", pt="{file} não é um objeto JSON")
OTHER_SET = declare("judge.other_feature_set",
                    en="model at {folder} was trained on feature set {theirs!q}, this code computes {ours!q}: "
                       "retrain it (python -m retrieval train)",
                    pt="o modelo em {folder} foi treinado no conjunto de características {theirs!q}, este código "
                       "calcula {ours!q}: treine-o de novo (python -m retrieval train)")
OTHER_NAMES = declare("judge.other_features",
                      en="model at {folder} lists other features than feature set {ours!q} defines: retrain it",
                      pt="o modelo em {folder} lista outras características que as do conjunto {ours!q}: treine-o "
                         "de novo")
NEEDS_LIGHTGBM = declare("judge.needs_lightgbm", en="the judge needs lightgbm (pip install lightgbm==4.7.0)",
                         pt="o juiz precisa do lightgbm (pip install lightgbm==4.7.0)")
MODEL_UNREADABLE = declare("judge.model_unreadable", en="model at {folder} is unreadable: {error}",
                           pt="o modelo em {folder} está ilegível: {error}")
NOT_LIGHTGBM = declare("judge.not_lightgbm", en="model at {folder}: the reranker must be a LightGBM model",
                       pt="modelo em {folder}: o reranqueador precisa ser um modelo LightGBM")
FEATURE_COUNT = declare("judge.feature_count",
                        en="model at {folder}: {role} reads {n} features, the feature set has {expected}",
                        pt="modelo em {folder}: {role} lê {n} características, o conjunto tem {expected}")
AGAINST_SIGN = declare("judge.against_sign",
                       en="model at {folder}: the support gate's coefficients of {names!l} push against their "
                          "feature's declared direction: retrain it",
                       pt="modelo em {folder}: os coeficientes do portão de suporte de {names!l} empurram contra a "
                          "direção declarada da característica: treine-o de novo")
LOADED = declare("judge.loaded", en="loaded", pt="carregado")


class LogisticModel:
    """L2-regularized logistic regression on standardized features, fitted by Newton's method (IRLS).

    ``contributions(X)`` returns ``w_i · z_i`` per feature plus the intercept as a last column; each row sums
    to the logit, so ``P = 1 / (1 + exp(−Σ))``.
    """

    kind = "logistic"

    def __init__(self, mean: np.ndarray, scale: np.ndarray, coef: np.ndarray, intercept: float) -> None:
        self.mean, self.scale, self.coef, self.intercept = mean, scale, coef, float(intercept)

    @classmethod
    def fit(cls, X: np.ndarray, y: np.ndarray, l2: float = 1.0, weights: np.ndarray | None = None,
            iterations: int = 50, signs: Sequence[int] | None = None) -> "LogisticModel":
        """Fit on ``X`` (rows) and 0/1 labels ``y``.

        Args:
            l2: the ridge penalty on the standardized coefficients (not on the intercept).
            weights: a weight per row.
            signs: per feature +1 (its coefficient may not be negative), −1 (not positive) or 0 (free). With
                signs the fit is L-BFGS-B with those bounds: a feature whose direction is known can then never
                push the score the wrong way, which keeps correlated features' explanations readable.
        """
        mean = X.mean(axis=0)
        scale = X.std(axis=0)
        scale[scale < 1e-12] = 1.0
        Z = np.hstack([(X - mean) / scale, np.ones((len(X), 1))])
        w = np.zeros(Z.shape[1])
        sw = np.ones(len(X)) if weights is None else weights
        reg = np.full(Z.shape[1], l2)
        reg[-1] = 0.0
        if signs is not None:
            from scipy.optimize import minimize

            def loss(v: np.ndarray) -> tuple[float, np.ndarray]:
                z = np.clip(Z @ v, -30, 30)
                p = 1.0 / (1.0 + np.exp(-z))
                ll = np.sum(sw * (np.logaddexp(0, z) - y * z)) + 0.5 * np.sum(reg * v * v)
                return float(ll), Z.T @ (sw * (p - y)) + reg * v

            bounds = [(0.0, None) if s > 0 else (None, 0.0) if s < 0 else (None, None) for s in signs]
            found = minimize(loss, w, jac=True, method="L-BFGS-B", bounds=bounds + [(None, None)],
                             options={"maxiter": 500, "gtol": 1e-8})
            v = found.x
            return cls(mean, scale, v[:-1], v[-1])
        for _ in range(iterations):
            p = 1.0 / (1.0 + np.exp(-np.clip(Z @ w, -30, 30)))
            grad = Z.T @ (sw * (p - y)) + reg * w
            hess = (Z * (sw * p * (1 - p))[:, None]).T @ Z + np.diag(reg + 1e-9)
            step = np.linalg.solve(hess, grad)
            w -= step
            if np.max(np.abs(step)) < 1e-8:
                break
        return cls(mean, scale, w[:-1], w[-1])

    def contributions(self, X: np.ndarray) -> np.ndarray:
        Z = (X - self.mean) / self.scale
        return np.hstack([Z * self.coef, np.full((len(X), 1), self.intercept)])

    def raw(self, X: np.ndarray) -> np.ndarray:
        return ((X - self.mean) / self.scale) @ self.coef + self.intercept

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "mean": self.mean.tolist(), "scale": self.scale.tolist(),
                "coef": self.coef.tolist(), "intercept": self.intercept}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "LogisticModel":
        """Raises ValueError on arrays of different lengths or a value that is not a finite number."""
        mean, scale, coef = (np.asarray(data[k], float) for k in ("mean", "scale", "coef"))
        intercept = float(data["intercept"])
        if not (mean.shape == scale.shape == coef.shape and mean.ndim == 1):
            raise ValueError("mean, scale and coef must be lists of one length")
        if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(scale)) and np.all(np.isfinite(coef))
                and np.isfinite(intercept)):
            raise ValueError("every value must be a finite number")
        if np.any(scale < 1e-12):  # a standard deviation: positive (a tiny one turns every score into NaN)
            raise ValueError("every scale must be a positive standard deviation (≥ 1e-12)")
        if np.any(np.abs(coef) > 1e4) or abs(intercept) > 1e4:  # standardized inputs: larger is a damaged file
            raise ValueError("a coefficient beyond ±1e4 on standardized features: not a fitted model")
        return cls(mean, scale, coef, intercept)


class BoosterModel:
    """A LightGBM booster (``lambdarank`` or ``binary``) with contributions via ``pred_contrib=True``."""

    kind = "lightgbm"

    def __init__(self, booster: Any) -> None:
        self.booster = booster

    def contributions(self, X: np.ndarray) -> np.ndarray:
        if len(X) == 0:
            return np.zeros((0, self.booster.num_feature() + 1))
        return np.asarray(self.booster.predict(X, pred_contrib=True), dtype=np.float64)

    def raw(self, X: np.ndarray) -> np.ndarray:
        if len(X) == 0:
            return np.zeros(0)
        return np.asarray(self.booster.predict(X, raw_score=True), dtype=np.float64)

    def importance(self, names: Sequence[str]) -> dict[str, float]:
        gains = self.booster.feature_importance(importance_type="gain")
        return {n: float(g) for n, g in zip(names, gains)}


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -30, 30)))


@dataclass
class Explained:
    """Scores with their per-feature contributions (``contributions[i]`` maps feature → value, plus
    ``"bias"``; they sum to ``raw[i]``)."""

    raw: np.ndarray
    contributions: list[dict[str, float]]
    unit: str

    def top(self, i: int, n: int = 3) -> list[tuple[str, float]]:
        items = [(k, v) for k, v in self.contributions[i].items() if k != "bias"]
        return sorted(items, key=lambda kv: -abs(kv[1]))[:n]


def _explain(model: BoosterModel | LogisticModel, X: np.ndarray, names: Sequence[str], unit: str) -> Explained:
    C = model.contributions(X)
    raw = C.sum(axis=1) if len(C) else np.zeros(0)
    contribs = [{**{n: float(v) for n, v in zip(names, row[:-1])}, "bias": float(row[-1])} for row in C]
    return Explained(raw, contribs, unit)



def rerank_rows(reranker: BoosterModel, X: np.ndarray) -> Explained:
    """A LambdaMART reranker's raw scores of candidate rows, with contributions (unit: raw LambdaMART score)."""
    return _explain(reranker, X, CANDIDATE_NAMES, "raw LambdaMART score")



@dataclass
class JudgeModels:
    """The three loaded models of one folder, plus the support threshold and the manifest."""

    reranker: BoosterModel
    support: BoosterModel | LogisticModel
    evidence: BoosterModel | LogisticModel
    threshold: float
    manifest: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    name = RERANKER_LABEL
    kind = RERANKER_KIND
    score_kind = "LambdaMART raw score (learned ranker; unbounded, higher is better)"

    def rerank(self, X: np.ndarray) -> Explained:
        """Raw LambdaMART scores of candidate rows, with contributions (unit: raw LambdaMART score)."""
        return rerank_rows(self.reranker, X)

    def support_proba(self, X: np.ndarray) -> tuple[np.ndarray, Explained]:
        """P(support) of gate rows (one per context, :data:`GATE_NAMES`) and the contributions to its logit."""
        ex = _explain(self.support, X, GATE_NAMES, "log-odds of support")
        return _sigmoid(ex.raw), ex

    def evidence_scores(self, X: np.ndarray) -> Explained:
        """Scores of sentence rows (higher = more likely to hold the answer), with contributions."""
        return _explain(self.evidence, X, SENTENCE_NAMES, "evidence model raw score")

    # -- folder ----------------------------------------------------------------------------------------
    def save(self, folder: str | Path, card: str | None = None) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        files = {}
        for role in ("reranker", "support", "evidence"):
            model = getattr(self, role)
            for stale in (folder / f"{role}.txt", folder / f"{role}.json"):
                stale.unlink(missing_ok=True)
            if isinstance(model, BoosterModel):
                name = f"{role}.txt"
                model.booster.save_model(str(folder / name))
            else:
                name = f"{role}.json"
                (folder / name).write_text(json.dumps(model.to_dict(), indent=1) + "\n", encoding="utf-8")
            files[role] = name
        hashes = {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in files.values()}
        manifest = {**self.manifest, "feature_set_version": feature_set_version(),
                    "candidate_features": list(CANDIDATE_NAMES), "sentence_features": list(SENTENCE_NAMES),
                    "gate_features": list(GATE_NAMES), "files": files, "sha256": hashes, "support_threshold": self.threshold,
                    "reranker_kind": RERANKER_KIND, "reranker_label": RERANKER_LABEL}
        (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        if card is not None:
            (folder / CARD).write_text(card, encoding="utf-8")
        self.manifest, self.path = manifest, folder
        return folder


def _load_model(folder: Path, name: str, sha256: str | None = None) -> BoosterModel | LogisticModel:
    """One model file, checked before it is parsed: its hash when the manifest records one, and for a
    LightGBM text model its closing section (LightGBM aborts or crashes the process on a truncated file)."""
    path = folder / name
    data = path.read_bytes()
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise ValueError(f"{name} differs from the file the manifest records (sha256): damaged or replaced")
    if name.endswith(".json"):
        return LogisticModel.from_dict(json.loads(data.decode("utf-8")))
    if b"\nend of trees\n" not in data or not data.startswith(b"tree\n"):
        raise ValueError(f"{name} is not a complete LightGBM text model (truncated?)")
    import lightgbm

    return BoosterModel(lightgbm.Booster(model_str=data.decode("utf-8")))


#: The model files a folder may hold (what :meth:`JudgeModels.save` writes besides the manifest and the card).
_MODEL_FILES = tuple(f"{role}.{ext}" for role in ("reranker", "support", "evidence") for ext in ("txt", "json"))


@lru_cache(maxsize=64)
def _manifest_digest(path: str, size: int, mtime_ns: int) -> str:
    """A manifest's SHA-256, read once per path, size and modification time (a request asks for its folder's
    fingerprint several times: its reranker, its judge, its gate; each then costs a few ``stat`` calls)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


#: Within :func:`one_version_per_request`: the fingerprints already taken, by folder.
_REQUEST_PRINTS: ContextVar[dict[str, str] | None] = ContextVar("judge_folder_prints", default=None)


@contextmanager
def one_version_per_request() -> Iterator[None]:
    """Inside, a folder's fingerprint is taken once (a request asks for it at each of its reranker, judge, gate
    and answer lookups, some 7 times and 50 ``stat`` calls): one request sees one version of its models."""
    token = _REQUEST_PRINTS.set({})
    try:
        yield
    finally:
        _REQUEST_PRINTS.reset(token)


def folder_fingerprint(folder: str | Path) -> str:
    """What a model folder holds, cheaply: SHA-256 of ``manifest.json``'s bytes (it records each model file's
    SHA-256, so a retraining changes it) plus the size and modification time of each model file (a file
    replaced without its manifest). The key of every cache of loaded judge models; ``"missing"`` parts for
    absent files, so a folder that appears later is loaded then. Taken once per folder inside
    :func:`one_version_per_request`."""
    taken = _REQUEST_PRINTS.get()
    if taken is not None and str(folder) in taken:
        return taken[str(folder)]
    printed = _fingerprint(Path(folder))
    if taken is not None:
        taken[str(folder)] = printed
    return printed


def _fingerprint(folder: Path) -> str:
    parts = []
    try:
        st = (folder / MANIFEST).stat()
        parts.append(_manifest_digest(str(folder / MANIFEST), st.st_size, st.st_mtime_ns))
    except OSError:
        parts.append("missing")
    for name in _MODEL_FILES:
        try:
            st = (folder / name).stat()
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            continue
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


def read_models(folder: str | Path) -> JudgeModels:
    """Load a model folder.

    Raises:
        JudgeModelError: missing or unreadable files, or a feature set other than this code's.
    """
    folder = Path(folder)
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise JudgeModelError(MISSING(folder=str(folder), file=MANIFEST)) from None
    except (OSError, ValueError) as exc:
        raise JudgeModelError(UNREADABLE(file=str(folder / MANIFEST), error=exc.__class__.__name__)) from None
    if not isinstance(manifest, dict):
        raise JudgeModelError(NOT_OBJECT(file=str(folder / MANIFEST)))
    version = manifest.get("feature_set_version")
    if version != feature_set_version():
        raise JudgeModelError(OTHER_SET(folder=str(folder), theirs=str(version), ours=feature_set_version()))
    if (tuple(manifest.get("candidate_features") or ()) != CANDIDATE_NAMES
            or tuple(manifest.get("sentence_features") or ()) != SENTENCE_NAMES
            or tuple(manifest.get("gate_features") or ()) != GATE_NAMES):
        raise JudgeModelError(OTHER_NAMES(folder=str(folder), ours=feature_set_version()))
    try:
        files, hashes = manifest["files"], manifest.get("sha256") or {}
        models = {role: _load_model(folder, files[role], hashes.get(files[role]))
                  for role in ("reranker", "support", "evidence")}
        raw_threshold = manifest["support_threshold"]
        if isinstance(raw_threshold, bool) or not isinstance(raw_threshold, (int, float)):
            raise ValueError(f"support_threshold {raw_threshold!r} is not a number")
        threshold = float(raw_threshold)
        if not 0.0 <= threshold <= 1.0:  # NaN fails this too
            raise ValueError(f"support_threshold {threshold} is not a probability in [0, 1]")
    except ImportError:
        raise JudgeModelError(NEEDS_LIGHTGBM()) from None
    except Exception as exc:  # noqa: BLE001 - reported as the reason the stage dropped
        raise JudgeModelError(MODEL_UNREADABLE(folder=str(folder), error=error(exc, 160))) from None
    if not isinstance(models["reranker"], BoosterModel):
        raise JudgeModelError(NOT_LIGHTGBM(folder=str(folder)))
    for role, names in (("reranker", CANDIDATE_NAMES), ("support", GATE_NAMES), ("evidence", SENTENCE_NAMES)):
        m = models[role]
        n = m.booster.num_feature() if isinstance(m, BoosterModel) else len(m.coef)
        if n != len(names):
            raise JudgeModelError(FEATURE_COUNT(folder=str(folder), role=role, n=n, expected=len(names)))
    support = models["support"]
    if isinstance(support, LogisticModel):
        against = [n for n, c, sign in zip(GATE_NAMES, support.coef, GATE_SIGNS) if c * sign < -1e-9]
        if against:
            raise JudgeModelError(AGAINST_SIGN(folder=str(folder), names=against))
    return JudgeModels(models["reranker"], models["support"], models["evidence"], threshold, manifest, folder)


def load_judge(folder: str | Path) -> tuple[JudgeModels | None, Reason]:
    """Like :func:`read_models` but never raises: ``(models, LOADED)`` or ``(None, reason)``."""
    try:
        return read_models(folder), LOADED()
    except JudgeModelError as exc:
        return None, exc.reason
