"""The learned support gate of one trace, for a page: the bars of its decision and its verdict in one line.

Reads the trace's ``gate.support`` (:class:`~retrieval.pipeline.view.Support`, the view of
:func:`retrieval.stages.judge.support_decision`'s record); returns plain values
and reasons (:class:`~retrieval.core.reasons.Reason`), rendered in the page's language by the page.
"""

from __future__ import annotations

from typing import Any

from ..core.reasons import Reason, declare
from ..learned.judge.features import BIAS_DOC, FEATURE_DOCS, feature_label
from ..pipeline.view import TraceView
from ..stages.judge import named, readable_digits

ANSWERS = declare("support.verdict_answers", en="P(support) {p:.{digits}f} ≥ threshold {threshold:.{digits}f}: the "
                  "learned gate answers", pt="P(suporte) {p:.{digits}f} ≥ limiar {threshold:.{digits}f}: o portão "
                  "aprendido responde")
ABSTAINS = declare("support.verdict_abstains", en="P(support) {p:.{digits}f} < threshold {threshold:.{digits}f}: the "
                   "learned gate abstains", pt="P(suporte) {p:.{digits}f} < limiar {threshold:.{digits}f}: o portão "
                   "aprendido se abstém")
MISSING = declare("support.verdict_missing", en="{verdict} — no selected chunk mentions {words}.",
                  pt="{verdict} — nenhum trecho selecionado menciona {words}.")
#: The gate answers while words of the question are in no selected chunk: said as what it is (the words lower
#: P(support), not below the threshold; the chunks may say it in other words), never as "the asked thing is absent"
#: beside an answer. Abstaining there instead was measured and refused: on SQuAD 2.0-pt's dev part it abstained on
#: 4 more unanswerable questions for 4 right answers lost at a 0.5 IDF share, 17 for 24 at 0.35 (docs/models.md).
ALTHOUGH = declare("support.verdict_although", en="{verdict}; the question's words {words} are in no selected chunk "
                   "(they lower P(support), not below the threshold: the chunks may say it in other words).",
                   pt="{verdict}; as palavras da pergunta {words} não estão em nenhum trecho selecionado (baixam o "
                   "P(suporte), não abaixo do limiar: os trechos podem dizê-lo com outras palavras).")
ALTHOUGH_ONE = declare("support.verdict_although_one", en="{verdict}; the question's word {words} is in no selected "
                       "chunk (it lowers P(support), not below the threshold: the chunks may say it in other words).",
                       pt="{verdict}; a palavra da pergunta {words} não está em nenhum trecho selecionado (baixa o "
                       "P(suporte), não abaixo do limiar: os trechos podem dizê-lo com outras palavras).")
NOTHING = declare("support.verdict_nothing", en="{verdict} — the question names nothing to look for.",
                  pt="{verdict} — a pergunta não nomeia nada a procurar.")
PLAIN = declare("support.verdict", en="{verdict}.", pt="{verdict}.")


def support_rows(trace: TraceView, lang: str = "en") -> list[dict[str, Any]]:
    """Rows for the support gate's bar chart: one per gate feature that moved the log-odds, strongest first,
    then the model's baseline (bias), so the bars visibly sum to the log-odds. Each row has the feature id,
    its label in ``lang`` (the feature's declaration), its value and what it measures. Empty when the learned
    gate did not run."""
    support = trace.gate.support
    values, contributions = support.features, support.contributions

    def row(name: str, value: float, direction: str) -> dict[str, Any]:
        return {"feature": name, "label": feature_label(name, lang), "contribution": value,
                "value": values.get(name), "meaning": FEATURE_DOCS[name].doc if name in FEATURE_DOCS else BIAS_DOC,
                "direction": direction}

    rows = [row(name, value, "for answering" if value > 0 else "against answering")
            for name, value in contributions.items() if name != "bias" and abs(value) >= 1e-4]
    rows.sort(key=lambda r: -abs(r["contribution"]))
    if rows and "bias" in contributions:
        rows.append(row("bias", contributions["bias"], "baseline"))
    return rows


def support_summary(trace: TraceView) -> Reason | None:
    """The learned gate's verdict in one line: P(support) against the threshold and the verdict, with the words no
    selected chunk mentions; its note's reason when the gate did not decide; ``None`` when it did not run."""
    support = trace.gate.support
    if support.best is None:
        return support.note.reason()
    passes = support.passes
    p, threshold = float(support.best), float(support.threshold or 0.0)
    verdict = (ANSWERS if passes else ABSTAINS)(p=p, threshold=threshold, digits=readable_digits(p, threshold))
    missing = list(support.missing_tokens)
    if missing:
        although = ALTHOUGH_ONE if len(missing) == 1 else ALTHOUGH
        return (although if passes else MISSING)(verdict=verdict, words=named(missing))
    reason = Reason.from_dict(support.reason.code)
    if not passes and reason is not None and reason.code == "support.nothing_named":
        return NOTHING(verdict=verdict)
    return PLAIN(verdict=verdict)
