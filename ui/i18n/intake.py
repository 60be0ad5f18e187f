"""The texts of the corpus intake panel: what reading a corpus read and skipped."""

TEXTS: dict[str, dict[str, str]] = {
    "intake_title": {"en": "What was read: {files}, {skipped} skipped",
                     "pt": "O que foi lido: {files}, {skipped} pulados"},
    "intake_n_files": {"en": "{n} files", "pt": "{n} arquivos"},
    "intake_n_files_1": {"en": "1 file", "pt": "1 arquivo"},
    "intake_n_pages": {"en": "{n} pages", "pt": "{n} páginas"},
    "intake_n_pages_1": {"en": "1 page", "pt": "1 página"},
    "intake_n_chunks": {"en": "{n} chunks", "pt": "{n} trechos"},
    "intake_n_chunks_1": {"en": "1 chunk", "pt": "1 trecho"},
    "intake_total": {"en": "total", "pt": "total"},
    "intake_skipped": {"en": "**Skipped: {n}** ({reasons})", "pt": "**Pulados: {n}** ({reasons})"},
    "intake_more": {"en": "… and {n} more: all of them are in the JSON below",
                    "pt": "… e mais {n}: todos estão no JSON abaixo"},
    "intake_none_skipped": {"en": "No file skipped.", "pt": "Nenhum arquivo pulado."},
    "intake_warnings": {"en": "{n} warnings (values dropped, encodings guessed)",
                        "pt": "{n} avisos (valores descartados, codificações deduzidas)"},
    "intake_download": {"en": "Download the intake report (JSON)", "pt": "Baixar o relatório de leitura (JSON)"},
}
