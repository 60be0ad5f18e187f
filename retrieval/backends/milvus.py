"""The Milvus backend (``RETRIEVAL_BACKEND=milvus``): the lexical and the dense index of a corpus in one Milvus
collection, embedded (Milvus Lite, ``RETRIEVAL_MILVUS_URI`` a file path) or on a Milvus server or cluster
(``RETRIEVAL_MILVUS_URI=http://host:19530``, ``RETRIEVAL_MILVUS_TOKEN``).

One collection per corpus, embedding model and chunking (:func:`collection_name`). Each row is one subchunk:
its id, the tenant (the collection's partition key), parent, content hash, the other metadata as typed scalar
fields (and all of it as JSON), the dense vector (HNSW, cosine) and a sparse vector holding **our** BM25:

* document side, per token ``t`` of our tokenizer (:func:`retrieval.core.text.tokenize`):
  ``w(t, d) = tf · (k1 + 1) / (tf + k1 · (1 − b + b · |d| / avgdl))`` with the tenant's ``avgdl``;
* query side, per unique query token: Lucene's IDF over the tenant's chunks only;
* inner product: ``Σ idf(t) · w(t, d)``, the local engine's BM25 exactly.

Tokens are sparse dimensions by a 32-bit FNV-1a hash. Milvus ranks in float32 and a hash collision could add
a foreign token's weight, so the lexical side asks Milvus for a margin beyond the window and rescores those
candidates in float64 from their text (which also gives the per-term contributions), then cuts the window:
the list, its scores and its ``terms`` are the local engine's. The tenant statistics (chunk count, total
length, document frequency per token) are computed from the chunks at load, per tenant, so a tenant's scores
never depend on another tenant's chunks (Milvus's own BM25 function keeps collection-wide statistics).

Filters become Milvus expressions from typed :class:`~retrieval.core.filters.Filters` only: field names come from
the schema, values are rendered as typed literals (:func:`literal`: strings escaped for Milvus's own parser),
never pasted; results are checked again against the filters on our side. The tenant is in every search
expression. Ids, tenants and metadata strings too long for the schema's fields are refused when the corpus
loads, for both backends (:data:`retrieval.ingest.corpus.MAX_ID_BYTES` and its neighbours), so one long value cannot
fail the sync of a whole corpus.

A Milvus server is asked what it supports when it is opened (:func:`server_features`: its version). Before 2.4
it has no sparse vectors: the lexical side then runs in the app process (:class:`InProcessLexical`, the local
engine over the same chunks, its reason in the trace's ``models.bm25_engine``) while the dense side and the
filters stay in Milvus; metadata filters go through the JSON field (no nullable typed fields before 2.5) and a
changed row is deleted and inserted again (2.3's upsert put rows in the wrong partition-key partition). A
server older than 2.3, or one that does not answer the version request, is refused with one line.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..core.errors import InvalidFilter, RetrievalError
from ..core.kinds import Text
from ..core.reasons import Reason, declare, raw
from ..core.redact import redact_text
from ..core.filters import Filters, field_types
from ..core.text import tokenize
from ..core.types import Chunk, RankedList, ScoredItem
from ..ingest.corpus import MAX_ID_BYTES, MAX_METADATA_TEXT_BYTES, MAX_TENANT_BYTES, chunk_documents, load_corpus
from .lexical import K1, B, CountFrequencies, LexicalIndex, lucene_idf
from .base import BACKENDS, NO_EMBEDDER, OK, SYNC_FAILED, UNAVAILABLE, Backend, Opened, OpenRequest, StoreStatusError
from .store import INTERRUPTS, SyncReport, embed_chunks, index_variant
from .embedders import chunk_encoding, settings_embedding, vectors_name

log = logging.getLogger(__name__)

#: Bumped when the row layout or the lexical weighting changes (part of the collection name).
FORMAT = 1
_ID_LEN, _TENANT_LEN, _TEXT_LEN = 1024, MAX_TENANT_BYTES, MAX_METADATA_TEXT_BYTES
assert MAX_ID_BYTES + 24 <= _ID_LEN  # a document id plus "#<chunk number>" fits the id field
_FIELD_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,60}$")
_SCALAR = {str: "VARCHAR", int: "INT64", float: "DOUBLE", bool: "BOOL"}
_PAGE = 2000  # rows per write / read request


class MilvusUnavailable(RuntimeError):
    """The Milvus server did not answer (or the embedded one could not open), or it is one the backend cannot
    use (too old): one line, the URI in it without its credentials (:func:`retrieval.core.redact.redact_text`)."""

    def __init__(self, message: str) -> None:
        super().__init__(redact_text(message))


#: The oldest Milvus server the backend runs on (HNSW with COSINE, partition keys and JSON fields: 2.3).
MIN_SERVER = (2, 3)


@dataclass(frozen=True)
class ServerFeatures:
    """What the Milvus behind a client supports, from its version (:func:`server_features`)."""

    #: As the server reports it (``2.3.5-lite``), or ``Milvus Lite``.
    version: str
    #: SPARSE_FLOAT_VECTOR (2.4+): our BM25 in Milvus; without it the lexical side runs in the app process.
    sparse: bool = True
    #: Nullable scalar fields (2.5+): typed fields for metadata keys that some chunks lack; else JSON only.
    nullable: bool = True
    #: ``upsert(partial_update=True)`` (2.6+): a reweighted row sends its sparse vector only.
    partial_update: bool = True
    #: ``upsert`` keeps a row in its partition-key partition (Milvus 2.3.5 routed upserted rows to another
    #: tenant's partition, where a tenant's search did not find them): else delete, then insert.
    upsert: bool = True
    #: ``hybrid_search`` (2.4+).
    hybrid: bool = True

    @property
    def lexical_reason(self) -> str | None:
        """Why the lexical side runs in the app process (None: it runs in Milvus)."""
        if self.sparse:
            return None
        return (f"Milvus {self.version} has no sparse vectors (2.4+): BM25 runs in the app process, the dense "
                "search and the filters in Milvus")


#: Milvus Lite (embedded): the whole API the backend uses.
LITE = ServerFeatures("Milvus Lite")


# -- helpers --------------------------------------------------------------------------------------------
def is_server_uri(uri: str) -> bool:
    """True for a server address (``http://``, ``https://``, ``tcp://``, ``grpc://``), False for a file path."""
    return re.match(r"^(https?|tcp|grpc|unix)://", str(uri)) is not None


def open_client(uri: str | Path, token: str | None = None, timeout: float = 10.0) -> Any:
    """A ``MilvusClient``: Milvus Lite on a ``.db`` file for a path, else a connection to the server ``uri``.

    Raises:
        MilvusUnavailable: the server is unreachable or the file cannot be opened.
    """
    from pymilvus import MilvusClient

    # pymilvus logs each failed reconnection with a traceback; the failure reaches the user as a tier reason.
    # Milvus Lite's embedded server logs an unimplemented call (AllocTimestamp) with a traceback on ingest.
    # Milvus Lite logs a file held by another process with a traceback (DataDirLockedError): said below in one line.
    for name in ("pymilvus", "pymilvus.milvus_client", "grpc._server", "milvus_lite"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    target = str(uri)
    try:
        if not is_server_uri(target):
            path = Path(target)
            if path.suffix != ".db":  # pymilvus runs Milvus Lite only for a path ending in .db
                path = path / "milvus.db"
            path.parent.mkdir(parents=True, exist_ok=True)
            target = str(path.resolve())
        return MilvusClient(uri=target, token=token or "", timeout=timeout)
    except BaseException as exc:  # noqa: BLE001 - one line for the tier reason (a native panic too)
        if isinstance(exc, INTERRUPTS):
            raise
        if not is_server_uri(target) and _held_elsewhere(Path(target)):
            raise MilvusUnavailable(f"Milvus Lite file {target} is open in another process (Milvus Lite serves one "
                                    "process at a time: stop the other one, or use a Milvus server)") from None
        raise MilvusUnavailable(f"Milvus at {uri} unavailable: {exc.__class__.__name__}: {str(exc)[:200]}") from exc


def server_features(client: Any, uri: str | Path, timeout: float = 10.0) -> ServerFeatures:
    """What the Milvus at ``uri`` supports (:data:`LITE` for a file path), from the server's version.

    Raises:
        MilvusUnavailable: the server is down (as :func:`open_client` says it), did not answer the version request
            or is older than 2.3 (one line naming the version the backend needs).
    """
    if not is_server_uri(str(uri)):
        return LITE
    need = f"the Milvus backend needs a Milvus server {MIN_SERVER[0]}.{MIN_SERVER[1]} or later"
    try:
        raw = str(client.get_server_version(timeout=timeout))
    except BaseException as exc:  # noqa: BLE001 - one line for the tier reason (a native panic too)
        if isinstance(exc, INTERRUPTS):
            raise
        import pymilvus

        said = " ".join(str(exc).split())
        if getattr(exc, "code", None) == 2 or "Fail connecting" in said:  # down, not incompatible
            raise MilvusUnavailable(f"Milvus at {uri} unavailable: {exc.__class__.__name__}: {said[:200]}") from None
        raise MilvusUnavailable(f"Milvus at {uri} did not answer pymilvus {pymilvus.__version__}'s version request "
                                f"({exc.__class__.__name__}: {said[:120]}): {need}") from None
    found = re.search(r"(\d+)\.(\d+)(?:\.\d+)?", raw)
    if found is None:
        raise MilvusUnavailable(f"Milvus at {uri} reports the version {raw[:60]!r}, not one the backend knows: {need}")
    # Milvus Lite as a server process reports its own version (3.2.2), read as a 2.4+ server: it has the whole API.
    version = (int(found.group(1)), int(found.group(2)))
    shown = raw[found.start():].strip()[:40]
    if version < MIN_SERVER:
        raise MilvusUnavailable(f"Milvus at {uri} is version {shown}: {need} (2.4 or later keeps BM25 in Milvus)")
    return ServerFeatures(shown, sparse=version >= (2, 4), nullable=version >= (2, 5),
                          partial_update=version >= (2, 6), upsert=version >= (2, 4), hybrid=version >= (2, 4))


def _held_elsewhere(db: Path) -> bool:
    """True when another process holds Milvus Lite's lock on ``db`` (the ``LOCK`` file of its folder)."""
    try:
        import fcntl
    except ImportError:  # Windows: no diagnosis, the generic reason stands
        return False
    lock = db / "LOCK"
    if not lock.is_file():
        return False
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # releases the probe's own lock, when it got one
    return False


def collection_name(corpus_key: str, model_name: str, variant: str = "") -> str:
    """``rw_<sha1[:16]>`` of corpus, model and variant (chunking and row layout; Milvus names: letters, digits,
    ``_``). Each combination keeps its own collection, as with Chroma: switching back re-embeds nothing."""
    key = f"{corpus_key}\n{model_name}" + (f"\n{variant}" if variant else "")
    return "rw_" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def term_id(token: str) -> int:
    """The sparse dimension of a token: 32-bit FNV-1a of its UTF-8 bytes (stable across processes)."""
    h = 0x811C9DC5
    for byte in token.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def tenant_key(value: Any) -> str:
    """The partition-key string of a tenant value (``""`` for a corpus without tenants)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else "json:" + json.dumps(value)


#: The escapes Milvus's expression parser reads in a double-quoted string (Milvus Lite reads no other: not
#: ``\\uXXXX``, ``\\xHH``, octal, ``\\a``, ``\\b``, ``\\f`` nor ``\\v``; a raw line break ends the literal).
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPE_RE = re.compile(r'[\\"\n\r\t]')


def literal(value: Any) -> str:
    """A Milvus expression literal for one typed filter value (never the raw text).

    Strings are double-quoted with ``\\``, ``"``, line feed, carriage return and tab escaped as ``\\\\``,
    ``\\"``, ``\\n``, ``\\r``, ``\\t`` (the escapes Milvus reads); every other character is written as it
    is, control characters and non-ASCII included (``josé``, U+0001, U+2028): Milvus reads no ``\\uXXXX``
    escape, and rejected the expression JSON's escapes made of a control character (every request of that
    tenant then fell to ``lexical_only``). A value can never close its literal; numbers must be finite;
    bools are ``true``/``false``.

    Raises:
        InvalidFilter: a value of another type, a non-finite number, or text that is not valid Unicode (a lone
            surrogate, which no UTF-8 request can carry).
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidFilter(f"filter value {value!r} is not a finite number")
        return repr(float(value))
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidFilter(f"filter value {value!r} is not valid Unicode text (a lone surrogate)") from None
        return '"' + _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group()], value) + '"'
    raise InvalidFilter(f"filter value {value!r} has an unsupported type {type(value).__name__}")


@dataclass
class TenantStats:
    """One tenant's BM25 statistics: chunk count, total length in tokens, chunks per token."""

    n: int = 0
    total: int = 0
    df: Counter | None = None

    @property
    def avgdl(self) -> float:
        return self.total / self.n if self.n else 0.0

    @property
    def key(self) -> str:
        """What the stored document weights depend on besides the chunk itself."""
        return f"{self.total}/{self.n}"


def tenant_stats(chunks: Iterable[Chunk], tenant_field: str) -> dict[Any, TenantStats]:
    """Per tenant value (``None`` when absent), the statistics of :class:`TenantStats` (one tokenization)."""
    stats: dict[Any, TenantStats] = {}
    for chunk in chunks:
        s = stats.setdefault(chunk.metadata.get(tenant_field), TenantStats(df=Counter()))
        tokens = tokenize(chunk.indexed_text)
        s.n += 1
        s.total += len(tokens)
        s.df.update(set(tokens))
    return stats


def tenant_names(chunks: Iterable[Chunk], tenant_field: str) -> dict[Any, TenantStats]:
    """Per tenant value, its chunk count only (no tokenization): the tenants of a collection without BM25."""
    stats: dict[Any, TenantStats] = {}
    for chunk in chunks:
        stats.setdefault(chunk.metadata.get(tenant_field), TenantStats(df=Counter())).n += 1
    return stats


def doc_weights(tokens: Sequence[str], avgdl: float) -> dict[str, float]:
    """Document-side BM25 weight of each token: ``tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl))``."""
    norm = K1 * (1 - B + B * len(tokens) / avgdl) if avgdl else K1
    return {t: tf * (K1 + 1) / (tf + norm) for t, tf in Counter(tokens).items()}


def sparse_vector(weights: Mapping[str, float]) -> dict[int, float]:
    """Token weights as a Milvus sparse vector (colliding tokens' weights add up, as one dimension)."""
    out: dict[int, float] = {}
    for token, w in weights.items():
        d = term_id(token)
        out[d] = out.get(d, 0.0) + float(w)
    return out


# -- schema ---------------------------------------------------------------------------------------------
class Schema:
    """Which metadata keys get their own typed scalar field (``m_<key>``); the rest is filtered in JSON."""

    def __init__(self, types: Mapping[str, set[type]], tenant_field: str, features: ServerFeatures = LITE) -> None:
        self.tenant_field = tenant_field
        self.scalars: dict[str, str] = {}
        #: The lexical side in Milvus (a sparse vector per row) or in the app process (no sparse field).
        self.sparse = features.sparse
        # Without nullable fields a key that some chunk lacks cannot be a typed field: every key is read
        # through the JSON field then (``meta["key"]``).
        typed_fields = types.items() if features.nullable else ()
        for key, kinds in sorted(typed_fields):
            if key == tenant_field or not _FIELD_RE.match(key):
                continue
            kinds = set(kinds)
            if kinds == {int, float}:
                kinds = {float}
            if len(kinds) == 1 and next(iter(kinds)) in _SCALAR:
                self.scalars[key] = _SCALAR[next(iter(kinds))]

    def signature(self) -> str:
        """What the row layout depends on: part of the collection name, so another layout is another collection."""
        layout = {"format": FORMAT, "tenant": self.tenant_field, "scalars": self.scalars}
        if not self.sparse:  # named only when absent, so the names of existing collections stay as they were
            layout["sparse"] = False
        return json.dumps(layout, sort_keys=True)

    def field(self, key: str) -> str:
        """The expression that names metadata ``key``: its scalar field, or its entry in the JSON field."""
        if key in self.scalars:
            return f"m_{key}"
        return f"meta[{literal(key)}]"

    def expression(self, filters: Filters, tenant: Any = None, with_tenant: bool = True) -> str:
        """The Milvus expression of ``filters`` (AND across keys, IN within a key) for one tenant."""
        parts = []
        if with_tenant:
            parts.append(f"tenant == {literal(tenant_key(tenant))}")
        for key, values in filters.clauses:
            if key == self.tenant_field:
                continue
            if not values:
                return "id == \"\" and id != \"\""  # an empty IN matches nothing
            name = self.field(key)
            if key in filters.multi:  # a list in the JSON field: one of its members is one of the values
                parts.append(f"json_contains_any({name}, [{', '.join(literal(v) for v in values)}])")
                continue
            if self.scalars.get(key) == "DOUBLE":
                values = tuple(float(v) for v in values if not isinstance(v, bool))
                if not values:
                    return "id == \"\" and id != \"\""
            if key in self.scalars:
                parts.append(f"{name} in [{', '.join(literal(v) for v in values)}]")
            else:  # a JSON path: Milvus Lite takes no IN on it, so a disjunction of equalities
                parts.append(" or ".join(f"{name} == {literal(v)}" for v in values))
        return " and ".join(f"({p})" for p in parts)

    def create(self, client: Any, name: str, dim: int, model_name: str) -> None:
        """Create the collection: HNSW (M 16, efConstruction 200) cosine on ``dense``, an inverted index (inner
        product) on ``sparse``, strong consistency (a search sees every acknowledged write)."""
        from pymilvus import DataType

        schema = client.create_schema(auto_id=False, enable_dynamic_field=False,
                                      description=f"{model_name} {self.signature()}")
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=_ID_LEN)
        schema.add_field("tenant", DataType.VARCHAR, max_length=_TENANT_LEN, is_partition_key=True)
        schema.add_field("parent", DataType.VARCHAR, max_length=_ID_LEN)
        schema.add_field("hash", DataType.VARCHAR, max_length=128)
        schema.add_field("lexkey", DataType.VARCHAR, max_length=128)
        schema.add_field("position", DataType.INT64)
        schema.add_field("meta", DataType.JSON)
        for key, kind in self.scalars.items():
            extra = {"max_length": _TEXT_LEN} if kind == "VARCHAR" else {}
            schema.add_field(f"m_{key}", getattr(DataType, kind), nullable=True, **extra)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
        if self.sparse:
            schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        index = client.prepare_index_params()
        index.add_index("dense", index_type="HNSW", metric_type="COSINE", params={"M": 16, "efConstruction": 200})
        if self.sparse:
            index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="IP")
        client.create_collection(name, schema=schema, index_params=index, consistency_level="Strong")

    def row(self, chunk: Chunk, vector: np.ndarray, weights: Mapping[str, float] | None,
            lexkey: str) -> dict[str, Any]:
        row = {"id": chunk.chunk_id, "tenant": tenant_key(chunk.metadata.get(self.tenant_field)),
               "parent": chunk.parent_id, "hash": chunk.content_hash, "lexkey": lexkey,
               "position": int(chunk.position), "meta": dict(chunk.metadata),
               "dense": np.asarray(vector, dtype=np.float32).tolist()}
        if self.sparse:
            row["sparse"] = sparse_vector(weights or {})
        for key, kind in self.scalars.items():
            value = chunk.metadata.get(key)
            row[f"m_{key}"] = float(value) if kind == "DOUBLE" and value is not None else value
        return row


# -- the dense side (and the collection) -------------------------------------------------------------------
class MilvusStore:
    """A corpus' rows in one Milvus collection: :class:`retrieval.backends.store.VectorStore`'s methods (``sync``,
    ``query``, ``vectors``, ``count``, ``drop``) plus :meth:`sparse_search` for :class:`MilvusLexical` and
    :meth:`server_rrf` (Milvus's own hybrid search, a check of our fusion)."""

    def __init__(self, client: Any, corpus_key: str, model_name: str, variant: str = "", *,
                 tenant_field: str = "tenant", types: Mapping[str, set[type]] | None = None,
                 ef_search: int | None = None, timeout: float = 10.0, server: bool = False,
                 passage_template: str = "title-newline", features: ServerFeatures = LITE) -> None:
        self.client, self.corpus_key, self.model_name, self.variant = client, corpus_key, model_name, variant
        self.tenant_field = tenant_field
        self.passage_template = passage_template
        #: What the server supports (:func:`server_features`): Milvus Lite's whole API by default.
        self.features = features
        self.schema = Schema(types or {}, tenant_field, features)
        self.name = collection_name(corpus_key, model_name, f"{variant}\n{self.schema.signature()}")
        self.ef_search = ef_search or 100
        self.timeout = timeout
        #: A Milvus server (True) or Milvus Lite in process (False): Lite has no query iterator.
        self.server = server
        #: A request's reads on a server: Session consistency (this process' writes are seen at once, another
        #: process' within the server's time tick). Strong, the collection's level, made every search on Milvus
        #: 2.3.5 wait for the next time tick: 200 ms instead of 5 ms. The sync's own reads stay Strong.
        self.read_level = {"consistency_level": "Session"} if server else {}
        self.catalog: dict[str, Chunk] | None = None
        self.stats: dict[Any, TenantStats] = {}

    # VectorStore protocol ---------------------------------------------------------------------------
    def set_ef_search(self, ef_search: int) -> None:
        """HNSW's query-time candidate list (``ef``), sent with every dense search (at least the window)."""
        self.ef_search = int(ef_search)

    def count(self) -> int:
        if not self.client.has_collection(self.name, timeout=self.timeout):
            return 0
        got = self.client.query(self.name, filter="", output_fields=["count(*)"], timeout=self.timeout)
        return int(got[0]["count(*)"])

    def drop(self) -> None:
        if self.client.has_collection(self.name, timeout=self.timeout):
            self.client.drop_collection(self.name, timeout=self.timeout)

    def sync(self, chunks: Sequence[Chunk], embed: Callable[[list[str]], np.ndarray], batch: int = 32,
             progress: bool = True, on_progress: Callable[[int, int], None] | None = None,
             stats: dict[Any, TenantStats] | None = None,
             encode_chunks: Callable[[Sequence[Chunk]], np.ndarray] | None = None) -> "MilvusSyncReport":
        """Make the collection hold exactly ``chunks`` (dense vectors from ``embed`` and our BM25 weights).

        Unchanged rows (same content hash and the same tenant statistics) are not written; a tenant whose
        statistics changed gets only its sparse vectors rewritten (``reweighted``); stale rows are deleted.
        Every vector is computed before anything is written, so a failure while embedding leaves the
        previous collection as it was. (``rebuilt`` is always False: another model or row layout is another
        collection, see :func:`collection_name`.)

        Without sparse vectors (Milvus before 2.4) rows carry no BM25 weights and ``stats`` only name the
        tenants (nothing is reweighted); where ``upsert`` is unsafe, a changed row is deleted, then inserted.
        """
        if stats is None:
            stats = (tenant_stats if self.schema.sparse else tenant_names)(chunks, self.tenant_field)
        wanted = {c.chunk_id: c for c in chunks}
        exists = self.client.has_collection(self.name, timeout=self.timeout)
        stored: dict[str, tuple[str, str]] = {}
        stale: list[str] = []
        rebuilt = False
        if exists:
            self.client.load_collection(self.name, timeout=self.timeout)  # released after a restart
            stored, stale = self._stored(wanted)
        todo = [c for c in chunks if c.chunk_id not in stored or stored[c.chunk_id][0] != c.content_hash]
        lexkey = {t: (s.key if self.schema.sparse else "-") for t, s in stats.items()}
        reweight = [c for c in chunks if c.chunk_id in stored and stored[c.chunk_id][0] == c.content_hash
                    and stored[c.chunk_id][1] != lexkey[c.metadata.get(self.tenant_field)]]
        vectors = embed_chunks(todo, embed, batch, progress, on_progress, self.passage_template, encode_chunks)
        if not exists:
            if not todo:  # an empty corpus: nothing to create
                self.catalog, self.stats = wanted, stats
                return MilvusSyncReport(0, 0, 0, 0, rebuilt, reweighted=0)
            self.schema.create(self.client, self.name, int(vectors.shape[1]), self.model_name)
        for start in range(0, len(todo), _PAGE):
            part = todo[start : start + _PAGE]
            rows = []
            for j, c in enumerate(part):
                s = stats[c.metadata.get(self.tenant_field)]
                weights = doc_weights(tokenize(c.indexed_text), s.avgdl) if self.schema.sparse else None
                rows.append(self.schema.row(c, vectors[start + j], weights, lexkey[c.metadata.get(self.tenant_field)]))
            self._write(rows, [c.chunk_id for c in part if c.chunk_id in stored])
        for start in range(0, len(reweight), _PAGE):
            rows = []
            part = reweight[start : start + _PAGE]
            for c in part:
                s = stats[c.metadata.get(self.tenant_field)]
                rows.append({"id": c.chunk_id, "lexkey": s.key,
                             "sparse": sparse_vector(doc_weights(tokenize(c.indexed_text), s.avgdl))})
            if self.features.partial_update:
                self.client.upsert(self.name, rows, partial_update=True, timeout=self.timeout)
            else:  # the whole rows, with their stored dense vectors (nothing re-embedded)
                stored_dense = self._dense(c.chunk_id for c in part)
                self._write([{**self.schema.row(c, stored_dense[c.chunk_id], None, row["lexkey"]), **row}
                             for c, row in zip(part, rows)], [c.chunk_id for c in part])
        for start in range(0, len(stale), _PAGE):
            self.client.delete(self.name, ids=stale[start : start + _PAGE], timeout=self.timeout)
        if todo or reweight or stale:
            # Seal what was written: Milvus (Lite too) then searches indexed segments instead of scanning the
            # growing one (at 10k chunks on Milvus Lite: 2.3 s → 0.1 s a lexical query).
            self.client.flush(self.name, timeout=max(self.timeout, 600.0))
        updated = sum(1 for c in todo if c.chunk_id in stored)
        self.catalog, self.stats = wanted, stats
        return MilvusSyncReport(len(todo) - updated, updated, len(stale), len(chunks) - len(todo), rebuilt,
                                reweighted=len(reweight))

    def _write(self, rows: list[dict[str, Any]], replaced: list[str]) -> None:
        """Write ``rows``; ``replaced`` are the ids among them already stored (deleted first where the server's
        upsert is unsafe: Milvus 2.3.5 put upserted rows in another tenant's partition)."""
        if self.features.upsert:
            self.client.upsert(self.name, rows, timeout=self.timeout)
            return
        if replaced:
            self.client.delete(self.name, ids=replaced, timeout=self.timeout)
        self.client.insert(self.name, rows, timeout=self.timeout)

    def _dense(self, chunk_ids: Iterable[str]) -> dict[str, list[float]]:
        """The stored dense vectors of ``chunk_ids``, as stored (not normalized)."""
        got = self.client.get(self.name, ids=list(chunk_ids), output_fields=["dense"], timeout=self.timeout)
        return {str(row["id"]): row["dense"] for row in got}

    def _stored(self, wanted: Iterable[str]) -> tuple[dict[str, tuple[str, str]], list[str]]:
        """``(chunk id → (content hash, lexical key) of the stored rows among ``wanted``, stale ids)``.

        The wanted ids are looked up by primary key (``id in [...]``, a page at a time); the whole collection is
        listed only when it holds more rows than were found, i.e. when some are stale.
        """
        wanted = list(wanted)
        out: dict[str, tuple[str, str]] = {}
        for start in range(0, len(wanted), 1000):
            expr = f"id in [{', '.join(literal(cid) for cid in wanted[start : start + 1000])}]"
            rows = self.client.query(self.name, filter=expr, output_fields=["id", "hash", "lexkey"],
                                     timeout=self.timeout)
            out.update((str(r["id"]), (r["hash"], r["lexkey"])) for r in rows)
        if self.count() <= len(out):
            return out, []
        known = set(wanted)
        return out, [cid for cid in self._all_ids() if cid not in known]

    def _all_ids(self) -> list[str]:
        """Every stored id: a query iterator on a server (no offset cap), offset pages on Milvus Lite (which
        has no iterator)."""
        ids: list[str] = []
        if self.server:
            iterator = self.client.query_iterator(self.name, batch_size=_PAGE, filter="", output_fields=["id"],
                                                  timeout=self.timeout)
            try:
                while page := iterator.next():
                    ids.extend(str(r["id"]) for r in page)
            finally:
                iterator.close()
            return ids
        while True:
            page = self.client.query(self.name, filter="", output_fields=["id"], limit=_PAGE, offset=len(ids),
                                     timeout=self.timeout)
            ids.extend(str(r["id"]) for r in page)
            if len(page) < _PAGE:
                return ids

    def attach(self, chunks: Sequence[Chunk], stats: dict[Any, TenantStats]) -> None:
        """Use an already synced collection for ``chunks`` (e.g. another process wrote it)."""
        self.catalog, self.stats = {c.chunk_id: c for c in chunks}, stats

    def _tenants(self, filters: Filters) -> list[Any]:
        tenants = filters.get(self.tenant_field)
        if tenants is not None:
            return list(tenants)
        return list(self.stats) or [None]

    def query(self, vector: np.ndarray, filters: Filters, window: int) -> RankedList:
        """Nearest chunks by cosine among those matching ``filters`` (one search per tenant of the filter,
        each with the tenant in its expression). Stage ``dense``, score kind ``cosine``."""
        catalog = self.catalog or {}
        rows: list[tuple[float, str]] = []
        vec = np.asarray(vector, dtype=np.float32).tolist()
        for tenant in self._tenants(filters):
            if window <= 0:
                break
            hits = self._search([vec], "dense", "COSINE", window, self.schema.expression(filters, tenant),
                                {"ef": max(self.ef_search, window)})
            rows.extend((float(h["distance"]), str(h["id"])) for h in hits)
        # The filters are checked again on our side: a tenant filter holds even if the store ignored it.
        rows = [(d, cid) for d, cid in rows if cid in catalog and filters.matches(catalog[cid].metadata)]
        rows.sort(key=lambda r: (-r[0], r[1]))
        items = tuple(ScoredItem(cid, catalog[cid].parent_id, rank, d)
                      for rank, (d, cid) in enumerate(rows[:window], start=1))
        return RankedList("dense", "cosine", items)

    def vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not chunk_ids:
            return {}
        got = self.client.get(self.name, ids=list(chunk_ids), output_fields=["dense"], timeout=self.timeout,
                              **self.read_level)
        out = {}
        for row in got:
            v = np.asarray(row["dense"], dtype=np.float32)
            out[str(row["id"])] = v / (np.linalg.norm(v) or 1.0)
        return out

    def sparse_search(self, query: Mapping[int, float], filters: Filters, tenant: Any, limit: int) -> list[tuple[str, float]]:
        """``(chunk id, inner product)`` of the sparse search for one tenant (Milvus's order)."""
        hits = self._search([dict(query)], "sparse", "IP", limit, self.schema.expression(filters, tenant), {})
        return [(str(h["id"]), float(h["distance"])) for h in hits]

    def _search(self, data: list[Any], field: str, metric: str, limit: int, expr: str,
                params: dict[str, Any]) -> list[dict[str, Any]]:
        result = self.client.search(self.name, data=data, anns_field=field, limit=min(limit, 16384),
                                    filter=expr, output_fields=["id"], timeout=self.timeout,
                                    search_params={"metric_type": metric, "params": params}, **self.read_level)
        return list(result[0]) if result else []

    def server_rrf(self, query_sparse: Mapping[int, float], vector: np.ndarray, filters: Filters, tenant: Any,
                   window: int, k: int = 60) -> list[tuple[str, float]]:
        """Milvus's server-side ``hybrid_search`` with ``RRFRanker(k)`` over the sparse and the dense search
        (each ``window`` long, same expression): ``(chunk id, RRF score)`` in Milvus's order."""
        from pymilvus import AnnSearchRequest, RRFRanker

        if not (self.features.hybrid and self.schema.sparse):
            raise MilvusUnavailable(f"Milvus {self.features.version} has no hybrid search over sparse vectors (2.4+)")
        expr = self.schema.expression(filters, tenant)
        requests = [
            AnnSearchRequest([dict(query_sparse)], "sparse", {"metric_type": "IP", "params": {}}, limit=window,
                             expr=expr),
            AnnSearchRequest([np.asarray(vector, dtype=np.float32).tolist()], "dense",
                             {"metric_type": "COSINE", "params": {"ef": max(self.ef_search, window)}},
                             limit=window, expr=expr),
        ]
        result = self.client.hybrid_search(self.name, requests, RRFRanker(k), limit=2 * window,
                                           output_fields=["id"], timeout=self.timeout)
        return [(str(h["id"]), float(h["distance"])) for h in result[0]]


@dataclass(frozen=True)
class MilvusSyncReport(SyncReport):
    """:class:`SyncReport` plus the rows whose only change was their tenant's BM25 statistics."""

    reweighted: int = 0


# -- the lexical side ------------------------------------------------------------------------------------
class MilvusLexical:
    """:class:`retrieval.backends.lexical.Lexical` over the collection's sparse vectors (``search``, ``size``,
    ``document_frequencies``).

    Ranking, scores and ``terms`` equal the local engine's (see the module docstring). When Milvus does not
    answer at request time, the tenant's chunks are indexed in process (once, the same BM25) and the list says
    so in its note, so the request carries on (the dense side then fails and the tier is ``lexical_only``).
    """

    #: Candidates asked from Milvus beyond the window, rescored exactly (float32 ranking, hash collisions).
    MARGIN = 2.0

    def __init__(self, store: MilvusStore, chunks: Sequence[Chunk], tenant_field: str,
                 stats: dict[Any, TenantStats], fallback_engine: str = "bm25s") -> None:
        self.store, self.tenant_field, self.stats = store, tenant_field, stats
        self.engine = "milvus-sparse"
        self.chunk_by_id = {c.chunk_id: c for c in chunks}
        self._chunks = chunks
        self._fallback_engine = fallback_engine
        self._fallback: dict[Any, LexicalIndex] = {}
        self._lock = threading.Lock()
        self.last_note: str | None = None

    def size(self, tenant: object = None) -> int:
        s = self.stats.get(tenant)
        return s.n if s else 0

    def document_frequencies(self, tenant: object = None) -> tuple[int, Callable[[str], int]]:
        """``(chunks, token → chunks holding it)`` of ``tenant``'s statistics
        (:class:`retrieval.backends.lexical.Lexical`)."""
        s = self.stats.get(tenant)
        return (s.n, CountFrequencies(s.df)) if s else (0, CountFrequencies({}))

    def query_vector(self, tokens: Sequence[str], tenant: Any) -> dict[int, float]:
        """The query side: Lucene IDF over the tenant's chunks of each unique token the tenant holds."""
        s = self.stats.get(tenant)
        if s is None:
            return {}
        weights = {t: lucene_idf(s.n, s.df[t]) for t in dict.fromkeys(tokens) if s.df.get(t)}
        return sparse_vector(weights)

    def contributions(self, chunk: Chunk, query: Sequence[str], tenant: Any) -> dict[str, float]:
        """Per query token, its BM25 term in ``chunk`` (float64, the local engine's formula)."""
        s = self.stats[tenant]
        tokens = tokenize(chunk.indexed_text)
        weights = doc_weights(tokens, s.avgdl)
        return {t: lucene_idf(s.n, s.df[t]) * weights[t] for t in query if t in weights}

    def search(self, query_text: str, filters: Filters, window: int) -> RankedList:
        tenants = filters.get(self.tenant_field)
        keys = list(tenants) if tenants else list(self.stats)
        query = list(dict.fromkeys(tokenize(query_text)))
        found: list[tuple[float, str, ScoredItem]] = []
        note = None
        if query and window > 0:
            limit = int(window * self.MARGIN) + 10
            for tenant in keys:
                vector = self.query_vector(query, tenant)
                if not vector:
                    continue
                try:
                    hits = self.store.sparse_search(vector, filters, tenant, limit)
                except BaseException as exc:  # noqa: BLE001 - carried on in process, and said so (a panic too)
                    if isinstance(exc, INTERRUPTS):
                        raise
                    note = (f"Milvus lexical search failed ({exc.__class__.__name__}: {str(exc)[:120]}); "
                            "in-process BM25 of the same chunks used")
                    log.warning(note)
                    for item in self._local(tenant).search(query_text, filters, window).items:
                        found.append((item.score, item.chunk_id, item))
                    continue
                for cid, _ in hits:
                    chunk = self.chunk_by_id.get(cid)
                    if chunk is None or not filters.matches(chunk.metadata) \
                            or chunk.metadata.get(self.tenant_field) != tenant:
                        continue
                    terms = self.contributions(chunk, query, tenant)
                    if terms:
                        score = sum(terms.values())
                        found.append((score, cid, ScoredItem(cid, chunk.parent_id, 0, score, terms=terms)))
        found.sort(key=lambda f: (-f[0], f[1]))
        items = tuple(ScoredItem(i.chunk_id, i.parent_id, rank, i.score, terms=i.terms)
                      for rank, (_, _, i) in enumerate(found[:window], start=1))
        self.last_note = note
        return RankedList("lexical", "bm25", items, note=note)

    def _local(self, tenant: Any) -> LexicalIndex:
        with self._lock:
            if tenant not in self._fallback:
                own = [c for c in self._chunks if c.metadata.get(self.tenant_field) == tenant]
                self._fallback[tenant] = LexicalIndex(own, self.tenant_field, self._fallback_engine)
            return self._fallback[tenant]


class InProcessLexical(LexicalIndex):
    """The local engine's BM25 in the app process, for a Milvus server without sparse vectors (before 2.4):
    the same lists as the local backend; :attr:`label` (the trace's ``models.bm25_engine``) says why."""

    def __init__(self, chunks: Sequence[Chunk], tenant_field: str, engine: str, reason: str) -> None:
        super().__init__(chunks, tenant_field, engine)
        self.reason = reason
        self.label = f"{engine} in the app process ({reason})"


# -- the factory ------------------------------------------------------------------------------------------
def open_backend(settings: Any, chunks: Sequence[Chunk], embedder: Any, corpus_key: str, variant: str,
                 progress: bool = True, on_progress: Callable[[int, int], None] | None = None,
                 client: Any = None) -> tuple[Any, MilvusStore | None, Reason, SyncReport | None]:
    """Build the lexical index and the vector store of a corpus on Milvus.

    Returns ``(lexical, store, reason, sync_report)`` as ``Workbench.load_corpus`` uses them. When Milvus
    cannot be opened or the ingest fails (or there is no embedder), the lexical side is the in-process
    :class:`LexicalIndex` and ``store`` is ``None`` with the reason (the ``lexical_only`` tier); the collection
    keeps what it held before. A server without sparse vectors keeps the dense side and the filters, and the
    lexical side is :class:`InProcessLexical` (its reason in the trace).
    """
    local = lambda: LexicalIndex(chunks, settings.tenant_field, settings.bm25_engine)  # noqa: E731
    if embedder is None:
        return local(), None, NO_EMBEDDER(why=raw("no embedder")), None
    token = settings.milvus_token.get_secret_value() if settings.milvus_token else None
    try:
        client = client or open_client(settings.milvus_uri, token, settings.milvus_timeout)
        features = server_features(client, settings.milvus_uri, settings.milvus_timeout)
    except MilvusUnavailable as exc:
        log.warning(str(exc))
        return local(), None, UNAVAILABLE(error=raw(str(exc))), None
    stats = (tenant_stats if features.sparse else tenant_names)(chunks, settings.tenant_field)
    store = MilvusStore(client, corpus_key, vectors_name(embedder), variant, tenant_field=settings.tenant_field,
                        types=field_types(chunks), ef_search=settings.hnsw_ef_search,
                        timeout=settings.milvus_timeout, server=is_server_uri(settings.milvus_uri),
                        passage_template=settings.passage_template, features=features)
    try:
        with chunk_encoding(embedder, chunks, settings.reader_states_at_index) as encode:
            report = store.sync(chunks, embedder.embed_passages, getattr(embedder, "batch", 32), progress,
                                on_progress, stats=stats, encode_chunks=encode)
    except BaseException as exc:  # noqa: BLE001 - recorded; the tier drops to lexical_only (a native panic too)
        if isinstance(exc, INTERRUPTS):
            raise
        reason = SYNC_FAILED(error=raw(f"{exc.__class__.__name__}: {str(exc)[:200]}"))
        log.warning(reason.text())
        return local(), None, reason, None
    if not features.sparse:
        log.info(features.lexical_reason)
        return (InProcessLexical(chunks, settings.tenant_field, settings.bm25_engine, features.lexical_reason),
                store, OK(), report)
    return MilvusLexical(store, chunks, settings.tenant_field, stats, settings.bm25_engine), store, OK(), report


def collection_for(settings: Any, corpus_path: Path, model_name: str | None = None) -> tuple[Any, MilvusStore]:
    """The client and the :class:`MilvusStore` (not synced) of a corpus under ``settings`` (for ``index
    --status`` / ``--drop``): the corpus is read and chunked, since the collection name depends on its fields.

    Raises:
        MilvusUnavailable: the server is unreachable or too old.
        CorpusError: the corpus cannot be read.
    """

    chunks = chunk_documents(load_corpus(corpus_path), settings.chunk_tokens, settings.chunk_overlap,
                             settings.contextual)
    token = settings.milvus_token.get_secret_value() if settings.milvus_token else None
    client = open_client(settings.milvus_uri, token, settings.milvus_timeout)
    store = MilvusStore(client, str(corpus_path), model_name or settings_embedding(settings),
                        index_variant(settings.chunk_tokens, settings.chunk_overlap, settings.contextual,
                                      settings.passage_template),
                        tenant_field=settings.tenant_field, types=field_types(chunks),
                        timeout=settings.milvus_timeout, server=is_server_uri(settings.milvus_uri),
                        features=server_features(client, settings.milvus_uri, settings.milvus_timeout))
    return client, store


def _open(req: OpenRequest) -> Opened:
    with req.write_lock():
        lexical, store, reason, report = open_backend(req.settings, req.chunks, req.embedder, req.corpus_key,
                                                      req.variant, req.progress, req.on_progress)
    if req.embedder is None:
        reason = NO_EMBEDDER(why=req.embedder_reason)
    return Opened(lexical, store, reason, report)


def status(settings: Any, path: Path, drop: bool) -> str:
    """``index --status`` / ``--drop`` on the Milvus backend.

    Raises:
        CorpusError: the corpus cannot be read. StoreStatusError: Milvus is unreachable or fails (one line).
    """
    try:
        _, store = collection_for(settings, path)
        exists = store.client.has_collection(store.name)
        if drop:
            store.drop()
            return f"dropped {store.name}" if exists else f"no index for {path}"
        if not exists:
            return f"{path}: not indexed (collection {store.name} absent)"
        return redact_text(f"{path}: {store.count()} chunks in {store.name}, model {settings.embedding_model}, "
                           f"store milvus {settings.milvus_uri}", settings.secrets())
    except MilvusUnavailable as exc:
        raise StoreStatusError(redact_text(str(exc), settings.secrets())) from None
    except RetrievalError:
        raise
    except BaseException as exc:  # noqa: BLE001 - one line, never a traceback (a native panic too)
        if isinstance(exc, INTERRUPTS):
            raise
        raise StoreStatusError(redact_text(f"Milvus at {settings.milvus_uri}: {exc.__class__.__name__}: "
                                           f"{str(exc)[:200]}", settings.secrets())) from None


LITE_ONE_PROCESS = declare("milvus.lite_one_process",
                           en="RETRIEVAL_MILVUS_URI={uri} is a Milvus Lite file, which one process at a time may open: "
                              "use --workers 1, or a Milvus server URI (http://host:19530) for several workers",
                           pt="RETRIEVAL_MILVUS_URI={uri} é um arquivo do Milvus Lite, que só um processo por vez pode "
                              "abrir: use --workers 1, ou a URI de um servidor Milvus (http://host:19530) para vários "
                              "processos")

MILVUS = BACKENDS.declare(Backend(
    name="milvus", label=Text("Milvus (both indexes)", "Milvus (os dois índices)"), open=_open,
    store_label=lambda s: "milvus", engine_label=lambda s: "milvus sparse (our BM25)", status=status,
    processes=lambda s: None if "://" in s.milvus_uri else LITE_ONE_PROCESS(uri=s.milvus_uri)))
