"""The texts of the corpus intake panel: what reading a corpus read and skipped."""

TEXTS: dict[str, dict[str, str]] = {
    "intake_title": {"en": "What was read: {files} files, {skipped} skipped",
                     "pt": "O que foi lido: {files} arquivos, {skipped} pulados"},
    "intake_format": {"en": "format", "pt": "formato"},
    "intake_files": {"en": "files", "pt": "arquivos"},
    "intake_documents": {"en": "documents", "pt": "documentos"},
    "intake_pages": {"en": "pages", "pt": "páginas"},
    "intake_chunks": {"en": "chunks", "pt": "trechos"},
    "intake_total": {"en": "total", "pt": "total"},
    "intake_skipped": {"en": "Skipped files: {line}", "pt": "Arquivos pulados: {line}"},
    "intake_none_skipped": {"en": "No file skipped.", "pt": "Nenhum arquivo pulado."},
    "intake_path": {"en": "file", "pt": "arquivo"},
    "intake_reason": {"en": "reason", "pt": "motivo"},
    "intake_detail": {"en": "detail", "pt": "detalhe"},
    "intake_warnings": {"en": "{n} warnings (values dropped, encodings guessed)",
                        "pt": "{n} avisos (valores descartados, codificações deduzidas)"},
    "intake_download": {"en": "Download the intake report (JSON)", "pt": "Baixar o relatório de leitura (JSON)"},
}
