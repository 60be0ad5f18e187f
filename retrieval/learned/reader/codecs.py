"""How the reader's passage token states are written on disk: fp16 as computed, or compressed with faiss.

A token state is a unit vector of e5's width (384); fp16 costs 768 bytes a token, about 96 KB a passage of 125
tokens (100,000 chunks: 9.6 GB). A codec turns rows into fixed-size codes and back:

* ``fp16``: the rows as computed (exact; no training).
* ``sq8`` / ``sq4``: faiss scalar quantization, 8 or 4 bits a value, each dimension's range fitted on the
  corpus' own states (384 / 192 bytes a token).
* ``pq<M>`` (``pq<M>x<bits>``): product quantization, ``M`` sub-vectors of ``bits`` bits (``M`` bytes a token
  at 8 bits), fitted on the corpus' states.
* ``rpq<M>``: residual product quantization (ColBERTv2's idea, Santhanam et al., 2022): a coarse k-means
  centroid (256 of them, one byte) and the product-quantized residual (``M`` bytes at 8 bits).
* ``faiss:<factory>``: any faiss index factory string whose index encodes standalone codes.
* ``auto``: not a codec but a choice by corpus size (:data:`AUTO_CODECS`), made by
  :func:`~.states.resolve_codec` before a store is built.

Decoded rows are put back to unit length (MaxSim reads cosines), so a decoded state is a unit vector again; a
passage's zero row (an empty passage) is kept as no row at all by the store, never decoded.

Each family above is one :class:`CodecFamily` declaration in :data:`CODECS` (its spelling, its faiss factory,
the fewest rows it is fitted on, its text for people); the settings' check, the store's folder names and the
codec itself read the registry.

faiss is imported only when a faiss codec is built; decoded rows are normalized by torch where it is installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from ...core.kinds import Registry, Text

import numpy as np

#: The most rows a codec is fitted on (a random sample of the rows given): PQ's k-means reads at most 256
#: points per centroid anyway.
MAX_TRAIN_ROWS = 65_536
#: Coarse centroids of ``rpq``.
RPQ_LISTS = 256

#: The spec that picks a codec by corpus size (:data:`AUTO_CODECS`, :func:`~.states.resolve_codec`).
AUTO = "auto"
#: What ``auto`` chooses from, in order: sq8 (ranks as fp16 does) while a corpus' states fit under the store's
#: limit, else pq128x5 (80 bytes a token: about 1 GB per 100,000 passages of 130 tokens; of the codecs near that
#: size, the one whose default nDCG@10 stayed within 0.002 of fp16 on FaQuAD's dev and held-out questions, the
#: mean of four fits; docs/models.md).
AUTO_CODECS = ("sq8", "pq128x5")


@dataclass(frozen=True)
class CodecFamily:
    """The declaration of a family of state codecs.

    Attributes:
        name: the family's name (``pq``), and how a spec of it is written for people (``syntax``: ``pq<M>``).
        pattern: the regular expression a (lower-case) spec of the family matches in full.
        factory: ``(spec as written, its match, hidden width) → faiss factory string`` (``None``: rows kept as
            fp16); it raises ``ValueError`` for a spec of the family it cannot build (``M`` not dividing the width).
        min_train_rows: ``(its match) → the fewest rows it is fitted on`` (k-means needs as many points as
            centroids); 0 for a codec that is not fitted.
        label: what it is, in each language (the settings' reference, the app).
        case_sensitive: keep the spec's case (a faiss factory string); others are read in lower case.
    """

    name: str
    syntax: str
    pattern: str
    factory: Callable[[str, "re.Match[str]", int], str | None]
    min_train_rows: Callable[["re.Match[str]"], int]
    label: Text
    case_sensitive: bool = False

    def match(self, spec: str) -> "re.Match[str] | None":
        return re.fullmatch(self.pattern, spec.strip() if self.case_sensitive else spec.strip().lower(),
                            flags=re.IGNORECASE if self.case_sensitive else 0)


#: The declared codec families, in the order a refusal lists them.
CODECS: Registry[CodecFamily] = Registry("reader state codec")


def _pq_factory(spec: str, found: "re.Match[str]", hidden: int) -> str:
    residual, m, bits = found.group(1), int(found.group(2)), int(found.group(3) or 8)
    if m <= 0 or hidden % m or not 1 <= bits <= 12:
        raise ValueError(f"reader state codec {spec!r}: M must divide the states' width {hidden}, bits 1-12")
    pq = f"PQ{m}x{bits}np"   # np: no polysemous training (slow, and useless to decoding)
    return f"IVF{RPQ_LISTS},{pq}" if residual else pq


def _pq_rows(found: "re.Match[str]") -> int:
    bits = 2 ** int(found.group(3) or 8)
    return max(bits, RPQ_LISTS) if found.group(1) else bits


CODECS.declare(CodecFamily("fp16", "fp16", "fp16", lambda spec, found, hidden: None, lambda found: 0,
                           Text("the rows as computed, 2 bytes a value", "as linhas como calculadas, 2 bytes por valor")))
CODECS.declare(CodecFamily("sq", "sq8, sq4", "sq(8|4)", lambda spec, found, hidden: f"SQ{found.group(1)}",
                           lambda found: 1, Text("faiss scalar quantization, 8 or 4 bits a value",
                                                 "quantização escalar do faiss, 8 ou 4 bits por valor")))
CODECS.declare(CodecFamily("pq", "pq<M>", r"()pq(\d+)(?:x(\d+))?", _pq_factory, _pq_rows,
                           Text("product quantization, M sub-vectors (pq<M>x<bits>)",
                                "quantização por produto, M subvetores (pq<M>x<bits>)")))
CODECS.declare(CodecFamily("rpq", "rpq<M>", r"(r)pq(\d+)(?:x(\d+))?", _pq_factory, _pq_rows,
                           Text("residual product quantization over 256 coarse centroids",
                                "quantização por produto do resíduo sobre 256 centroides")))
CODECS.declare(CodecFamily("faiss", "faiss:<factory>", r"faiss:(.+)", lambda spec, found, hidden: found.group(1),
                           lambda found: 256, Text("any faiss index factory with standalone codes",
                                                   "qualquer fábrica de índice do faiss com códigos próprios"),
                           case_sensitive=True))


def family_of(spec: str) -> tuple[CodecFamily, "re.Match[str]"]:
    """The declared family of a codec spec and the spec's match.

    Raises:
        ValueError: no declared family spells it (one line naming them).
    """
    for family in CODECS:
        found = family.match(spec)
        if found is not None:
            return family, found
    spelled = [AUTO, *(f.syntax for f in CODECS)]
    raise ValueError(f"unknown reader state codec {spec!r} (use {', '.join(spelled[:-1])} or {spelled[-1]})")


def factory_of(spec: str, hidden: int) -> str | None:
    """The faiss factory string of a codec spec (``None`` for fp16).

    Raises:
        ValueError: an unknown spec, or ``M`` that does not divide ``hidden``.
    """
    family, found = family_of(spec)
    return family.factory(spec, found, hidden)


def check_spec(spec: str) -> str:
    """``spec`` normalised (lower case, stripped), or ValueError naming the codecs (checked for width 384; a
    ``faiss:`` factory is built once, so a string faiss cannot parse, or an index without standalone codes, is
    refused here rather than when the reader loads)."""
    if spec.strip().lower() == AUTO:
        return AUTO
    family, found = family_of(spec)
    factory = family.factory(spec, found, 384)
    if factory is not None and family.name == "faiss":
        import faiss

        try:
            faiss.index_factory(384, factory, faiss.METRIC_INNER_PRODUCT).sa_code_size()
        except RuntimeError:
            raise ValueError(f"reader state codec {spec.strip()!r}: faiss cannot build standalone codes from "
                             f"{factory!r} (not a factory string, or an index such as HNSW that keeps no codes)") \
                from None
    return spec.strip() if family.case_sensitive else spec.strip().lower()


def tag_of(spec: str) -> str:
    """A folder-name piece for a codec: ``""`` for fp16 (the folder before codecs existed), else its name."""
    name = check_spec(spec)
    if name == "fp16":
        return ""
    return "-" + re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").lower()


def _unit_half(rows: np.ndarray) -> np.ndarray:
    """Rows put back to unit length, as fp16: through torch where it is installed (the reader's own; about 8×
    numpy's fp16 conversion on a request's window of 4,000 rows), else numpy."""
    try:
        import torch
    except ImportError:  # pragma: no cover - the reader installs torch
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return (rows / np.maximum(norms, 1e-12)).astype(np.float16)
    return torch.nn.functional.normalize(torch.from_numpy(np.ascontiguousarray(rows)), dim=-1).half().numpy()


def _unpack(codes: np.ndarray, m: int, bits: int) -> np.ndarray:
    """``(n, code_size)`` uint8 codes of ``m`` sub-vectors of ``bits`` bits each (faiss packs them one after
    another, least significant bit first, a row padded to whole bytes) as ``(n, m)`` centroid numbers (uint16):
    code ``i`` starts at bit ``i * bits``, so it is read from the two bytes that hold that bit, shifted and masked
    (numpy: about 1.3 ms for a request's window of 4,000 rows; torch's integer indexing took 4, bit by bit 8)."""
    start = np.arange(m) * bits
    byte, shift = start // 8, (start % 8).astype(np.uint16)
    wide = np.zeros((len(codes), codes.shape[1] + 1), dtype=np.uint16)   # a code may end in a row's last byte
    wide[:, :-1] = codes
    return ((wide[:, byte] | (wide[:, byte + 1] << 8)) >> shift) & np.uint16((1 << bits) - 1)


@dataclass
class StateCodec:
    """One codec of ``hidden``-wide unit rows: :meth:`encode` to ``(n, code_size)`` uint8, :meth:`decode` back to
    float32 unit rows. A faiss codec must be fitted (:meth:`train`) before it encodes; its fitted form is bytes
    (:meth:`to_bytes`, :meth:`from_bytes`)."""

    spec: str
    hidden: int
    index: Any = None   # the faiss index (None for fp16)
    _tables: Any = None  # numpy decoding tables, read from the fitted index once (() when faiss decodes)

    @classmethod
    def build(cls, spec: str, hidden: int) -> "StateCodec":
        factory = factory_of(spec, hidden)
        if factory is None:
            return cls(check_spec(spec), hidden)
        import faiss

        return cls(check_spec(spec), hidden, faiss.index_factory(hidden, factory, faiss.METRIC_INNER_PRODUCT))

    @property
    def lossless(self) -> bool:
        return self.index is None

    @property
    def trained(self) -> bool:
        return self.index is None or bool(self.index.is_trained)

    @property
    def code_size(self) -> int:
        """Bytes a row."""
        return 2 * self.hidden if self.index is None else int(self.index.sa_code_size())

    def min_train_rows(self) -> int:
        """The fewest rows it can be fitted on (k-means needs as many points as centroids)."""
        if self.index is None:
            return 0
        family, found = family_of(self.spec)
        return family.min_train_rows(found)

    def train(self, rows: np.ndarray, seed: int = 0) -> None:
        """Fit the codec on ``rows`` (a random sample of at most :data:`MAX_TRAIN_ROWS`)."""
        if self.index is None or self.index.is_trained:
            return
        rows = np.ascontiguousarray(rows, dtype=np.float32)
        if len(rows) > MAX_TRAIN_ROWS:
            rows = rows[np.random.default_rng(seed).choice(len(rows), MAX_TRAIN_ROWS, replace=False)]
        self.index.train(rows)
        self._tables = None

    def encode(self, rows: np.ndarray) -> np.ndarray:
        """``(n, hidden)`` rows as ``(n, code_size)`` uint8 codes."""
        if self.index is None:
            return np.ascontiguousarray(rows, dtype=np.float16).view(np.uint8).reshape(len(rows), -1)
        return self.index.sa_encode(np.ascontiguousarray(rows, dtype=np.float32))

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Codes back to ``(n, hidden)`` rows: fp16 as written, a faiss codec's put back to unit length.

        Scalar (8 and 4 bits) and product codes of 1-8 bits a sub-vector are decoded here with torch from the
        fitted tables, the same arithmetic as faiss' ``sa_decode`` (tested): faiss' OpenMP pool is torch's (one
        runtime in the process), and waking it for a request's window while torch's threads spin cost 8 ms on 2
        cores, against about 1.4 ms here (30 passages). Other codecs go through faiss."""
        codes = np.ascontiguousarray(codes, dtype=np.uint8)
        if self.index is None:
            return codes.view(np.float16).reshape(len(codes), self.hidden)
        tables = self._decoding_tables()
        if tables is None:
            return _unit_half(self.index.sa_decode(codes))
        import torch

        kind, a, b = tables
        raw = torch.from_numpy(codes)
        if kind == "sq8":
            rows = raw.float().add_(0.5).mul_(b).add_(a)
        elif kind == "sq4":
            nibbles = torch.stack((raw & 15, raw >> 4), dim=2).reshape(len(codes), -1)[:, :self.hidden]
            rows = nibbles.float().add_(0.5).mul_(b).add_(a)
        else:  # pq: each sub-vector its centroid (codes of fewer than 8 bits unpacked first)
            m, ksub, _ = a.shape
            index = raw.long() if b == 8 else torch.from_numpy(_unpack(codes, m, b).astype(np.int64))
            # one lookup in the flattened tables (sub-vector j's centroids start at row j * ksub): a quarter of
            # the time of indexing the (M, ksub, dsub) tables by two index tensors
            rows = torch.nn.functional.embedding(index + torch.arange(m) * ksub,
                                                 a.reshape(m * ksub, -1)).reshape(len(codes), self.hidden)
        return torch.nn.functional.normalize(rows, dim=-1).half().numpy()

    def _decoding_tables(self) -> tuple[str, Any, Any] | None:
        """``(kind, a, b)`` to decode with torch: ``sq8``/``sq4``: the ranges' minima and steps; ``pq``: the
        centroids ``(M, 2**bits, dsub)`` and ``bits``; ``None`` for a codec faiss decodes."""
        if self._tables is not None:
            return self._tables or None
        import faiss

        found: tuple = ()
        import torch

        if self.spec in ("sq8", "sq4"):
            trained = faiss.vector_to_array(self.index.sq.trained).astype(np.float32)
            vmin, vdiff = trained[:self.hidden], trained[self.hidden:]
            levels = 255.0 if self.spec == "sq8" else 15.0
            found = (self.spec, torch.from_numpy(vmin.copy()), torch.from_numpy(vdiff / levels))
        elif isinstance(self.index, faiss.IndexPQ) and self.index.pq.nbits <= 8:
            pq = self.index.pq
            centroids = faiss.vector_to_array(pq.centroids).reshape(pq.M, pq.ksub, pq.dsub)
            found = ("pq", torch.from_numpy(centroids.copy()), int(pq.nbits))
        self._tables = found
        return found or None

    def roundtrip(self, rows: np.ndarray) -> np.ndarray:
        """What a row reads after being stored: fp16 as is, else ``decode(encode(rows))``."""
        if self.index is None:
            return np.asarray(rows, dtype=np.float16)
        return self.decode(self.encode(rows))

    def to_bytes(self) -> bytes:
        if self.index is None:
            return b""
        import faiss

        return faiss.serialize_index(self.index).tobytes()

    @classmethod
    def from_bytes(cls, spec: str, hidden: int, data: bytes) -> "StateCodec":
        if not data:
            return cls.build(spec, hidden)
        import faiss

        return cls(check_spec(spec), hidden, faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8).copy()))
