"""Text from a corpus, a file, a URL or a header, made safe to put into Streamlit Markdown.

The helpers live in :mod:`retrieval.core.markdown` (the exports write Markdown too: one implementation); the page's
modules import them from here.
"""

from __future__ import annotations

from retrieval.core.markdown import code, md, md_text

__all__ = ["code", "md", "md_text"]
