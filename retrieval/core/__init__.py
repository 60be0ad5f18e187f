"""The ground floor: types, errors, filters, text, reasons, kinds, locale, paths, tenants and the small tools every
floor above reads. Public: the modules in ``__all__``; the others (analysis, codes, inputs, listcache, llm,
loadonce, memory, safecsv, text) serve the package itself."""

__all__ = ["admission", "defaults", "errors", "filters", "kinds", "locale", "markdown", "paths", "reasons", "redact",
           "safeio", "split", "tenants", "threads", "timing", "types"]
