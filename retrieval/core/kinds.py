"""Declarations of a kind: the one place where a fusion method, a reranker kind, a gate, a store backend or a tier
is named, with everything the rest of the product reads about it.

A :class:`Registry` holds the declarations of one kind in declaration order. A module declares its own (the
fusion methods in :mod:`retrieval.stages.fusion`, the rerankers in :mod:`retrieval.stages.rerank`…); settings
validation, the pipeline, the app's pickers, the provenance card, the reports and the evaluation's
configurations read the registry, so a new declaration is validated, run, offered and explained with no other
file changed. :class:`Text` is a text in each interface language, for what a declaration shows to people.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Iterator, Protocol, TypeVar

@dataclass(frozen=True)
class Text:
    """A text in each interface language (English, Portuguese); ``text(lang)`` picks one (English by default)."""

    en: str
    pt: str

    def __call__(self, lang: str = "en") -> str:
        return self.pt if lang == "pt" else self.en


class Named(Protocol):
    """What a registry holds: anything with a name, read-only (a frozen dataclass' field)."""

    @property
    def name(self) -> str: ...


K = TypeVar("K", bound=Named)


class UnknownKind(ValueError):
    """A name no declaration of the kind carries; the message lists the declared names."""


class Registry(Generic[K]):
    """The declarations of one kind, by name, in declaration order.

    Args:
        what: the kind in words, for messages ("fusion method").
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self._items: dict[str, K] = {}

    def declare(self, item: K) -> K:
        """Add a declaration; returns it (so a module can keep its own handle).

        Raises:
            ValueError: a name already declared (two declarations of one name would shadow each other).
        """
        if item.name in self._items:
            raise ValueError(f"{self.what} '{item.name}' is declared twice")
        self._items[item.name] = item
        return item

    def withdraw(self, name: str) -> None:
        """Remove a declaration (a test that declared a kind of its own takes it back)."""
        self._items.pop(name, None)

    def get(self, name: str) -> K:
        """The declaration of ``name``.

        Raises:
            UnknownKind: no such declaration (one line naming the declared ones).
        """
        try:
            return self._items[name]
        except KeyError:
            raise UnknownKind(f"unknown {self.what} '{name}' (use {', '.join(self._items)})") from None

    def names(self) -> tuple[str, ...]:
        return tuple(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[K]:
        return iter(tuple(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)
