"""The corpus intake panel: files read per format, documents, pages, chunks, and every file skipped with its reason
(:class:`retrieval.ingest.folder.IntakeReport`), as ``index`` prints it, laid out for the sidebar's width: one line
per format and per skipped file rather than a wide table."""

from __future__ import annotations

import json

import streamlit as st

from retrieval.ingest.folder import SKIP_REASONS, IntakeReport

from .escape import code, md
from .format import num
from .i18n import t

#: Skipped files named on the page (all of them are in the JSON download).
SHOWN_SKIPPED = 50


def counted(key: str, n: int, lang: str) -> str:
    """``1 file`` / ``3 files`` (``{key}_1`` for one) in the page's language and number format."""
    return t(f"{key}_1", lang) if n == 1 else t(key, lang, n=num(n, ",d", lang))


def format_line(name: str, files: int, pages: int, chunks: int, lang: str) -> str:
    """``**pdf** · 1 file · 8 pages · 24 chunks`` in the page's language (pages only where the format has some)."""
    parts = [f"**{md(name)}**", counted("intake_n_files", files, lang)]
    if pages:
        parts.append(counted("intake_n_pages", pages, lang))
    parts.append(counted("intake_n_chunks", chunks, lang))
    return " · ".join(parts)


def skipped_line(path: str, reason: str, detail: str, lang: str) -> str:
    """``- `scan.pdf`: no text (no text layer…)``: a skipped file, its reason in the page's language, the detail."""
    why = SKIP_REASONS[reason](lang) if reason in SKIP_REASONS else reason
    return f"- {code(path)}: {md(why)}" + (f" ({md(detail)})" if detail else "")


def intake_panel(report: IntakeReport | None, lang: str) -> None:
    """What was read, in an expander: a line per format and the total, every skipped file (the first
    :data:`SHOWN_SKIPPED` on the page) with its reason, the warnings, and the whole report as JSON."""
    if report is None:
        return
    total = report.totals
    title = t("intake_title", lang, files=counted("intake_n_files", total.files, lang),
              skipped=num(len(report.skipped), ",d", lang))
    with st.expander(title, expanded=False):
        lines = [format_line(name, c.files, c.pages, c.chunks, lang) for name, c in sorted(report.formats.items())]
        if len(report.formats) > 1:
            lines.append(format_line(t("intake_total", lang), total.files, total.pages, total.chunks, lang))
        st.markdown("  \n".join(lines))
        if report.skipped:
            by_reason = " · ".join(f"{md(SKIP_REASONS[r](lang) if r in SKIP_REASONS else r)}: {num(n, ',d', lang)}"
                                   for r, n in sorted(report.skipped_by_reason().items()))
            st.markdown(t("intake_skipped", lang, n=num(len(report.skipped), ",d", lang), reasons=by_reason))
            shown = report.skipped[:SHOWN_SKIPPED]
            st.markdown("\n".join(skipped_line(s.path, s.reason, s.detail, lang) for s in shown))
            if len(report.skipped) > SHOWN_SKIPPED:
                st.caption(t("intake_more", lang, n=num(len(report.skipped) - SHOWN_SKIPPED, ",d", lang)))
        else:
            st.caption(t("intake_none_skipped", lang))
        if report.warnings:
            st.caption(t("intake_warnings", lang, n=num(len(report.warnings), ",d", lang)))
            st.code("\n".join(report.warnings[:200]), language=None)
        st.download_button(t("intake_download", lang), json.dumps(report.to_dict(), ensure_ascii=False, indent=1),
                           "intake.json", "application/json", on_click="ignore")
