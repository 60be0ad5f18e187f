"""What explains one request, read from its trace: tables, the rank grid, the provenance card, why A above B, where
is my document, A vs B, what-if, the HTML report. Every module is public but the HTML writer they share."""

__all__ = ["card", "compare", "grid", "links", "report_html", "support", "tables", "whatif", "where", "why"]
