"""The reader's encoder run by ONNX Runtime: the same fp32 function as :class:`~.encoder.E5Encoder`, without
PyTorch's per-operation dispatch.

A question is one short sequence (some 20 tokens), where the eager torch module spends most of its 24 ms
dispatching about 200 small operations; ONNX Runtime runs the same graph (attention, LayerNorm and GELU fused)
in about 9 ms on two cores. Batches of passages cost the same in both (their matrix products dominate), so
every pass goes through the one runtime that loaded.

The graph is exported from the torch module once per weights file (``torch.onnx.export``, some 4 s) into the
user's cache folder (``$XDG_CACHE_HOME/retrieval-workbench/reader``, else ``~/.cache/...``), checked against the
torch module on a probe sequence, and read from there by every later process (under a second); a folder
that cannot be written keeps the graph in memory for the process. Where ONNX Runtime, ``onnx`` (the exporter
needs it) or the export fails, the reader keeps the torch module, and says why (:attr:`OnnxEncoder.why`).

``precision="int8"`` quantises that graph's matrix products to int8 (ONNX Runtime's dynamic quantisation:
int8 weights per output channel, activations quantised per batch; VNNI where the CPU has it), kept beside the
fp32 graph in the same folder; it is checked against the fp32 graph on the probe sequence (mean-pooled cosine
at least :data:`INT8_MIN_COSINE`) before it is used.
"""

from __future__ import annotations

import io
import logging
import os
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from ...core.errors import first_line
from .encoder import Block, E5Encoder, batch_ids
from .states import file_sha1

log = logging.getLogger(__name__)

#: The export's layout; a new layout (inputs, opset) is a new file name, so an old file is never read as it.
GRAPH_VERSION = "g2-opset17-matmul"
#: Largest difference allowed between the graph's and the torch module's states on the probe sequence (both
#: fp32; measured about 1e-6).
TOLERANCE = 1e-4
_PROBE = [[0, 5, 6, 7, 8, 9, 2], [0, 10, 2]]
#: The encoder's precisions: ``fp32`` (the weights as dequantised) and ``int8`` (:func:`_quantised`).
PRECISIONS = ("int8", "fp32")
#: The lowest cosine allowed between the int8 and the fp32 graph's mean-pooled states on the probe (measured
#: 0.997 on average on FaQuAD's passages).
INT8_MIN_COSINE = 0.98

#: The process' loaded graphs (model weights: the one process-wide state the reader keeps), by model and precision.
_sessions: dict[str, "OnnxEncoder"] = {}
_lock = threading.Lock()


def forget_sessions() -> None:
    """Forget the process' loaded graphs: the next reader loads its graph again from the cache folder (or exports
    it), as a new process would."""
    with _lock:
        _sessions.clear()


def cache_folder() -> Path:
    """Where exported graphs are kept: ``$XDG_CACHE_HOME/retrieval-workbench/reader`` (else ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "retrieval-workbench" / "reader"


class OnnxEncoder:
    """An ONNX Runtime session computing :class:`~.encoder.E5Encoder`'s last hidden states.

    Called as the torch module is: ``encoder(ids, mask)`` with ``(batch, tokens)`` long ids and bool mask,
    returning ``(batch, tokens, hidden)`` float32 states (a torch tensor)."""

    runtime = "onnxruntime"

    def __init__(self, session, config: dict, source: str, precision: str = "fp32"):
        self.session = session
        self.config = dict(config)
        self.source = source  # the graph's file, or "memory"
        self.precision = precision
        self.graph: bytes | None = None   # the graph's bytes where no file holds them (``source`` "memory")

    def __call__(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        out = self.session.run(None, {"ids": ids.numpy(), "mask": mask.numpy()})[0]
        return torch.from_numpy(out)

    def eval(self) -> "OnnxEncoder":
        return self


class _Graph(torch.nn.Module):
    """The exported function: ``(ids, mask) → hidden``, with named inputs."""

    def __init__(self, encoder: E5Encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.encoder(ids, mask)


def _export(encoder: E5Encoder) -> bytes:
    """The encoder's graph as ONNX bytes (batch and tokens dynamic), its attention written out
    (:attr:`~.encoder.Block.explicit`)."""
    for block in encoder.blocks:
        assert isinstance(block, Block)  # a ModuleList yields nn.Module; E5Encoder.blocks holds Blocks
        block.explicit = True
    ids, mask = batch_ids(_PROBE, 1)
    buffer = io.BytesIO()
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")
        # the stub types f as a path; the TorchScript exporter (dynamo=False) writes to a file object as well
        torch.onnx.export(_Graph(encoder.eval()), (ids, mask), buffer,  # type: ignore[arg-type]
                          input_names=["ids", "mask"],
                          output_names=["hidden"], opset_version=17, dynamo=False,
                          dynamic_axes={"ids": {0: "batch", 1: "tokens"}, "mask": {0: "batch", 1: "tokens"},
                                        "hidden": {0: "batch", 1: "tokens"}})
    return buffer.getvalue()


def _session(model: bytes | str):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, torch.get_num_threads())   # the process' thread count, as torch's
    options.inter_op_num_threads = 1
    # No spinning after a run: on two cores a spinning pool takes the cores from the torch products (MaxSim,
    # the judge) that follow each pass (a warm request measured 6.9 ms spinning against 2.5 ms in torch).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3   # warnings about unused initialisers are not the user's business
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def _write(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically (a temporary file renamed); ``False`` where it cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=path.name, suffix=".tmp", delete=False) as tmp:
            tmp.write(data)
        os.chmod(tmp.name, 0o644)   # readable by every user of a shared cache, as the weights are
        os.replace(tmp.name, path)
        return True
    except OSError as exc:
        log.warning("reader graph kept in memory (%s: %s)", path.parent, first_line(exc))
        return False


def onnx_encoder(weights: Path, config: dict, build: Callable[[], E5Encoder],
                 folder: Path | None = None, precision: str = "fp32") -> tuple[OnnxEncoder | None, str]:
    """``(the weights' ONNX Runtime encoder, "")``, or ``(None, why)`` where it cannot be had.

    ``build`` makes the torch module (only called when the graph must be exported); ``folder`` overrides
    :func:`cache_folder`; ``precision``: one of :data:`PRECISIONS`. One session per weights file, precision and
    process (sessions are thread-safe)."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown encoder precision {precision!r} (use {' or '.join(PRECISIONS)})")
    weights = Path(weights)
    try:
        info = weights.stat()
        digest = file_sha1(str(weights.resolve()), info.st_size, info.st_mtime_ns)[:16]
    except OSError as exc:
        return None, f"{exc.__class__.__name__}: {first_line(exc)}"
    key = f"{digest}-{GRAPH_VERSION}"
    with _lock:
        if f"{key}/{precision}" in _sessions:
            return _sessions[f"{key}/{precision}"], ""
        try:
            encoder = _sessions.get(f"{key}/fp32") or _load(key, config, build, folder or cache_folder())
            _sessions[f"{key}/fp32"] = encoder
            if precision == "int8":
                encoder = _load_int8(key, encoder, folder or cache_folder())
        except ImportError as exc:
            return None, f"{exc.name or 'onnxruntime'} is not installed"
        except Exception as exc:  # noqa: BLE001 - any failure of a third-party runtime leaves the torch module
            return None, f"{exc.__class__.__name__}: {first_line(exc)}"
        _sessions[f"{key}/{precision}"] = encoder
        return encoder, ""


def _load(key: str, config: dict, build: Callable[[], E5Encoder], folder: Path) -> OnnxEncoder:
    path = folder / f"{key}.onnx"
    if path.is_file():
        try:
            return OnnxEncoder(_session(str(path)), config, str(path))
        except Exception as exc:  # noqa: BLE001 - a damaged file is exported again
            log.warning("reader graph %s unreadable (%s): exported again", path, first_line(exc))
    log.info("exporting the reader's encoder for ONNX Runtime (once per weights file, a few seconds)")
    module = build()
    data = _export(module)
    encoder = OnnxEncoder(_session(data), config, "memory")
    _check(encoder, module)
    if _write(path, data):
        encoder.source = str(path)
    else:
        encoder.graph = data
    return encoder


def _check(encoder: OnnxEncoder, module: E5Encoder) -> None:
    """Refuse a graph whose states differ from the torch module's on the probe (a ValueError)."""
    ids, mask = batch_ids(_PROBE, 1)
    with torch.inference_mode():
        expected = module(ids, mask).numpy()
    got = encoder(ids, mask).numpy()
    worst = float(np.abs(expected - got)[mask.numpy()].max())
    if not worst <= TOLERANCE:
        raise ValueError(f"the ONNX graph's states differ from torch's by {worst:.2g} (over {TOLERANCE:g})")


def _quantised(fp32: bytes | str) -> bytes:
    """The fp32 graph with its MatMul and Gemm weights in int8 (per output channel), as ONNX bytes."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="reader-int8-") as tmp:
        source = Path(tmp) / "fp32.onnx"
        if isinstance(fp32, bytes):
            source.write_bytes(fp32)
        else:
            source = Path(fp32)
        target = Path(tmp) / "int8.onnx"
        logging.getLogger().disabled, was = True, logging.getLogger().disabled   # its "pre-process" advice
        try:
            quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True,
                             op_types_to_quantize=["MatMul", "Gemm"])
        finally:
            logging.getLogger().disabled = was
        return target.read_bytes()


def _load_int8(key: str, fp32: OnnxEncoder, folder: Path) -> OnnxEncoder:
    """The int8 graph of ``fp32``'s: from ``folder`` when quantised before, else quantised now (some 10 s, once per
    weights file) and checked against ``fp32`` on the probe."""
    path = folder / f"{key}-int8.onnx"
    if path.is_file():
        try:
            return OnnxEncoder(_session(str(path)), fp32.config, str(path), "int8")
        except Exception as exc:  # noqa: BLE001 - a damaged file is quantised again
            log.warning("reader int8 graph %s unreadable (%s): quantised again", path, first_line(exc))
    log.info("quantising the reader's encoder to int8 (once per weights file, some seconds)")
    data = _quantised(fp32.graph if fp32.graph is not None else fp32.source)
    encoder = OnnxEncoder(_session(data), fp32.config, "memory", "int8")
    _check_int8(encoder, fp32)
    if _write(path, data):
        encoder.source = str(path)
    return encoder


def _check_int8(encoder: OnnxEncoder, fp32: OnnxEncoder) -> None:
    """Refuse an int8 graph whose mean-pooled states stray from the fp32 graph's on the probe (a ValueError)."""
    ids, mask = batch_ids(_PROBE, 1)
    a, b = fp32(ids, mask), encoder(ids, mask)
    m = mask.unsqueeze(-1).float()
    pa, pb = (a * m).sum(1) / m.sum(1), (b * m).sum(1) / m.sum(1)
    worst = float(torch.nn.functional.cosine_similarity(pa, pb, dim=-1).min())
    if not worst >= INT8_MIN_COSINE:
        raise ValueError(f"the int8 graph's states stray from fp32's (cosine {worst:.3f}, under {INT8_MIN_COSINE})")
