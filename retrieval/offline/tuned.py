"""Per-corpus defaults adopted by ``python -m retrieval tune --adopt``: where they live, how a request reads them.

A tuned configuration is a set of settings overrides that won on a corpus' own labels (chosen on the dev split,
confirmed on the held-out split: :mod:`retrieval.offline.tune`). It is stored beside the corpus' index, in
``<store folder>/tuned/<key>.json`` (``.retrieval/tuned/`` by default: the folder that holds ``chroma/``), keyed
the way the index is: the corpus' absolute path and the index-level settings it is loaded with
(:func:`corpus_key`; the tuned settings themselves are left out of the key, so a tuned ``passage_template`` does
not move the file it is read from).

A request reads it through :func:`apply_adopted`: an adopted value replaces a setting the request holds at the
base value (the environment's, or the built-in default); a setting the request chose itself (``--set``, an app
control moved away from its default) is kept. The trace says so in its notes (:func:`trace_note`): "tuned for
this corpus on N questions, held-out nDCG@10 +x".
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from ..core.errors import RetrievalError
from ..core.paths import LAB_CORPUS
from ..settings import INDEX_SETTINGS, PROCESS_SETTINGS, STATE_SETTINGS, Settings
from .evaluation.compare import p_text

log = logging.getLogger(__name__)

#: The settings a tuned configuration may hold: those that change rankings (and the passage template), and the
#: abstention thresholds calibrated on the corpus' own unanswerable questions.
TUNABLE = ("overfetch", "rrf_k", "fusion", "fusion_weights", "reranker_model", "reranker_max_input",
           "passage_template", "min_similarity", "support_threshold")


@dataclass(frozen=True)
class Adopted:
    """A per-corpus default: the overrides and what justified them.

    Attributes:
        overrides: setting name → value (names of :data:`TUNABLE`).
        questions: labeled questions the tuner read (dev and held-out together).
        heldout_delta: held-out nDCG@10 of the tuned configuration minus the default's.
        p_value: the paired Fisher randomization test's p on held-out nDCG@10.
        metric: the metric those figures are of (``ndcg@10``).
        path: the file it was read from.
    """

    overrides: Mapping[str, Any]
    questions: int
    heldout_delta: float | None
    p_value: float | None
    metric: str
    path: Path
    #: Held-out abstention accuracy of the adopted thresholds: questions gained net, and McNemar's p (``None``:
    #: no threshold adopted).
    abstention_gain: int | None = None
    abstention_p: float | None = None
    #: A ranker learned from the corpus' labels (:mod:`.learn`): its held-out nDCG@10 gain over the default it was
    #: checked against, that test's p, and the answerable questions it was trained on (``None``: none adopted).
    ranker_delta: float | None = None
    ranker_p: float | None = None
    ranker_trained_on: int | None = None

    def note(self) -> str:
        """One line for the trace: ``tuned for this corpus on 44 questions, held-out ndcg@10 +0.031 (p=0.012):
        rrf_k=30, reranker_max_input=50`` (and ``held-out abstention +12 questions (p=0.004)`` where thresholds
        were adopted)."""

        shown = ", ".join(f"{k}={v}" for k, v in self.overrides.items())
        figures = []
        if self.heldout_delta is not None:
            figures.append(f"held-out {self.metric} {self.heldout_delta:+.3f} ({p_text(self.p_value)})")
        if self.abstention_gain is not None:
            figures.append(f"held-out abstention {self.abstention_gain:+d} questions ({p_text(self.abstention_p)})")
        if self.ranker_delta is not None:
            figures.append(f"ranker learned from {self.ranker_trained_on} labeled questions, held-out {self.metric} "
                           f"{self.ranker_delta:+.3f} ({p_text(self.ranker_p)})")
        return f"tuned for this corpus on {self.questions} questions, {', '.join(figures)}: {shown}"


def tuned_dir(settings: Settings) -> Path:
    """The folder of per-corpus defaults: beside the vector store's folder (``.retrieval/tuned``)."""
    return Path(settings.chroma_path).resolve().parent / "tuned"


def corpus_key(settings: Settings, corpus: str | Path | None) -> str:
    """The key of a corpus' tuned file: a hash of its absolute path and its index-level settings (as the index
    is keyed: :meth:`Settings.index_settings`), without the tunable ones."""
    path = str(Path(corpus or LAB_CORPUS).resolve())
    index = {k: v for k, v in settings.index_settings().items() if k not in TUNABLE and k not in STATE_SETTINGS
             and k not in PROCESS_SETTINGS}
    text = json.dumps({"corpus": path, "index": index}, sort_keys=True, default=str)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def tuned_path(settings: Settings, corpus: str | Path | None) -> Path:
    """``<tuned_dir>/<corpus_key>.json``."""
    return tuned_dir(settings) / f"{corpus_key(settings, corpus)}.json"


def load_adopted(settings: Settings, corpus: str | Path | None) -> Adopted | None:
    """The corpus' adopted configuration, or ``None`` when none is stored, or when the stored file is damaged
    (cut short by a crash, edited by hand, holding settings that are no longer valid): a damaged file is
    ignored, with one warning line in the log per version of the file (naming it and ``tune --remove``), and
    requests run on the base settings: a damaged file never refuses a question. The temporary files that an
    interrupted :func:`adopt` left beside it are removed."""
    path = tuned_path(settings, corpus)
    _clean_orphans(path.parent)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        overrides = dict(data["overrides"])
        unknown = sorted(set(overrides) - set(TUNABLE))
        if unknown:
            raise ValueError(f"settings that are not tunable: {', '.join(unknown)}")
        settings.with_overrides(**overrides)
        ranking, abstention, ranker = data.get("heldout"), data.get("abstention"), data.get("ranker")
        if ranking is None and abstention is None and ranker is None:
            raise ValueError("neither a held-out ranking check nor an abstention check justifies it")
        if ranker is not None and not str(overrides.get("reranker_model", "")).startswith("ltr:"):
            raise ValueError("a learned ranker's check without its reranker_model=ltr:FOLDER")
        gain = None if abstention is None else int(abstention["heldout"]["gained"]) - int(abstention["heldout"]["lost"])
        adopted = Adopted(overrides, int(data["questions"]),
                          None if ranking is None else float(ranking["delta"]),
                          None if ranking is None else ranking.get("p_value"),
                          "ndcg@10" if ranking is None else str(ranking.get("metric", "ndcg@10")), path,
                          gain, None if abstention is None else abstention["heldout"].get("p_value"),
                          None if ranker is None else float(ranker["delta"]),
                          None if ranker is None else ranker.get("p_value"),
                          None if ranker is None else int(ranker["trained_on"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RetrievalError) as exc:
        _warn_damaged(path, exc)
        return None
    return adopted


#: (path, modification time, size) of the damaged files already logged: one line per version of a file.
_WARNED: set[tuple[str, int, int]] = set()
#: An orphan temporary file is one at least this old (a save in progress in another process is younger).
ORPHAN_AGE_S = 60.0


def _warn_damaged(path: Path, exc: BaseException) -> None:
    try:
        info = path.stat()
        key = (str(path), info.st_mtime_ns, info.st_size)
    except OSError:
        key = (str(path), 0, 0)
    if key in _WARNED:
        return
    _WARNED.add(key)
    why = " ".join(str(exc).split())[:200] or exc.__class__.__name__
    log.warning("%s: the corpus' tuned configuration is damaged and ignored (%s); requests use the base settings; "
                "remove it with python -m retrieval tune --remove --corpus …", path, why)


def _clean_orphans(folder: Path) -> None:
    """Remove the ``.tuned-*.tmp`` files an interrupted :func:`adopt` left in ``folder`` (older than
    :data:`ORPHAN_AGE_S`: a younger one may be another process's save in progress)."""
    try:
        entries = list(folder.glob(".tuned-*.tmp"))
    except OSError:
        return
    now = time.time()
    for entry in entries:
        try:
            if now - entry.lstat().st_mtime >= ORPHAN_AGE_S:
                entry.unlink()
        except OSError:
            pass


def adopt(settings: Settings, corpus: str | Path | None, record: Mapping[str, Any]) -> Path:
    """Store ``record`` (``{"overrides", "questions", "heldout": {"delta", "p_value", "metric"}, …}``) as the
    corpus' default, atomically and durably: a temporary file in the same folder, fsynced, renamed over the old
    one, then the folder fsynced (a reader, or a machine that loses power, sees the old file or the new one,
    never half of one). Orphan temporary files of interrupted saves are removed first. Returns its path."""
    path = tuned_path(settings, corpus)
    path.parent.mkdir(parents=True, exist_ok=True)
    _clean_orphans(path.parent)
    data = {"corpus": str(Path(corpus or LAB_CORPUS).resolve()), "key": corpus_key(settings, corpus), **record}
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, prefix=".tuned-", suffix=".tmp",
                                     delete=False) as handle:
        try:
            json.dump(data, handle, ensure_ascii=False, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        except BaseException:
            handle.close()
            os.unlink(handle.name)
            raise
    try:
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    try:
        folder = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return path
    try:
        os.fsync(folder)
    except OSError:
        pass
    finally:
        os.close(folder)
    return path


def remove(settings: Settings, corpus: str | Path | None) -> Path | None:
    """Delete the corpus' tuned file; its path, or ``None`` when there was none."""
    path = tuned_path(settings, corpus)
    if not path.is_file():
        return None
    path.unlink()
    return path


def apply_adopted(request: Settings, base: Settings, adopted: Adopted | None,
                  loaded: Settings | None = None) -> tuple[Settings, str | None]:
    """``request`` with the adopted overrides, and the note for the trace (``None`` when nothing is adopted).

    An adopted value replaces a setting that ``request`` holds at ``base``'s value; a setting the request
    changed itself is kept (and the note says which). With ``loaded`` (the settings of an already loaded
    Workbench), an index-level override (``passage_template``) that the loaded index does not have is not
    applied (a request cannot change it) and the note says so.
    """
    if adopted is None:
        return request, None
    applied, kept, skipped = {}, [], []
    for name, value in adopted.overrides.items():
        if getattr(request, name) != getattr(base, name):
            kept.append(name)
        elif name in INDEX_SETTINGS and loaded is not None and getattr(loaded, name) != value:
            skipped.append(f"{name}={value}")
        else:
            applied[name] = value
    note = adopted.note()
    if kept:
        note += f"; this request's own {', '.join(kept)} kept"
    if skipped:
        note += f"; not applied (index-level, the loaded index was built without it): {', '.join(skipped)}"
    return (request.with_overrides(**applied) if applied else request), note


def trace_note(trace: Any, note: str | None) -> Any:
    """``trace`` (a :class:`~retrieval.pipeline.trace.Trace` or its dict) with ``{"stage": "settings", "note"}`` added."""
    if not note:
        return trace
    entry = {"stage": "settings", "note": note}
    if isinstance(trace, dict):
        return {**trace, "notes": [*(trace.get("notes") or []), entry]}
    return replace(trace, notes=[*trace.notes, entry])
