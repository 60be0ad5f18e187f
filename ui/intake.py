"""The corpus intake panel: files read per format, documents, pages, chunks, and every file skipped with its reason
(:class:`retrieval.ingest.folder.IntakeReport`), as ``index`` prints it."""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from retrieval.ingest.folder import SKIP_REASONS, IntakeReport

from .format import num
from .i18n import t


def intake_rows(report: IntakeReport, lang: str) -> list[dict[str, Any]]:
    """One row per format and the total, with the page's column names."""
    cols = [t(k, lang) for k in ("intake_format", "intake_files", "intake_documents", "intake_pages",
                                  "intake_chunks")]
    rows = [(name, c.files, c.documents, c.pages, c.chunks) for name, c in sorted(report.formats.items())]
    total = report.totals
    rows.append((t("intake_total", lang), total.files, total.documents, total.pages, total.chunks))
    return [dict(zip(cols, row)) for row in rows]


def skipped_rows(report: IntakeReport, lang: str) -> list[dict[str, str]]:
    """Every skipped file: its path, the reason in the page's language, the detail."""
    cols = [t(k, lang) for k in ("intake_path", "intake_reason", "intake_detail")]
    return [dict(zip(cols, (s.path, SKIP_REASONS[s.reason](lang) if s.reason in SKIP_REASONS else s.reason,
                            s.detail))) for s in report.skipped]


def intake_panel(report: IntakeReport | None, lang: str) -> None:
    """The intake table in an expander (open where files were skipped), every skipped file and a JSON download."""
    if report is None:
        return
    total = report.totals
    title = t("intake_title", lang, files=num(total.files, ",d", lang), skipped=num(len(report.skipped), ",d", lang))
    with st.expander(title, expanded=False):
        st.dataframe(intake_rows(report, lang), hide_index=True, width="stretch")
        if report.skipped:
            st.caption(t("intake_skipped", lang, line=report.skipped_line(lang)))
            st.dataframe(skipped_rows(report, lang), hide_index=True, width="stretch")
        else:
            st.caption(t("intake_none_skipped", lang))
        if report.warnings:
            st.caption(t("intake_warnings", lang, n=num(len(report.warnings), ",d", lang)))
            st.code("\n".join(report.warnings[:200]), language=None)
        st.download_button(t("intake_download", lang), json.dumps(report.to_dict(), ensure_ascii=False, indent=1),
                           "intake.json", "application/json", on_click="ignore")
