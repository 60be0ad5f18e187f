"""The release gate: a rule a CI job runs on an evaluation (``eval --gate``), and what it shows of it.

A rule names one metric and its tolerances, written ``METRIC[,drop=D][,alpha=A][,lost=L][,spans=S]`` (defaults
``drop=0.01``, ``alpha=0.05``, ``lost=0``, spans not checked): each candidate (every configuration or imported run after the first,
the baseline) fails when

* its mean on the metric is below the baseline's by more than ``drop`` and that difference is significant
  (the comparison's p below ``alpha``: Holm's adjusted one where there are several candidates), or
* more than ``lost`` questions lost a relevant document the baseline had in its top k (k of the metric), or
* (with ``spans=S``) more than ``S`` questions lost the fact: the baseline's answer held one of the question's
  labelled answer spans and the candidate's holds none (questions without spans, and imported runs, which carry
  no answer, are not counted).

The gate's outcome is a list of checks, one per candidate and condition, each passed or failed with its reason;
:func:`junit_xml` writes them as a JUnit report (one test case each) and :func:`per_query_csv` the per-question
figures behind them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence
from xml.etree import ElementTree

from ..core.reasons import Reason, declare
from ..core.safecsv import csv_text
from .evaluation.compare import p_reason
from .report import decisive_p

DROP_OK = declare("release.drop_ok", en="{candidate!c} {metric} {delta:+.4f} against {baseline!c} ({p}): within the "
                  "allowed drop of {drop}", pt="{candidate!c} {metric} {delta:+.4f} contra {baseline!c} ({p}): dentro "
                  "da queda permitida de {drop}")
DROP_FAILED = declare("release.drop_failed", en="{candidate!c} {metric} {delta:+.4f} against {baseline!c} ({p}): a "
                      "significant drop of more than {drop}", pt="{candidate!c} {metric} {delta:+.4f} contra "
                      "{baseline!c} ({p}): uma queda significativa de mais de {drop}")
LOST_OK = declare("release.lost_ok", en="{candidate!c}: {n} questions lost a relevant document (at most {allowed} "
                  "allowed)", pt="{candidate!c}: {n} perguntas perderam um documento relevante (no máximo {allowed} "
                  "permitidas)")
LOST_FAILED = declare("release.lost_failed", en="{candidate!c}: {n} questions lost a relevant document the baseline "
                      "had in its top {k} ({ids!l}); at most {allowed} allowed", pt="{candidate!c}: {n} perguntas "
                      "perderam um documento relevante que a referência tinha no top {k} ({ids!l}); no máximo "
                      "{allowed} permitidas")
SPANS_OK = declare("release.spans_ok", en="{candidate!c}: {n} answers lost the labelled fact the baseline's held (at "
                   "most {allowed} allowed)", pt="{candidate!c}: {n} respostas perderam o fato rotulado que a "
                   "referência trazia (no máximo {allowed} permitidas)")
SPANS_FAILED = declare("release.spans_failed", en="{candidate!c}: {n} answers lost the labelled fact the baseline's "
                       "answer held ({ids!l}); at most {allowed} allowed", pt="{candidate!c}: {n} respostas perderam "
                       "o fato rotulado que a resposta da referência trazia ({ids!l}); no máximo {allowed} permitidas")


@dataclass(frozen=True)
class ReleaseRule:
    """``metric`` may not drop by more than ``drop`` with p < ``alpha``; at most ``lost`` questions may lose a
    relevant document."""

    metric: str
    drop: float = 0.01
    alpha: float = 0.05
    lost: int = 0
    #: At most this many questions may lose the labelled fact from the answer; ``None``: not checked.
    spans: int | None = None

    @classmethod
    def parse(cls, text: str) -> "ReleaseRule":
        """``ndcg@10,drop=0.01,alpha=0.05,lost=0,spans=0`` (every part after the metric optional).

        Raises:
            ValueError: an empty metric, an unknown part, or a value that is not a finite number ≥ 0
                (``alpha`` in (0, 1], ``lost`` an integer).
        """
        metric, *parts = [p.strip() for p in (text or "").split(",")]
        if not metric or "=" in metric:
            raise ValueError(f"--gate {text!r}: the rule starts with a metric (e.g. ndcg@10,drop=0.01)")
        values: dict[str, Any] = {}
        for part in parts:
            key, sep, raw = part.partition("=")
            if key not in {"drop", "alpha", "lost", "spans"} or not sep:
                raise ValueError(f"--gate {text!r}: unknown part {part!r} (use drop=, alpha=, lost=, spans=)")
            try:
                value = int(raw) if key in ("lost", "spans") else float(raw)
            except ValueError:
                raise ValueError(f"--gate {text!r}: {key} must be a number, got {raw!r}") from None
            if not math.isfinite(value) or value < 0 or (key == "alpha" and not 0 < value <= 1):
                raise ValueError(f"--gate {text!r}: {key}={raw} is out of range")
            values[key] = value
        return cls(metric, **values)


@dataclass(frozen=True)
class Check:
    """One condition on one candidate."""

    candidate: str
    condition: str  # "drop", "lost" or "spans"
    passed: bool
    reason: Reason


def check(report: Mapping[str, Any], rule: ReleaseRule) -> list[Check]:
    """The rule's checks on every candidate of ``report`` (an evaluation report).

    Raises:
        ValueError: the report has no candidate, or the rule's metric is not one the run computed.
    """
    rows = [c for c in report["comparisons"] if c["metric"] == rule.metric]
    if len(report["configs"]) < 2:
        raise ValueError("the release gate needs a baseline and at least one candidate (--configs a,b or --run)")
    if not rows:
        known = sorted({c["metric"] for c in report["comparisons"]})
        raise ValueError(f"--gate: the run computed no {rule.metric!r} (it has {', '.join(known)})")
    k = int(rule.metric.rsplit("@", 1)[1]) if "@" in rule.metric else report["k"][-1]
    checks = []
    for row in rows:
        p = decisive_p(row)
        dropped = row["delta"] < -rule.drop and p is not None and p < rule.alpha
        params = {"candidate": row["candidate"], "metric": rule.metric, "delta": row["delta"],
                  "baseline": row["baseline"], "p": p_reason(p), "drop": rule.drop}
        checks.append(Check(row["candidate"], "drop", not dropped, (DROP_FAILED if dropped else DROP_OK)(**params)))
        lost = row["lost_relevant"]
        ok = len(lost) <= rule.lost
        checks.append(Check(row["candidate"], "lost", ok,
                            LOST_OK(candidate=row["candidate"], n=len(lost), allowed=rule.lost) if ok else
                            LOST_FAILED(candidate=row["candidate"], n=len(lost), k=k, allowed=rule.lost,
                                        ids=[x["id"] for x in lost[:10]])))
        if rule.spans is not None:
            gone = lost_spans(report, row["baseline"], row["candidate"])
            ok = len(gone) <= rule.spans
            checks.append(Check(row["candidate"], "spans", ok,
                                SPANS_OK(candidate=row["candidate"], n=len(gone), allowed=rule.spans) if ok else
                                SPANS_FAILED(candidate=row["candidate"], n=len(gone), allowed=rule.spans,
                                             ids=gone[:10])))
    return checks


def lost_spans(report: Mapping[str, Any], baseline: str, candidate: str) -> list[str]:
    """Ids of the questions whose answer held a labelled span under ``baseline`` and holds none under
    ``candidate`` (rows without a span check, as an imported run's, are left out)."""
    held = {r["id"] for r in report["configs"][baseline]["questions"] if r.get("answer_span") is True}
    return [r["id"] for r in report["configs"][candidate]["questions"]
            if r["id"] in held and r.get("answer_span") is False]


def junit_xml(checks: Sequence[Check], rule: ReleaseRule) -> str:
    """The checks as a JUnit XML report: one test suite, one test case per candidate and condition."""
    suite = ElementTree.Element("testsuite", name="release-gate", tests=str(len(checks)),
                                failures=str(sum(not c.passed for c in checks)))
    ElementTree.SubElement(ElementTree.SubElement(suite, "properties"), "property", name="rule",
                           value=f"{rule.metric},drop={rule.drop},alpha={rule.alpha},lost={rule.lost}"
                           + (f",spans={rule.spans}" if rule.spans is not None else ""))
    for c in checks:
        case = ElementTree.SubElement(suite, "testcase", classname=f"release-gate.{c.candidate}", name=c.condition)
        if c.passed:
            ElementTree.SubElement(case, "system-out").text = c.reason.text()
        else:
            ElementTree.SubElement(case, "failure", message=c.reason.text())
    ElementTree.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(suite, encoding="unicode") + "\n"


def per_query_csv(report: Mapping[str, Any], rule: ReleaseRule) -> str:
    """Each question's value of the rule's metric under the baseline and each candidate, the difference, and
    the relevant documents the candidate lost (CSV, CRLF line ends; a question id or configuration name a
    spreadsheet would run as a formula is written with ``'`` in front: :mod:`retrieval.core.safecsv`)."""
    names = list(report["configs"])
    base = names[0]
    lost = {(c["candidate"], x["id"]): x["lost"] for c in report["comparisons"] if c["metric"] == rule.metric
            for x in c["lost_relevant"]}
    values = {n: {r["id"]: (r.get("metrics") or {}).get(rule.metric) for r in report["configs"][n]["questions"]}
              for n in names}
    rows = []
    for candidate in names[1:]:
        for qid, b in values[base].items():
            c = values[candidate].get(qid)
            delta = None if b is None or c is None else round(c - b, 4)
            rows.append([qid, candidate, b, c, delta, " ".join(lost.get((candidate, qid), []))])
    return csv_text(["question", "candidate", f"baseline_{rule.metric}", rule.metric, "delta", "lost_relevant"],
                    rows, lineterminator="\r\n")
