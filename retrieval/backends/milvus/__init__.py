"""The Milvus backend (``RETRIEVAL_BACKEND=milvus``): the lexical and the dense index of a corpus in one Milvus
collection, embedded (Milvus Lite, ``RETRIEVAL_MILVUS_URI`` a file path) or on a Milvus server or cluster
(``RETRIEVAL_MILVUS_URI=http://host:19530``, ``RETRIEVAL_MILVUS_TOKEN``). One job per module:

* :mod:`.client`: the connection (:func:`open_client`) and what the server supports, from its version
  (:func:`server_features`). Before 2.4 a server has no sparse vectors: the lexical side then runs in the app
  process while the dense side and the filters stay in Milvus; metadata filters go through the JSON field (no
  nullable typed fields before 2.5) and a changed row is deleted and inserted again (2.3's upsert put rows in the
  wrong partition-key partition). A server older than 2.3, or one that does not answer, is refused in one line.
* :mod:`.bm25`: **our** BM25 as sparse vectors, the local engine's scores exactly:

  - document side, per token ``t`` of our tokenizer (:func:`retrieval.core.text.tokenize`):
    ``w(t, d) = tf · (k1 + 1) / (tf + k1 · (1 − b + b · |d| / avgdl))`` with the tenant's ``avgdl``;
  - query side, per unique query token: Lucene's IDF over the tenant's chunks only;
  - inner product: ``Σ idf(t) · w(t, d)``.

* :mod:`.schema`: the collection's layout (one per corpus, model, chunking and row layout) and its rows.
* :mod:`.expressions`: typed :class:`~retrieval.core.filters.Filters` as Milvus expressions, values as literals.
* :mod:`.collection`: the rows of a corpus, synced and searched (:class:`MilvusStore`, the dense side).
* :mod:`.lexical`: the lexical side (:class:`MilvusLexical`, or :class:`InProcessLexical` before 2.4).
* :mod:`.backend`: opening a corpus on Milvus and the :data:`MILVUS` declaration in
  :data:`retrieval.backends.base.BACKENDS`.
"""

from .backend import LITE_ONE_PROCESS, MILVUS, collection_for, open_backend, status
from .bm25 import TenantStats, doc_weights, sparse_vector, tenant_names, tenant_stats, term_id
from .client import LITE, MIN_SERVER, MilvusUnavailable, ServerFeatures, is_server_uri, open_client, server_features
from .collection import MilvusStore, MilvusSyncReport
from .expressions import literal, tenant_key
from .lexical import InProcessLexical, MilvusLexical
from .schema import FORMAT, Schema, collection_name

__all__ = [
    "FORMAT", "LITE", "LITE_ONE_PROCESS", "MILVUS", "MIN_SERVER", "InProcessLexical", "MilvusLexical", "MilvusStore",
    "MilvusSyncReport", "MilvusUnavailable", "Schema", "ServerFeatures", "TenantStats", "collection_for",
    "collection_name", "doc_weights", "is_server_uri", "literal", "open_backend", "open_client", "server_features",
    "sparse_vector", "status", "tenant_key", "tenant_names", "tenant_stats", "term_id",
]
