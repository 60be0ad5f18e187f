"""Errors the user sees. Each carries one line of text fit for stderr or the app."""


def first_line(exc: BaseException, limit: int = 200) -> str:
    """The first line of ``exc``'s text, cut to ``limit`` characters ("" when it has none): how a reason
    quotes a library's error after its class name."""
    text = str(exc)
    return text.splitlines()[0][:limit] if text else ""


class RetrievalError(Exception):
    """Base class of every error this package raises on purpose. Its text is always one line (line breaks
    and runs of spaces from quoted input or a wrapped library message are folded into single spaces)."""

    def __str__(self) -> str:
        return " ".join(super().__str__().split())


class InvalidQuestion(RetrievalError):
    """The question is empty, whitespace or punctuation only, or longer than the limit."""


class TenantRequired(RetrievalError):
    """The corpus is multi-tenant and the request names no tenant."""


class CorpusError(RetrievalError):
    """A corpus or question file cannot be read; the message names the file and line."""


class InvalidFilter(RetrievalError):
    """A filter names a field the corpus does not have, or a value of the wrong type."""


class InvalidSetting(RetrievalError, ValueError):
    """A setting has an invalid value, or names something that does not exist; the message names the setting,
    the value and the rule, on one line."""


class InvalidGlossary(RetrievalError, ValueError):
    """A glossary file exists but is not a valid glossary; the message names the file."""


class InvalidId(RetrievalError, ValueError):
    """An id that an output format cannot carry (whitespace or a control character in a TREC qrels or run
    field); the message names the id, the character and the file or run. Nothing is written."""


class PathRefused(RetrievalError):
    """A path the app was given lies outside the data roots, is not a regular file or folder as asked, or is
    larger than the input limit; the message is the same whether or not the path exists."""


class InvalidPolicy(RetrievalError, ValueError):
    """The access policy file (``RETRIEVAL_ACCESS_POLICY``) cannot be read or is not a valid policy; the message
    names the file and, where it can, the entry, on one line."""
