"""Query transformations, each off by default, each recorded with the original query and checked for the
invariants that carry a support question's meaning.

Techniques (``--transform NAME``; ``Settings.transforms``):

* ``rewrite``: abbreviations and spelling from a per-corpus glossary (``glossary.json`` beside the corpus,
  or ``RETRIEVAL_GLOSSARY_PATH``); by an LLM when one is configured.
* ``multi_query``: several interpretations (glossary expansion, keywords only, the rewrite; or the LLM's),
  each with its own candidate lists, all fused by RRF.
* ``hyde``: a hypothetical passage (Gao et al., 2022) embedded for one extra dense list; it is marked
  ``hypothesis_only`` and never enters the context, the answer or the citations.
* ``decompose``: compare and list questions split into sub-questions.
* ``multi_hop``: codes found in the first results but absent from the question are searched in further
  hops (hop limit, early stop when no new code appears).
* ``self_query``: metadata filters drawn from the question (a year, a document type, any other string
  value of the corpus' metadata); they narrow the request, never widen it, and never touch the tenant.

Invariants: product and error codes (``PX-7`` stays ``PX-7``), negations (não, nunca, nem, sem, apesar de/do)
and conditions (exceto, salvo, a menos que, desde que, caso, quando). A transform that loses one lists it in
its query's ``flags`` and, by default, that path falls back to the original query.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..core.defaults import LLM_TIMEOUT_S
from ..core.codes import _CODE_RE, invariant_flags
from ..core.errors import InvalidGlossary
from ..core.inputs import check_json_depth
from ..core.kinds import Registry, Text
from ..core.llm import ChatClient, LLMFailure
from ..core.text import fold, tokenize
from ..core.types import Query


@dataclass(frozen=True)
class Glossary:
    """Per-corpus glossary: ``{"abbreviations": {"pgto": "pagamento"}, "spelling": {"ativacao": "ativação"},
    "synonyms": {"reembolso": ["estorno", "devolução do valor"]}}``."""

    abbreviations: Mapping[str, str]
    spelling: Mapping[str, str]
    synonyms: Mapping[str, Sequence[str]]

    @classmethod
    def load(cls, path: Path | None) -> "Glossary":
        """Read a glossary JSON file; a missing path gives an empty glossary.

        Raises:
            InvalidGlossary (a ``ValueError``): the file exists but cannot be read, is not JSON, is not an
                object, or a section has the wrong shape (``abbreviations`` / ``spelling``: word → text;
                ``synonyms``: word → list of texts); one line naming the file.
        """
        if path is None or not Path(path).is_file():
            return cls({}, {}, {})
        try:
            text = Path(path).read_text(encoding="utf-8")
            check_json_depth(text, path, error=InvalidGlossary)
            data = json.loads(text)
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidGlossary(f"{path}: cannot read the glossary ({exc.__class__.__name__})") from None
        except json.JSONDecodeError as exc:
            raise InvalidGlossary(f"{path}: invalid glossary JSON ({exc.msg} at line {exc.lineno}, "
                                  f"column {exc.colno})") from None
        if not isinstance(data, dict):
            raise InvalidGlossary(f"{path}: a glossary is a JSON object with 'abbreviations', 'spelling' and "
                                  f"'synonyms', not a {type(data).__name__}")
        unknown = sorted(set(data) - {"abbreviations", "spelling", "synonyms"})
        if unknown:
            raise InvalidGlossary(f"{path}: unknown glossary section(s) {', '.join(map(repr, unknown))} "
                                  "(use abbreviations, spelling, synonyms)")

        def section(name: str, lists: bool) -> dict[str, Any]:
            value = data.get(name) or {}
            if not isinstance(value, dict):
                raise InvalidGlossary(f"{path}: glossary '{name}' must be an object, not a {type(value).__name__}")
            out: dict[str, Any] = {}
            for word, entry in value.items():
                if not word.strip():
                    raise InvalidGlossary(f"{path}: glossary '{name}' has an empty word")
                if lists:
                    if not isinstance(entry, list) or not all(isinstance(x, str) and x.strip() for x in entry):
                        raise InvalidGlossary(f"{path}: glossary synonyms of {word!r} must be a list of texts, "
                                              f"not {json.dumps(entry, ensure_ascii=False)[:60]}")
                    out[fold(word)] = list(entry)
                else:
                    if not isinstance(entry, str) or not entry.strip():
                        raise InvalidGlossary(f"{path}: glossary '{name}' entry {word!r} must be a non-empty text")
                    out[fold(word)] = entry
            return out

        return cls(section("abbreviations", False), section("spelling", False), section("synonyms", True))


def _replace_words(text: str, table: Mapping[str, str]) -> str:
    if not table:
        return text

    def sub(match: re.Match) -> str:
        return table.get(fold(match.group(0)), match.group(0))

    # Hyphenated words are words (never split or treated as operators); codes are never keys here.
    return re.sub(r"(?<![\w-])[\w][\w-]*(?![\w-])", sub, text)


def local_rewrite(question: str, glossary: Glossary) -> str:
    """Expand abbreviations and fix spelling by whole-word glossary lookup; everything else is kept."""
    return _replace_words(question, {**glossary.spelling, **glossary.abbreviations})


def local_multi_query(question: str, glossary: Glossary) -> list[str]:
    """Interpretations without an LLM: the rewrite, the rewrite with glossary synonyms appended, and the
    content words alone (codes, negations and conditions kept since the tokenizer keeps them)."""
    rewrite = local_rewrite(question, glossary)
    found = [syn for word, syns in glossary.synonyms.items() if word in set(tokenize(rewrite)) for syn in syns]
    variants = [rewrite, f"{rewrite} ({', '.join(found)})" if found else "",
                " ".join(dict.fromkeys(_content_words(question)))]
    return [v for v in dict.fromkeys(variants) if v and v.strip() != question.strip()]


def _content_words(question: str) -> list[str]:
    keep = {fold(t) for t in tokenize(question)}
    return [w for w in re.findall(r"[\w][\w-]*", question) if fold(w) in keep]


HYDE_TEMPLATE = ("[HIPÓTESE DE BUSCA — texto gerado por modelo local, não é evidência] Artigo de suporte que "
                 "responde: {question} Este artigo explica o procedimento, os prazos, as condições e as exceções "
                 "relacionados a {topic}.")


def local_hyde(question: str) -> str:
    """A template passage that says it is a hypothesis (no LLM configured)."""
    topic = " ".join(_content_words(question)[:8]) or question
    return HYDE_TEMPLATE.format(question=question.strip(), topic=topic)


_SPLIT_RE = re.compile(r"\s*(?:;|\?\s+(?=\S))\s*|\s+e\s+(?=(?:qual|quais|quanto|quantos|quantas|como|quando|onde|"
                       r"o que|por que|porque|se)\b)", re.IGNORECASE)
_COMPARE_RE = re.compile(r"^(?P<head>.*?)\b(?:entre|comparando)\s+(?P<a>.+?)\s+e\s+(?P<b>.+?)(?P<tail>[?.!]*)$",
                         re.IGNORECASE)


def decompose(question: str) -> list[str]:
    """Split a compare or list question into sub-questions (empty when it is a single question).

    ``"Qual o prazo do PX-7 e qual o prazo do reembolso?"`` → two questions;
    ``"Qual a diferença entre o PX-7 e o PX-17?"`` → one per compared item.
    """
    parts = [p.strip(" ?") for p in _SPLIT_RE.split(question.strip()) if p and p.strip(" ?")]
    if len(parts) > 1:
        return [p + "?" for p in parts]
    match = _COMPARE_RE.match(question.strip())
    if match:
        head = match.group("head").strip()
        return [f"{head} {match.group(x).strip()}?".strip() for x in ("a", "b")]
    return []


#: Where a transform acts in a request: it narrows the filters before the generators (``filters``), adds variant
#: queries with their own generator lists before the fusion (``variants``), or searches again after the fusion
#: and inserts what it finds (``hops``).
STAGES = ("filters", "variants", "hops")


@dataclass(frozen=True)
class Transform:
    """The declaration of a query transform: everything settings, the pipeline, the fusion's weight names, the
    app's picker, the trace's notes and the evaluation read about it.

    Attributes:
        name: the name in settings (``RETRIEVAL_TRANSFORMS``, ``--transform``), the query's ``kind`` in the trace
            and the suffix of its rankers (``bm25:rewrite``).
        label: its name for people, in each language (the app's picker).
        doc: one line on what it does, in each language (the picker's help, the settings reference).
        stage: one of :data:`STAGES`.
        local: ``(question, glossary) → query texts`` written without an LLM (variants only); an empty list
            searches nothing more.
        prompt: the instruction an LLM gets when one is configured (``None``: the local texts always).
        several: the LLM's reply holds one query a line.
        hypothesis_only: the text is a hypothetical passage (HyDE): it searches the dense side only, embedded as
            a passage, and never reaches the context, the answer or the citations.
        splits: the texts are parts of the question (decomposition): each part is fused on its own, the parts
            are interleaved, the other variants are not searched, and the invariants hold over all parts together.
        ranker: the pattern of its rankers' suffix after ``bm25:`` / ``dense:`` (a fusion weight may name
            them); ``None`` gives ``name`` or ``name#n``; a transform with no lists of its own has none (``""``).
        evaluation: ``(configuration name, settings overrides)`` when the evaluation offers it as one
            configuration; ``None`` otherwise.
    """

    name: str
    label: Text
    doc: Text
    stage: str
    local: Callable[[str, "Glossary"], list[str]] | None = None
    prompt: str | None = None
    several: bool = False
    hypothesis_only: bool = False
    splits: bool = False
    ranker: str | None = None
    evaluation: tuple[str, Mapping[str, Any]] | None = None

    def __post_init__(self) -> None:
        if self.stage not in STAGES:
            raise ValueError(f"transform '{self.name}': stage must be one of {', '.join(STAGES)}, got {self.stage!r}")
        if self.stage == "variants" and self.local is None:
            raise ValueError(f"transform '{self.name}': a variants transform needs its local texts")

    @property
    def ranker_pattern(self) -> str:
        """The regular expression of this transform's ranker suffixes (``rewrite``, ``multi_query#2``)."""
        if self.ranker is not None:
            return self.ranker
        return "" if self.stage == "filters" else rf"{re.escape(self.name)}(?:#[1-9][0-9]*)?"


#: The declared query transforms, in the order the app offers them.
TRANSFORMS: Registry[Transform] = Registry("transform")

TRANSFORMS.declare(Transform(
    "rewrite", Text("rewrite", "reescrita"),
    Text("abbreviations and spelling from the corpus' glossary (or the LLM)",
         "abreviações e grafia pelo glossário do corpus (ou pelo LLM)"),
    "variants", local=lambda question, glossary: [local_rewrite(question, glossary)],
    prompt="Reescreva a pergunta de suporte expandindo abreviações e corrigindo a grafia. Mantenha códigos, "
           "negações e condições exatamente. Responda só com a pergunta reescrita."))
TRANSFORMS.declare(Transform(
    "multi_query", Text("multi-query", "múltiplas consultas"),
    Text("several interpretations, each with its own lists", "várias interpretações, cada uma com suas listas"),
    "variants", local=lambda question, glossary: local_multi_query(question, glossary), several=True,
    prompt="Escreva 3 interpretações diferentes da pergunta de suporte, uma por linha, mantendo códigos, negações "
           "e condições. Sem numeração."))
TRANSFORMS.declare(Transform(
    "hyde", Text("HyDE", "HyDE"),
    Text("a hypothetical passage for the dense side (search hint only, never evidence)",
         "uma passagem hipotética para o lado denso (só pista de busca, nunca evidência)"),
    "variants", local=lambda question, glossary: [local_hyde(question)], hypothesis_only=True,
    prompt="Escreva um parágrafo curto de artigo de suporte que responderia à pergunta."))
TRANSFORMS.declare(Transform(
    "decompose", Text("decompose", "decomposição"),
    Text("compare and list questions split into sub-questions", "perguntas de comparação e lista em subperguntas"),
    "variants", local=lambda question, glossary: decompose(question), splits=True))
TRANSFORMS.declare(Transform(
    "multi_hop", Text("multi-hop", "múltiplos saltos"),
    Text("codes found in the first results searched in further hops",
         "códigos achados nos primeiros resultados buscados em novos saltos"),
    "hops", ranker=r"hop[1-9][0-9]*(?::.+)?"))
TRANSFORMS.declare(Transform(
    "self_query", Text("self-query", "autoconsulta"),
    Text("filters from the question (never widens the tenant)", "filtros tirados da pergunta (nunca amplia o inquilino)"),
    "filters"))


def transform_names(stage: str | None = None) -> tuple[str, ...]:
    """The declared transforms' names (of one stage when given), read from the registry each time."""
    return tuple(t.name for t in TRANSFORMS if stage is None or t.stage == stage)


def self_query_filters(question: str, values: Mapping[str, Sequence[Any]], tenant_field: str) -> dict[str, list[Any]]:
    """Filters named by the question: a year among the corpus' ``year`` values, and any string metadata value
    written in the question as a whole word (``manual``, ``faq``). The tenant field is never touched.
    """
    folded = fold(question)
    found: dict[str, list[Any]] = {}
    for field, options in values.items():
        if field == tenant_field:
            continue
        for value in options:
            if isinstance(value, bool):
                continue
            if isinstance(value, int) and re.search(rf"(?<!\d){value}(?!\d)", question) and 1900 < value < 2200:
                found.setdefault(field, []).append(value)
            elif isinstance(value, str) and len(value) > 2 and not _CODE_RE.fullmatch(value) and re.search(
                    rf"(?<![\w-]){re.escape(fold(value))}(?![\w-])", folded):
                found.setdefault(field, []).append(value)
    return found


def checked(original: str, text: str, kind: str, fallback: bool, hypothesis_only: bool = False) -> Query:
    """A transformed query with its invariant flags; with ``fallback`` a lossy one searches the original."""
    flags = () if hypothesis_only else invariant_flags(original, text)
    if flags and fallback:
        return Query(original, kind, hypothesis_only, flags + ("fallback:original",))
    return Query(text, kind, hypothesis_only, flags)


class LLMTransformer:
    """The transforms that declare a ``prompt`` (rewrite, multi-query, HyDE) through an OpenAI-compatible chat
    endpoint (when configured), each call
    through :class:`retrieval.core.llm.ChatClient` (a total deadline; an empty, oversized or malformed reply, or one
    holding the API key, is refused); ``costs`` adds up every call, refused ones included."""

    def __init__(self, base_url: str, model: str, api_key: str | None, timeout_s: float = LLM_TIMEOUT_S,
                 max_reply_chars: int = 20_000, allow_hosts: str | Sequence[str] = ()) -> None:
        self.model = model
        self._chat = ChatClient(base_url, model, api_key, timeout_s, max_reply_chars, allow_hosts)
        self.costs: dict[str, int | None] = {"llm_calls": 0, "input_tokens": 0, "output_tokens": 0}

    @classmethod
    def from_settings(cls, settings: Any) -> "LLMTransformer":
        """The transformer of ``RETRIEVAL_LLM_*`` (base URL, model, key, timeout, reply bound)."""
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        return cls(settings.llm_base_url, settings.llm_model, key, settings.llm_timeout,
                   settings.llm_max_reply_chars, settings.llm_allow_hosts)

    def run(self, technique: str, question: str) -> str:
        """The LLM's text for ``technique`` (checked, non-empty).

        Raises:
            LLMFailure: deadline, unreachable server, HTTP error, or a refused reply (the call still counts
                in ``costs``).
        """
        try:
            prompt = TRANSFORMS.get(technique).prompt
            if prompt is None:
                raise ValueError(f"transform '{technique}' has no LLM prompt")
            reply = self._chat.complete(prompt, question)
        except LLMFailure as exc:
            self._count(exc.input_tokens, exc.output_tokens)
            raise
        self._count(reply.input_tokens, reply.output_tokens)
        return reply.text

    def _count(self, input_tokens: int | None, output_tokens: int | None) -> None:
        self.costs["llm_calls"] = (self.costs["llm_calls"] or 0) + 1
        for key, value in (("input_tokens", input_tokens), ("output_tokens", output_tokens)):
            total = self.costs[key]
            self.costs[key] = None if value is None or total is None else total + value


