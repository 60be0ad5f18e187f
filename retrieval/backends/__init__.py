"""Where data lives: the lexical side (:mod:`.lexical`), the Chroma store (:mod:`.chroma`), how a request reads a
dense store (:mod:`.reads`) and what every dense store's sync shares (:mod:`.vectors`), the embedders and the
model hub, and the store backends, each declared once in :data:`BACKENDS` (:mod:`.local`, :mod:`.milvus`)."""

from . import local, milvus  # noqa: F401 - each module declares its backend
from .base import BACKENDS, Backend, Opened, OpenRequest, StoreStatusError

__all__ = ["BACKENDS", "Backend", "Opened", "OpenRequest", "StoreStatusError", "base", "embedders", "state"]
