"""The pipeline's reasons (``tier_reason``, a stage's note, an empty list's why) in the interface language.

The trace keeps its reasons in English: they are what the logs, the CLI and the tests read. This module
translates the ones the app shows, at display time, by the known prefix of each reason (``tiers.plan_tier``,
``rerank.load_reranker``, ``gate.apply_gate``, the learned support gate, ``tables.empty_reason``). A reason no
pattern knows is shown as it was recorded, in a code span and labeled as the trace's own text, so a
Portuguese page never passes an English sentence off as its own words. A reader that could not load is said in
one plain line (:func:`reader_line`).
"""

from __future__ import annotations

import re

from .escape import code, md
from .i18n import TEXTS, t

# (pattern, Portuguese template): the template's {1}, {2}… are the pattern's groups, themselves translated
# when they are reasons too (``{r1}``) or kept as values (ids, numbers, model names: ``{1}``).
_PT: tuple[tuple[str, str], ...] = (
    (r"dense side switched off \(RETRIEVAL_DENSE_ENABLED=false\)", "lado denso desligado (RETRIEVAL_DENSE_ENABLED=false)"),
    (r"dense-only requested, but the dense side is unavailable \((.*)\)",
     "pedido só denso, mas o lado denso está indisponível ({r1})"),
    (r"hybrid switched off \(RETRIEVAL_HYBRID_ENABLED=false / dense-only toggle\)",
     "híbrido desligado (RETRIEVAL_HYBRID_ENABLED=false / opção só denso)"),
    (r"the BM25 index is empty for this request", "o índice BM25 está vazio para este pedido"),
    (r"reranker '(.*)' \((.*)\) loaded", "reranqueador {c1} ({2}) carregado"),
    (r"no reranker configured \(RETRIEVAL_RERANKER_MODEL=none\)",
     "nenhum reranqueador configurado (RETRIEVAL_RERANKER_MODEL=none)"),
    (r"no reranker configured \(reranker off\)", "nenhum reranqueador configurado (reranqueador desligado)"),
    (r"reranker '(.*?)' could not load: (.*)", "o reranqueador {c1} não carregou: {c2}"),
    (r"reranker '(.*?)' cannot load: (.*)", "o reranqueador {c1} não pode carregar: {c2}"),
    (r"reranker '(.*?)' is not on disk(.*)", "o reranqueador {c1} não está no disco: {c2}"),
    (r"reranker '(.*?)' names no embedding model(.*)", "o reranqueador {c1} não nomeia modelo de embeddings"),
    (r"reranker failed: (.*)", "o reranqueador falhou: {c1}"),
    (r"learned ranker: (.*)", "ranqueador aprendido: {r1}"),
    (r"no feature rows for this request", "sem linhas de características para este pedido"),
    (r"no rerank ran \(tier (\w+): (.*)\)", "nenhum rerank rodou (nível {1}: {r2})"),
    (r"(no rerank ran: .*) \(tier (\w+): (.*)\)", "{r1} (nível {2}: {r3})"),
    (r"no rerank ran: (.*)", "nenhum rerank rodou: {r1}"),
    (r"nothing to fuse \(tier (\w+): (.*)\)", "nada a fundir (nível {1}: {r2})"),
    (r"no chunk of the filtered corpus shares a BM25 term with the question \(zero scores are not listed\)",
     "nenhum trecho do corpus filtrado tem termo BM25 da pergunta (notas zero não são listadas)"),
    (r"the vector store returned no chunk for these filters",
     "o repositório de vetores não devolveu trecho para estes filtros"),
    (r"no chunk passed the gate \((\w+) ≥ (.*); best (.*)\)",
     "nenhum trecho passou o portão ({1} ≥ {2}; melhor {3})"),
    (r"no candidate to answer from", "nenhum candidato de onde responder"),
    (r"the question names (.*), which no final chunk contains \(code identity gate\)",
     "a pergunta cita {c1}, que nenhum trecho final contém (portão de identidade de códigos)"),
    (r"support (\S+) ≥ (\S+)", "suporte {1} ≥ {2}"),
    (r"support (\S+) < (\S+)", "suporte {1} < {2}"),
    (r"no selected chunk mentions (.*); (support .*)", "nenhum trecho selecionado menciona {c1}; {r2}"),
    (r"the question names nothing to look for \(no content word the index can match\); (.*)",
     "a pergunta não nomeia nada a procurar (nenhuma palavra de conteúdo que o índice reconheça); {r1}"),
    (r"not applied: (.*)", "não aplicado: {r1}"),
    (r"(.*): (\w+) (.*) is not in this corpus \(values are matched exactly: case and type count\)",
     "{r1}: {c2} {c3} não está neste corpus (valores comparados exatamente: maiúsculas e tipo contam)"),
    (r"skipped(.*)", "pulada{c1}"),
    # the evaluation's decision (report.choose) and observed lines (evaluation.compare.observed)
    (r"no candidate beats the baseline significantly on (\S+) \(p < 0.05\) without losing on the held-out split",
     "nenhuma candidata supera a referência com significância em {1} (p < 0,05) sem perder na parte reservada"),
    (r"(\S+) ([+-][\d.]+) over (\S+) \((p\S+)\)(?:; held-out ([+-][\d.]+) \((p\S+)\))?",
     "{1} {2} sobre {c3} ({4}){held}"),
    (r"(\S+) vs (\S+): (.*); (\d+) questions improved, (\d+) worsened(?:; (\d+) lost a relevant document the "
     r"baseline had in its top (\d+))?",
     "{c1} contra {c2}: {3}; {4} perguntas melhoraram, {5} pioraram{lost}"),
    (r"LambdaMART raw score \(learned ranker; unbounded, higher is better\)",
     "nota LambdaMART bruta (ranqueador aprendido; sem limite, maior é melhor)"),
    (r"cross-encoder score", "nota do cross-encoder"),
    (r"cosine \(bi-encoder rescoring\)", "cosseno (renotação por bi-encoder)"),
    (r"ok", "ok"),  # the dense store's status when it loaded
)


def reason(text: str | None, lang: str) -> str:
    """Markdown of a pipeline reason in ``lang``: escaped English as recorded (``en``), else the translation
    of its known prefix, else the recorded text in a code span after the words "recorded as"."""
    text = (text or "").strip()
    if lang == "en" or not text:
        return md(text)
    out = _translate(text)
    return out if out is not None else f"registrado assim no trace: {code(text)}"


def _translate(text: str) -> str | None:
    for pattern, template in _PT:
        match = re.fullmatch(pattern, text, flags=re.S)
        if match is None:
            continue
        values = {}
        for i, group in enumerate(match.groups(), start=1):
            group = group or ""
            inner = _translate(group.strip())
            values[f"r{i}"] = inner if inner is not None else code(group)
            values[f"c{i}"] = code(group.strip(" :'")) if group.strip(" :'") else ""
            values[str(i)] = md(group)
        groups = match.groups()
        values["held"] = (f"; parte reservada {md(groups[4])} ({md(groups[5])})"
                          if "{held}" in template and groups[4] else "")
        values["lost"] = (f"; {md(groups[5])} perderam um documento relevante que a referência tinha no top "
                          f"{md(groups[6])}" if "{lost}" in template and groups[5] else "")
        return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), template)
    return None


# -- the reader that could not load, in one plain line ------------------------------------------------------------
_READER_LOAD = re.compile(r"reranker '(reader[^']*)' could not load: (.*)", re.S)
_READER_FAILED = re.compile(r"the reader failed \((\w+): .*\)", re.S)
_JUDGE_READS = "the judge reads the reader's scores, which are unavailable: "
_FILE_ERRORS = {"FileNotFoundError", "OSError", "PermissionError", "IsADirectoryError", "NotADirectoryError"}
#: What is missing (``reader_missing_<cause>``), the line of the stage that lost the reader (``reader_line_<who>``)
#: and what the page falls back to (``reader_fallback_<tier>``) are in the catalogue (ui/i18n.py).


def reader_cause(text: str | None) -> tuple[str, str, str] | None:
    """``(who, cause, name)`` when ``text`` (a tier reason or a stage's note) says the reader could not load or
    failed: ``who`` is the stage that lost it (``reader`` the reranker, ``ltr`` the learned ranker, ``judge``
    the learned gate's features), ``cause`` one of ``package`` / ``file`` / ``read`` / ``failed`` / ``unknown``,
    ``name`` the missing package or the error's class; ``None`` for any other reason."""
    text = (text or "").strip()
    who = "reader"
    if text.startswith("learned ranker: "):
        who, text = "ltr", text.removeprefix("learned ranker: ")
    if text.startswith(_JUDGE_READS):
        who, text = ("ltr" if who == "ltr" else "judge"), text.removeprefix(_JUDGE_READS)
    elif _READER_FAILED.fullmatch(text):
        who = "ltr" if who == "ltr" else "judge"
    failed = _READER_FAILED.fullmatch(text)
    if failed:
        return who, "failed", failed.group(1)
    load = _READER_LOAD.fullmatch(text)
    if load is None:
        return None
    rest = load.group(2).strip()
    package = re.fullmatch(r"(\S+) is not installed", rest)
    if package:
        return who, "package", package.group(1)
    error = re.match(r"(\w+): ", rest)
    if error is None:
        return who, "unknown", ""
    return who, ("file" if error.group(1) in _FILE_ERRORS else "read"), error.group(1)


def reader_line(text: str | None, tier: str, lang: str) -> str | None:
    """The reader's absence in one plain line in ``lang`` (what is missing, what the page falls back to), or
    ``None`` when ``text`` is not about the reader (:func:`reader_cause`)."""
    cause = reader_cause(text)
    if cause is None:
        return None
    who, kind, name = cause
    fallback = (t(f"reader_fallback_{tier}", lang) if f"reader_fallback_{tier}" in TEXTS
                else t("reader_fallback_other", lang, tier=md(tier)))
    return t(f"reader_line_{who}", lang, missing=t(f"reader_missing_{kind}", lang, name=code(name)),
             fallback=fallback)
