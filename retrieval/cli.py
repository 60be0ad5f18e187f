"""Command line: ``python -m retrieval index | ask | eval | tune | bench | train | serve | models pull``
(docs/cli.md).

Errors print one line on stderr and exit with code 2. With ``--json``, stdout holds the JSON and nothing
else: progress, logs and span exporters write to stderr.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import time
import unicodedata
from pathlib import Path
from typing import Any, NoReturn, Optional

import typer
from pydantic import ValidationError

from .core.errors import RetrievalError
from .core.redact import install_log_redaction, redact_text
from .core.inputs import check_json_depth, check_regular_file
from .ingest.location import location_label

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Hybrid retrieval workbench.")

CorpusOpt = typer.Option(None, "--corpus", help="Corpus: JSONL, folder, BEIR folder or SQuAD JSON (default: lab).")
SetOpt = typer.Option([], "--set", help="Any setting, lower case without prefix: --set rrf_k=30 (repeatable).")
TransformOpt = typer.Option([], "--transform", help="rewrite | multi_query | hyde | decompose | multi_hop | "
                            "self_query (repeatable).")
MmrOpt = typer.Option(None, "--mmr", help="MMR λ in [0, 1] over the final candidates (1 = relevance order).")


def _one_line(text: str) -> str:
    return _printable(" ".join(str(text).split())) or "unknown error"


def _printable(text: object) -> str:
    """``text`` with every control, format, line-separator or surrogate character but a newline and a tab
    written as an escape (``\\x1b``, ``\\u2028``): an id or a document's text cannot move the cursor, recolour
    the terminal or forge a line of output."""
    out = []
    for ch in str(text):
        if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            out.append(ch)
        else:
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
    return "".join(out)


def _echo(text: object = "") -> None:
    """A line of a command's human-readable output (:func:`_printable`)."""
    typer.echo(_printable(text))


#: The secrets of the settings this command loaded: no error line nor log line holds one.
_SECRETS: list[str] = []


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {_one_line(redact_text(message, _SECRETS))}", err=True)
    raise typer.Exit(2)


def _settings(sets: list[str], **extra: Any):
    from .settings import describe_validation_error, load_settings

    overrides: dict[str, Any] = {}
    for item in sets:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            _fail(f"--set expects name=value, got '{item}'")
        overrides[name.strip().lower()] = value
    overrides.update({k: v for k, v in extra.items() if v is not None})
    try:
        base = load_settings()
        loaded = base.with_overrides(**overrides) if overrides else base
        _SECRETS[:] = loaded.secrets()
        install_log_redaction(_SECRETS)
        return loaded
    except ValidationError as exc:  # not expected (with_overrides and load_settings translate), kept as a net
        _fail(describe_validation_error(exc, overrides))
    except (RetrievalError, ValueError) as exc:
        _fail(str(exc))


def _filters(items: list[str]) -> list[tuple[str, str]]:
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            _fail(f"--filter expects key=value, got '{item}'")
        pairs.append((key.strip(), value))
    return pairs


def _setup_logging() -> None:
    """Log lines on stderr, every one redacted (:func:`retrieval.core.redact.install_log_redaction`; the
    settings' secrets are added when a command loads its settings)."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    install_log_redaction(_SECRETS)


def _tuned(settings, corpus: Optional[Path]):
    """``(settings, note)``: the corpus' adopted configuration (``tune --adopt``) applied under the command's own
    choices (a ``--set`` or an option wins), and the trace note that says so (``None`` when none is stored)."""
    from .offline import tuned
    from .settings import load_settings

    try:
        return tuned.apply_adopted(settings, load_settings(), tuned.load_adopted(settings, corpus))
    except (RetrievalError, ValueError) as exc:
        _fail(str(exc))


def _open(settings, corpus: Optional[Path]):
    """A Workbench on ``corpus``; its reader states are `index`'s work (a question reads what is stored and
    encodes the rest)."""
    from .pipeline.workbench import open_workbench

    return open_workbench(settings, corpus)


def _collection(settings, owner: str, add: list[Path], remove: list[str]) -> Optional[tuple[Path, Any]]:
    """Add ``add`` to and remove ``remove`` from ``owner``'s uploaded collection, a line per file on stderr and
    each refusal in one line; returns the collection's folder and the Workbench that indexed it (``None``: the
    collection is empty now)."""
    from .ingest.collection import is_collection
    from .learned.reader.loader import forget_passages
    from .pipeline.workbench import Workbench
    from .serving import uploads

    folder = uploads.collection_for(settings, owner).root
    bench = Workbench(settings)

    def index(path: Path, on_progress: Any) -> Any:
        return bench.load_corpus(path, on_progress=on_progress)

    def waiting(holder: Any) -> None:
        typer.echo(f"waiting for process {holder.get('pid', '?')} ({holder.get('what', '')})", err=True)

    def on_file(name: str, stage: str, done: int, total: int) -> None:
        if stage in ("read", "indexed"):
            typer.echo(_printable(f"{name}: {stage}" + (f", {done} chunks" if stage == "indexed" else "")), err=True)

    uploaded = []
    for path in add:
        try:
            uploaded.append((path.name, path.read_bytes()))
        except OSError as exc:
            _fail(f"{path}: cannot be read ({exc.strerror or exc})")
    if remove:
        def drop() -> None:
            if bench.state is not None and bench.state.store is not None:
                bench.state.store.drop()

        if is_collection(folder) and uploads.entries(settings, owner) and bench.state is None:
            bench.load_corpus(folder)  # the index its vectors are dropped from when nothing is left
        gone = uploads.remove_documents(settings, owner, remove, index, drop, forget_passages, on_wait=waiting)
        missing = sorted(set(remove) - {e.doc_id for e in gone.entries})
        for doc_id in missing:
            _echo(f"{doc_id}: not in the collection")
        _echo(f"removed {len(gone.entries)} document{'s' if len(gone.entries) != 1 else ''} from {folder}")
    if uploaded:
        changed = uploads.add_uploads(settings, owner, uploaded, index, on_file=on_file, on_wait=waiting)
        for refusal in changed.refused:
            typer.echo(_printable(f"refused: {refusal.line()}"), err=True)
        _echo(f"added {len(changed.entries)} document{'s' if len(changed.entries) != 1 else ''} to {folder} in "
              f"{changed.seconds:.1f} s")
        if not changed.entries and changed.refused:
            raise typer.Exit(1)
    if not uploads.entries(settings, owner):
        _echo(f"the collection of {owner!r} is empty ({folder})")
        return None
    return folder, bench


def _states_progress():
    """A progress line on stderr while the reader reads the corpus: done, total, rate and ETA (every 2 s)."""
    last = [0.0, -1]   # when the last line was printed, and its count

    def show(done: int, total: int, eta_s: float) -> None:
        now = time.monotonic()
        if total and done != last[1] and (now - last[0] >= 2 or done == total):
            last[0], last[1] = now, done
            eta = f", about {eta_s:.0f} s left" if eta_s == eta_s and done < total else ""
            typer.echo(f"reader states: {done}/{total} passages{eta}", err=True)

    return show


@app.command()
def index(
    corpus: Optional[Path] = CorpusOpt,
    status: bool = typer.Option(False, "--status", help="Report the index without changing it."),
    drop: bool = typer.Option(False, "--drop", help="Remove this corpus' vector collection."),
    contextual: bool = typer.Option(False, "--contextual", help="Index a context line with each chunk "
                                    "(use RETRIEVAL_CONTEXTUAL=true for ask/app to read that index)."),
    sets: list[str] = SetOpt,
    json_: bool = typer.Option(False, "--json", help="Print one JSON object: what was read and skipped (every "
                               "file), the chunks and the vectors."),
    add: list[Path] = typer.Option([], "--add", help="Add this file (any format the folder reader reads, or a .zip "
                                   "of them) to the collection --collection names, as the app's uploader does "
                                   "(repeatable)."),
    remove: list[str] = typer.Option([], "--remove", help="Remove this document id from the collection "
                                     "--collection names (repeatable)."),
    collection: Optional[str] = typer.Option(None, "--collection", help="An uploaded collection by its owner: the "
                                             "signed-in user as the app names them, or 'local' in single-user "
                                             "mode. Alone: index it again."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Build the index again from nothing: a damaged vector "
                                 "store is moved aside (renamed <path>.damaged-<time>, not deleted) and a new one "
                                 "built; on a whole store, this corpus' vectors are dropped and embedded again."),
    ray: Optional[str] = typer.Option(None, "--ray", help="Encode the chunks on a Ray cluster at this address "
                                      "(HOST:6379, or 'local' for one started on this machine for the run); needs "
                                      "`make ray`. Vectors and states are written here as they come back."),
    ray_workers: int = typer.Option(2, "--ray-workers", help="Encoder actors on the Ray cluster (one CPU each)."),
) -> None:
    """Build or refresh the persistent index of a corpus (progress on stderr), then say what was read: files per
    format, documents, pages, chunks, and every file skipped with its reason. With --collection, a user's
    uploaded collection (the app's "My documents"): --add and --remove change it as the page does. A damaged vector
    store is one line naming --rebuild (exit 2)."""
    _setup_logging()
    settings = _settings(sets, contextual=True if contextual else None)
    if (add or remove) and collection is None:
        _fail("--add and --remove change an uploaded collection: name it with --collection (its owner, or 'local')")
    if collection is not None and corpus is not None:
        _fail("--corpus and --collection name two corpora: give one")
    if rebuild and (status or drop or add or remove):
        _fail("--rebuild builds the index again: give it with --corpus or --collection only (not --status, --drop, "
              "--add or --remove)")
    from .backends.base import DAMAGED

    moved = None
    try:
        from .core.paths import LAB_CORPUS

        loaded = None
        if collection is not None:
            found = _collection(settings, collection, add, remove)
            if found is None:
                return
            path, loaded = found
        else:
            path = (corpus or LAB_CORPUS).resolve()
        if rebuild:  # before anything opens the store: a damaged one is moved aside whole
            from .pipeline.index import rebuild_store

            moved = rebuild_store(settings, path)
            line = (f"moved the damaged vector store to {moved} (kept, not deleted); building a new one at "
                    f"{settings.chroma_path}" if moved is not None else
                    f"the vector store at {settings.chroma_path} is not damaged: {path}'s vectors were dropped; "
                    "embedding them again")
            typer.echo(_printable(line), err=json_)   # stdout holds only the JSON with --json
        if status or drop:  # the store backend's own line (retrieval.backends.BACKENDS)
            from .backends import BACKENDS

            typer.echo(BACKENDS.get(settings.backend).status(settings, path, drop))
            return
        if loaded is None or loaded.state is None:
            from .backends.local import damaged_store

            damaged = damaged_store(settings, path)   # before anything opens it: one line, nothing else
            if damaged is not None:
                _fail(damaged.text())
        if ray is not None:
            from .pipeline.workbench import Workbench

            try:
                import ray as _ray  # noqa: F401 - installed by `make ray`
            except ImportError:
                _fail("--ray needs Ray: run `make ray` (requirements-ray.txt) in this environment")
            bench = loaded or Workbench(settings)
            bench.use_cluster(ray, ray_workers)
            bench.load_corpus(path)
        else:
            bench = loaded if loaded is not None and loaded.state is not None else _open(settings, path)
        if DAMAGED.matches(bench.state.store_reason):  # found while syncing: one line with the remedy
            _fail(bench.state.store_reason.text())
        states = bench.store_reader_states(_states_progress()) if settings.reader_states_at_index else None
    except RetrievalError as exc:
        _fail(str(exc))
    state = bench.state
    report = state.sync
    if json_:
        typer.echo(json.dumps({
            **({"moved_aside": str(moved) if moved is not None else None} if rebuild else {}),
            "corpus": str(state.corpus_path), "documents": len(state.documents), "chunks": len(state.chunks),
            "intake": state.intake.to_dict() if state.intake else None,
            "intake_file": state.intake.written_to if state.intake else "",
            "vectors": ({"added": report.added, "updated": report.updated, "removed": report.removed,
                         "unchanged": report.unchanged} if report else None),
            "store_reason": state.store_reason.text(),
            "reader_states": states.line() if states is not None else None,
        }, indent=2))  # ASCII escapes: a file name's odd bytes never reach the terminal raw
        if report is None:
            _fail(f"the index has no vectors ({state.store_reason.text()}); requests would run lexical_only")
        return
    if state.intake is not None:
        for line in state.intake.table().split("\n"):
            _echo(line)
        if state.intake.written_to and (state.intake.skipped or state.intake.warnings):
            _echo(f"every file read and skipped: {state.intake.written_to}")
    typer.echo(
        f"indexed {len(state.documents)} documents as {len(state.chunks)} chunks in {state.load_ms / 1000:.1f} s; "
        + (f"vectors: +{report.added} ~{report.updated} -{report.removed} ={report.unchanged}"
           + (f" >{report.migrated} moved from another layout (not re-embedded)" if report.migrated else "")
           + (" (rebuilt: model changed)" if report.rebuilt else "")
           + (f" (embedded again: {report.earlier_model} made this corpus' vectors before, kept under its own "
              "name)" if report.earlier_model else "")
           + (f"; {report.layout}, {report.collections} collection{'s' if report.collections != 1 else ''}"
              if report.layout else "")
           + (f" ({len(report.created)} created, {len(report.dropped)} dropped)"
              if report.created or report.dropped else "")
           if report else f"no vectors: {state.store_reason.text()}")
    )
    if states is not None:
        typer.echo(states.line())
    if bench.memory is not None:
        typer.echo(bench.memory.line())
    if report is None:  # an index that failed to build its vectors is a failed index
        _fail(f"the index has no vectors ({state.store_reason.text()}); requests would run lexical_only")


@app.command()
def ask(
    question: str = typer.Argument(..., help="The question."),
    corpus: Optional[Path] = CorpusOpt,
    filter_: list[str] = typer.Option([], "--filter", help="key=value (repeatable; same key twice = either)."),
    top_k: Optional[int] = typer.Option(None, "--top-k", help="Final list size."),
    dense_only: bool = typer.Option(False, "--dense-only", help="Switch hybrid off (the A/B toggle)."),
    json_: bool = typer.Option(False, "--json", help="Print the trace JSON only."),
    transform: list[str] = TransformOpt,
    mmr: Optional[float] = MmrOpt,
    sets: list[str] = SetOpt,
) -> None:
    """Run one request and print its lists, tier and answer (or the trace with --json)."""
    _setup_logging()
    settings = _settings(sets, top_k=top_k, hybrid_enabled=False if dense_only else None,
                         transforms=transform or None, mmr_lambda=mmr)
    from .pipeline.workbench import validate_question

    try:
        validate_question(question, settings.max_question_chars)  # fail before loading anything
        settings, tuned_note = _tuned(settings, corpus)
        bench = _open(settings, corpus)
        trace = bench.ask(question, _filters(filter_))
    except RetrievalError as exc:
        _fail(str(exc))
    from .offline.tuned import trace_note

    data = trace_note(trace.to_dict(), tuned_note)
    if json_:
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    _echo(f"tier: {data['tier']} — {data['tier_reason']}")
    for note in data.get("notes") or []:
        _echo(f"note ({note['stage']}): {note['note']}")
    for q in data["queries"][1:]:
        flags = f"  flags: {', '.join(q['flags'])}" if q["flags"] else ""
        extra = f"  filters added: {q['filters_added']}" if q.get("filters_added") else ""
        _echo(f"query [{q['kind']}{', hypothesis only' if q['hypothesis_only'] else ''}]: {q['text']}{flags}{extra}")
    for name in ("lexical", "dense", "fused", "reranked"):
        lst = data[name]
        _echo(f"\n{name} ({lst['score_kind']}):" + (f" {lst['note']}" if lst.get("note") else ""))
        for item in lst["items"][: settings.top_k * 2]:
            _echo(f"  {item['rank']:>2}. {item['chunk_id']:<40} {item['score']:.4f}")
    _echo("\nfinal context:")
    for item in data["final"]:
        sim = "n/a" if item["similarity"] is None else f"{item['similarity']:.3f}"
        where = location_label(item)
        _echo(f"  [{item['rank']}] {item['chunk_id']} (cosine {sim})" + (f" · {where}" if where else ""))
    answer = data["answer"]
    _echo(f"\nanswer ({answer['adapter']}){' — abstained' if answer['abstained'] else ''}:")
    _echo(f"  {answer['text']}")
    if answer.get("note"):
        _echo(f"  ({answer['note']})")
    timings = ", ".join(f"{k} {v:.1f} ms" if v is not None else f"{k} n/a" for k, v in data["timings_ms"].items())
    _echo(f"\ntimings: {timings}")


@app.command("eval")
def eval_(
    corpus: Path = typer.Option(..., "--corpus", help="Corpus path."),
    questions: Path = typer.Option(..., "--questions", help="Questions: JSONL, BEIR folder, SQuAD JSON, or TREC "
                                   "topics (with --qrels)."),
    qrels: Optional[Path] = typer.Option(None, "--qrels", help="TREC qrels (qid 0 docno rel) for TREC topics."),
    k: str = typer.Option("1,3,5,10", "--k", help="Cut-offs, comma-separated."),
    configs: str = typer.Option("bm25,dense,hybrid,hybrid+rerank", "--configs", help="Named configs; first = baseline."),
    config_file: Optional[Path] = typer.Option(None, "--config-file", help='JSON list of {"name", "settings"}.'),
    split: str = typer.Option("all", "--split", help="dev | heldout | all"),
    hypothesis: Optional[str] = typer.Option(None, "--hypothesis", help="The expectation, written before the run."),
    json_: bool = typer.Option(False, "--json", help="Print the report JSON only."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write report.json, comparison.csv, per-question CSVs, "
                                       "a TREC run per config and decision.md here."),
    sweep: Optional[str] = typer.Option(None, "--sweep", help="A config name: add its top-k sweep (k = 1…20)."),
    run: list[str] = typer.Option([], "--run", help="Another engine's run to evaluate beside the configs: a TREC "
                                  "run or JSONL of rankings, PATH or NAME=PATH (repeatable)."),
    gate: Optional[str] = typer.Option(None, "--gate", help="Release gate: METRIC[,drop=D][,alpha=A][,lost=L]"
                                       "[,spans=S] (e.g. ndcg@10,drop=0.01; spans=S: at most S answers may lose the "
                                       "labelled fact the baseline's held): exit 1 when a candidate fails it; with --out, "
                                       "gate.xml (JUnit) and gate_per_query.csv are written there."),
    transform: list[str] = TransformOpt,
    mmr: Optional[float] = MmrOpt,
    sets: list[str] = SetOpt,
) -> None:
    """Evaluate configurations (and imported runs) on a labeled question set (metrics by ranx)."""
    _setup_logging()
    settings = _settings(sets, transforms=transform or None, mmr_lambda=mmr)
    from .ingest.corpus import load_questions
    from .offline.evaluation import TqdmProgress, bench_factory, evaluate_configs

    try:
        ks = [int(x) for x in k.split(",") if x.strip()]
    except ValueError:
        _fail(f"--k expects integers separated by commas, got '{k}'")
    settings, tuned_note = _tuned(settings, corpus)  # the corpus' adopted default, under --set
    from .offline.release import ReleaseRule, check, junit_xml, per_query_csv
    from .offline.runs import load_run

    try:
        rule = ReleaseRule.parse(gate) if gate is not None else None
        imported = [load_run(path, name or None) for name, _, path in
                    (item.rpartition("=") if "=" in item else ("", "", item) for item in run)]
        cfgs = _configs(configs, config_file, settings)
        qs = load_questions(questions, qrels=qrels, max_question_chars=settings.max_question_chars)
        report = evaluate_configs(bench_factory(corpus), settings, qs, cfgs, ks, split, TqdmProgress(), hypothesis,
                                  sweep=sweep, imported=imported)
        checks = check(report, rule) if rule is not None else []
    except (RetrievalError, ValueError) as exc:
        _fail(str(exc))
    if tuned_note:
        report["tuned"] = tuned_note
    written = []
    if out is not None:
        from .offline.report import write_outputs

        try:
            written = write_outputs(report, out)
        except OSError as exc:
            _fail(f"{out}: cannot write the outputs ({exc})")
        except RetrievalError as exc:  # what no export can carry (a file that cannot be skipped alone)
            _fail(str(exc))
    if rule is not None:
        report["gate"] = {"rule": gate, "passed": all(c.passed for c in checks),
                          "checks": [{"candidate": c.candidate, "condition": c.condition, "passed": c.passed,
                                      "reason": c.reason.text(), "reason_code": c.reason.to_dict()} for c in checks]}
        if out is not None:
            try:
                (out / "gate.xml").write_text(junit_xml(checks, rule), encoding="utf-8")
                (out / "gate_per_query.csv").write_text(per_query_csv(report, rule), encoding="utf-8")
                written += [out / "gate.xml", out / "gate_per_query.csv"]
            except OSError as exc:
                _fail(f"{out}: cannot write the gate's outputs ({exc})")
    if json_:
        typer.echo(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        _print_report(report, split)
        for imported_name, cfg in report["configs"].items():
            named = cfg.get("imported")
            if named and (named["not_in_corpus"] or named["unanswered"] or named["not_in_set"]):
                _echo(f"\nrun {imported_name}: {sum(map(len, named['not_in_corpus'].values()))} ids not in the "
                           f"corpus (in {len(named['not_in_corpus'])} questions), {len(named['unanswered'])} "
                           f"questions unanswered, {len(named['not_in_set'])} of its questions not in the set")
        if written:
            _echo(f"\nwrote {len(written)} files to {out}")
        for c in checks:
            _echo(("PASS " if c.passed else "FAIL ") + c.reason.text())
    if checks and not all(c.passed for c in checks):
        raise typer.Exit(1)


def _configs(configs: str, config_file: Optional[Path], settings: Any) -> list[Any]:
    """The named configurations plus a config file's, each one's settings validated before anything loads."""
    from .offline.evaluation import resolve_configs

    extra = []
    if config_file is not None:
        try:
            check_regular_file(config_file, what="config file")
            text = config_file.read_text(encoding="utf-8")
            check_json_depth(text, config_file)
            extra = json.loads(text)
        except RetrievalError as exc:
            _fail(str(exc))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            _fail(f"{config_file}: cannot read config file ({exc})")
        if not isinstance(extra, list):
            _fail(f"{config_file}: expected a JSON list of configs")
    names = [c.strip() for c in configs.split(",") if c.strip()] if configs else []
    cfgs = resolve_configs(names, settings, extra)
    if not cfgs:
        _fail("no configuration to evaluate")
    for cfg in cfgs:
        try:
            settings.with_overrides(**cfg.overrides)
        except ValueError as exc:
            _fail(f"config '{cfg.name}': {exc}")
    return cfgs


def _print_report(report: dict[str, Any], split: str) -> None:
    """The evaluation report as text: metrics per config and group, comparisons, layers, evidence check, and
    the questions with problems (labels no configuration can satisfy)."""
    from .offline.evaluation.compare import p_text
    from .offline.report import problem_lines

    kmax = report["k"][-1]
    cols = list(dict.fromkeys([f"ndcg@{kmax}", f"recall@{report['k'][0]}", f"recall@{kmax}", f"mrr@{kmax}",
                               "abstention_accuracy"]))   # one --k: recall@k once
    if report.get("tuned"):
        _echo(f"settings: {report['tuned']} (every configuration starts from it)")
    _echo(f"{report['questions']} questions, split {split}\n")
    _echo(f"{'config':<16} {'tier':<13} " + " ".join(f"{c:>20}" for c in cols))
    for name, cfg in report["configs"].items():
        vals = [cfg["overall"].get(c) for c in cols]
        _echo(f"{name:<16} {cfg['tier']:<13} " + " ".join(f"{'—' if v is None else f'{v:.4f}':>20}" for v in vals))
    for name, cfg in report["configs"].items():
        _echo(f"\n{name} by group:")
        for group, vals in cfg["groups"].items():
            _echo(f"  {group:<14} " + " ".join(f"{c}={'—' if vals.get(c) is None else round(vals[c], 4)}" for c in cols))
    for c in report["comparisons"]:
        if c["metric"] == f"ndcg@{kmax}":
            _echo(f"\n{c['candidate']} vs {c['baseline']}: Δ{c['metric']} {c['delta']:+.4f} "
                  f"({p_text(c['p_value'])}"
                  + (f", Holm {p_text(c['p_holm'])}" if len(report["configs"]) > 2 and "p_holm" in c else "")
                  + "), "
                       f"improved {len(c['improved'])}, worsened {len(c['worsened'])}, "
                       f"lost a relevant document in {len(c['lost_relevant'])}"
                       + (" — wins on the mean but loses evidence the baseline found"
                          if c["wins_on_mean_but_lost_relevant"] else ""))
    _echo("\nfailure layers (ok / coverage / ordering / generation) and wall time:")
    for name, cfg in report["configs"].items():
        d = cfg["diagnosis"]["overall"]
        t = cfg["timings_ms"]
        alone = t.get("standalone_estimate")
        wall = f"{t['wall_total'] / 1000:.1f} s" if "wall_total" in t else "imported run"
        spans = cfg["diagnosis"].get("answer_spans") or {}
        held = f"   answers holding a span {spans['held']}/{spans['checked']}" if spans.get("checked") else ""
        _echo(f"  {name:<16} {d['ok']:>4} / {d['coverage']:>4} / {d['ordering']:>4} / {d['generation']:>4}   "
              f"{wall}" + (f" (alone ≈ {alone / 1000:.1f} s)" if alone else "") + held)
    ev = report.get("evidence_check") or {}
    if ev:
        _echo(f"\nevidence check: {ev['checked']} gold spans, {len(ev['cut'])} cut by the chunking, "
                   f"{len(ev['not_in_parent'])} not in the relevant parent")
    for line in problem_lines(report):
        _echo(line)
    for line in report.get("observed") or []:
        _echo(f"observed: {line}")
    if report.get("hypothesis"):
        _echo(f"hypothesis: {report['hypothesis']}")


@app.command()
def tune(
    corpus: Optional[Path] = CorpusOpt,
    questions: Optional[Path] = typer.Option(None, "--questions", help="Labeled questions (default: lab set)."),
    qrels: Optional[Path] = typer.Option(None, "--qrels", help="TREC qrels for TREC topics."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write tune.md, tune.json, overrides.json, configs.json "
                                       "and app-query.txt here (default: artifacts/tune/<corpus name>)."),
    budget_s: float = typer.Option(300.0, "--budget-s", min=1.0, help="Seconds the dev search may take; it stops "
                                   "before a candidate that would exceed them and says what it covered."),
    templates: bool = typer.Option(True, "--templates/--no-templates", help="Also try the passage templates "
                                   "(one vector collection each; a missing one is embedded once)."),
    adopt: bool = typer.Option(False, "--adopt", help="Store the result as this corpus' default, only when the "
                               "held-out check recommends it."),
    remove: bool = typer.Option(False, "--remove", help="Remove this corpus' stored default and exit."),
    learn_ranker: bool = typer.Option(False, "--learn-ranker", help="Instead of the settings search: train the "
                                      "learned ranker on this corpus' labels (the question set, --labels and the "
                                      "pages' judgments) with the shipped training data, on the training part "
                                      "only, and check it on held-out beside the corpus' default; --adopt stores "
                                      "it where that check recommends it."),
    labels: list[Path] = typer.Option([], "--labels", help="With --learn-ranker: another labels file (a question "
                                      "set or judgments JSONL, or a Team judging ratings file; repeatable). The "
                                      "pages' judgments/judgments.jsonl and judgments/ratings.jsonl are read "
                                      "when they exist."),
    sets: list[str] = SetOpt,
) -> None:
    """Tune the settings that change rankings to a corpus from its labels: a coordinate search on the dev split
    (progress on stderr), the best once on held-out against the default, a decision, a report."""
    _setup_logging()
    settings = _settings(sets)
    from .core.paths import LAB_CORPUS, LAB_QUESTIONS, PROJECT_ROOT
    from .offline import tuned

    if learn_ranker:
        _learn_ranker(settings, corpus, questions or LAB_QUESTIONS, labels, adopt)
        return

    path = (corpus or LAB_CORPUS).resolve()
    if remove:
        try:
            gone = tuned.remove(settings, path)
        except OSError as exc:
            _fail(f"cannot remove the tuned configuration of {path} ({exc.strerror or exc.__class__.__name__})")
        typer.echo(f"removed {gone}: {path} uses the default settings again" if gone
                   else f"no tuned configuration stored for {path}")
        return
    from .ingest.corpus import load_questions
    from .offline.evaluation import TqdmProgress, bench_factory
    from .offline.tune import adoptable, adoption_record, write_outputs
    from .offline.tune import tune as run_tune

    qpath = (questions or LAB_QUESTIONS).resolve()
    target = out or PROJECT_ROOT / "artifacts" / "tune" / (path.stem if path.stem != "corpus" else path.parent.name)
    bar = TqdmProgress("tuning on dev", postfix_width=40, close_at_total=False)  # its total shrinks
    try:
        qs = load_questions(qpath, qrels=qrels, max_question_chars=settings.max_question_chars)
        record = run_tune(bench_factory(path), settings, qs, budget_s=budget_s, templates=templates, progress=bar)
    except (RetrievalError, ValueError) as exc:
        _fail(str(exc))
    finally:
        bar.close()
    try:
        written = write_outputs(record, target, settings, str(path), str(qpath),
                                None if path == LAB_CORPUS.resolve() else str(corpus))
    except OSError as exc:
        _fail(f"{target}: cannot write the outputs ({exc})")
    s = record["search"]
    typer.echo(f"searched {s['evaluated']} of {s['planned']} candidates on {record['questions']['dev']} dev questions "
               f"in {s['seconds']:.0f} s" + (" (stopped by the budget)" if s["stopped_by_budget"] else ""))
    best = record["best"]
    typer.echo(f"best on dev: {best['name']} ({record['metric']} {best['dev'].get(record['metric'])})")
    typer.echo(("recommended: " if record["recommended"] else "") + record["why"])
    abstention = record.get("abstention") or {}
    if abstention:
        typer.echo(("abstention thresholds recommended: " if abstention.get("recommended") else "abstention: ")
                   + abstention["why"] + (f" ({', '.join(f'{k}={v}' for k, v in abstention['overrides'].items())})"
                                          if abstention.get("recommended") else ""))
    if adopt:
        if not adoptable(record):
            typer.echo("not adopted: the held-out check did not recommend a change")
        else:
            try:
                stored = tuned.adopt(settings, path, adoption_record(record))
            except OSError as exc:
                _fail(f"cannot store the tuned configuration ({exc.strerror or exc.__class__.__name__})")
            typer.echo(f"adopted for {path}: {stored} (ask, eval and the app read it; remove with "
                       f"python -m retrieval tune --remove --corpus {corpus or path})")
    typer.echo(f"wrote {len(written)} files to {target} (report: {target / 'tune.md'})")


def _learn_ranker(settings, corpus: Optional[Path], questions: Path, labels: list[Path], adopt: bool) -> None:
    """``tune --learn-ranker``: read the labels, train, check on held-out, print the decision (and adopt)."""
    from .core.paths import LAB_CORPUS
    from .offline import learn
    from .offline.evaluation import TqdmProgress, bench_factory
    from .serving.roots import DEFAULT_JUDGMENTS, DEFAULT_RATINGS

    path = (corpus or LAB_CORPUS).resolve()
    if not questions.exists():
        _fail(f"--questions: {questions}: no such file or folder")
    for extra in labels:
        if extra.is_dir():
            _fail(f"--labels: {extra} is a folder; give a labels file (JSONL)")
        if not extra.is_file():
            _fail(f"--labels: {extra}: no such file")
    files = [questions.resolve(), *labels, *(p for p in (DEFAULT_JUDGMENTS, DEFAULT_RATINGS) if p.is_file())]
    factories: dict[Path, Any] = {}

    def open_corpus(c: Path, s):
        return factories.setdefault(Path(c).resolve(), bench_factory(Path(c).resolve()))(s)

    bar = TqdmProgress("learning a ranker", postfix_width=40, close_at_total=False)
    try:
        found = learn.read_label_files(list(dict.fromkeys(files)), max_question_chars=settings.max_question_chars)
        record = learn.learn_ranker(open_corpus, settings, path, found, progress=bar)
    except (RetrievalError, ValueError) as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"cannot write the learned ranker ({exc.strerror or exc.__class__.__name__})")
    finally:
        bar.close()
    for source, n in record["sources"]:
        typer.echo(f"labels: {source} ({n} question{'s' if n != 1 else ''})")
    counts = record["labels"]
    typer.echo(f"  {counts['questions']} questions in all ({counts['merged']} merged into a question an earlier file "
               f"holds, {counts['outside']} left out: judged only on documents this corpus does not hold); "
               f"{counts['train']} answerable in the training part, {counts['heldout']} held out")
    typer.echo(learn.summary(record))
    if not record["recommended"]:
        typer.echo(record["why"])
    typer.echo(f"model folder: {record['folder']} (model_card.md says what it was trained on)")
    if adopt:
        try:
            stored = learn.adopt_ranker(settings, path, record)
        except ValueError as exc:
            typer.echo(str(exc))
            return
        except OSError as exc:
            _fail(f"cannot store the tuned configuration ({exc.strerror or exc.__class__.__name__})")
        typer.echo(f"adopted for {path}: {stored} (reranker_model=ltr:{record['folder']}; remove with "
                   f"python -m retrieval tune --remove --corpus {corpus or path})")


@app.command()
def calibrate(
    corpus: Optional[Path] = CorpusOpt,
    questions: Optional[Path] = typer.Option(None, "--questions", help="Labeled questions (default: lab set)."),
    sets: list[str] = SetOpt,
) -> None:
    """Choose the cosine gate (min_similarity) on the dev split; print held-out abstention accuracy."""
    _setup_logging()
    settings = _settings(sets)
    from .ingest.corpus import load_questions
    from .core.paths import LAB_QUESTIONS
    from .offline.evaluation import calibrate_gate

    try:
        result = calibrate_gate(_open(settings, corpus), load_questions(questions or LAB_QUESTIONS))
    except (RetrievalError, ValueError) as exc:
        _fail(str(exc))
    typer.echo(f"min_similarity = {result['threshold']}  (set RETRIEVAL_MIN_SIMILARITY)")
    for split in ("dev", "heldout"):
        r = result[split]
        typer.echo(f"{split:<8} {r['questions']} questions, abstention accuracy {r['abstention_accuracy']}")


@app.command()
def bench(
    quick: bool = typer.Option(False, "--quick", help="Lab corpus only, within a minute."),
    sizes: Optional[str] = typer.Option(None, "--sizes", help="Synthetic corpus sizes in subchunks, comma-separated "
                                        "(default 10000,100000; 1000000 takes long to build the first time)."),
    langchain: bool = typer.Option(True, "--langchain/--no-langchain",
                                   help="Compare with LangChain's EnsembleRetriever (needs requirements-bench.txt)."),
    sets: list[str] = SetOpt,
    json_out: Optional[Path] = typer.Option(None, "--json-out", help="Also write the figures as JSON here."),
) -> None:
    """Per-stage latency (p50/p95) per tier, index build, HNSW recall, LangChain comparison and peak memory
    per corpus (each in its own process); prints a table and writes JSON."""
    _setup_logging()
    from bench.run import run_benchmark

    settings = _settings(sets)
    overrides = dict(item.partition("=")[::2] for item in sets)
    size_list = None
    if sizes is not None:
        try:
            size_list = [int(x.strip().replace("_", "")) for x in sizes.split(",")]
        except ValueError:
            _fail(f"--sizes expects comma-separated integers, got '{sizes}'")
        if not all(MIN_BENCH_SIZE <= n <= MAX_BENCH_SIZE for n in size_list):
            _fail(f"--sizes: each size must be between {MIN_BENCH_SIZE:,} and {MAX_BENCH_SIZE:,} subchunks, "
                  f"got '{sizes}'")
    if json_out is not None:
        if json_out.is_dir():
            _fail(f"--json-out: {json_out} is a folder; give a file name")
        try:  # a trial file in the target folder, so a bad path fails now rather than after the whole run
            json_out.parent.mkdir(parents=True, exist_ok=True)
            tempfile.NamedTemporaryFile(dir=json_out.parent, prefix=".bench-", suffix=".tmp").close()
        except OSError as exc:
            _fail(f"--json-out: cannot write {json_out} ({exc.strerror or exc.__class__.__name__})")
    try:
        run_benchmark(settings, quick=quick, json_out=json_out, sizes=size_list, langchain=langchain,
                      overrides={k.strip().lower(): v for k, v in overrides.items()})
    except RetrievalError as exc:
        _fail(str(exc))


MIN_BENCH_SIZE, MAX_BENCH_SIZE = 100, 10_000_000


@app.command("train")
def train_(
    corpus: list[Path] = typer.Option(..., "--corpus", help="Corpus (repeatable; pairs with --questions in order)."),
    questions: list[Path] = typer.Option(..., "--questions", help="Labeled questions for the corpus at the same position."),
    out: Optional[Path] = typer.Option(None, "--out", help="Model folder to write (default: .retrieval/judge; the shipped "
                                       "models/judge is never overwritten by default). Use it with "
                                       "RETRIEVAL_JUDGE_PATH or --set reranker_model=ltr:FOLDER."),
    seed: int = typer.Option(20261201, "--seed", help="Seed of the split inside training and of LightGBM."),
    sets: list[str] = SetOpt,
) -> None:
    """Train the learned judge (reranker, support gate, evidence sentences) from labeled questions; split by
    parent document; writes the model folder with its model card (progress on stderr)."""
    _setup_logging()
    settings = _settings(sets)
    if len(corpus) != len(questions):
        _fail(f"give one --questions per --corpus (got {len(corpus)} corpora and {len(questions)} question files)")
    for path in [*corpus, *questions]:
        if not path.exists():
            _fail(f"{path}: no such file or folder")
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        _fail("training needs lightgbm (pip install lightgbm==4.7.0)")
    from .core.paths import PROJECT_ROOT
    from .offline.training import train as run_training

    target = out or PROJECT_ROOT / ".retrieval" / "judge"
    try:
        result = run_training(list(zip(corpus, questions)), target, settings, seed=seed)
    except (RetrievalError, ValueError) as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"{target}: cannot write the model folder ({exc.strerror or exc.__class__.__name__})")
    typer.echo(f"trained in {result.seconds:.0f} s; wrote {target} (model_card.md holds the held-out metrics)")
    for part, m in result.metrics.items():
        typer.echo(f"  {part:<22} nDCG@10 rrf {m['ndcg@10']['rrf']} → ltr {m['ndcg@10']['ltr']}, lost {m['lost_relevant']}; "
                   f"support gate answered {m['support_gate']['answered_answerable']}, abstained "
                   f"{m['support_gate']['abstained_unanswerable']} / leave-out {m['support_gate']['abstained_leave_out']} "
                   f"(clean {m['support_gate']['abstained_leave_out_clean']})")


@app.command()
def serve(
    workers: int = typer.Option(0, "--workers", help="App processes (0, the default: one per CPU core, 32 at most)."),
    port: int = typer.Option(8501, "--port", help="The port browsers connect to."),
    address: str = typer.Option("127.0.0.1", "--address", help="The address to listen on (0.0.0.0: every "
                                "interface; put the deployment's authenticating proxy in front)."),
    no_index: bool = typer.Option(False, "--no-index", help="Skip indexing the default corpus before the "
                                  "workers start."),
    print_proxy_config: bool = typer.Option(False, "--print-proxy-config", help="Print the Caddyfile serve "
                                            "would run (workers on ports 8601, 8602, …) and exit."),
) -> None:
    """The app in several processes behind Caddy on one address, each browser kept on its own process (README,
    "Many users at once")."""
    import os

    from .core.paths import PROJECT_ROOT
    from .serving import serve as serving

    _setup_logging()
    settings = _settings([])
    count = workers or min(os.cpu_count() or 1, serving.MAX_WORKERS)
    if not 1 <= count <= serving.MAX_WORKERS:
        _fail(f"--workers {count}: must be between 1 and {serving.MAX_WORKERS}")
    if not 1 <= port <= 65535:
        _fail(f"--port {port}: must be between 1 and 65535")
    if print_proxy_config:
        from .serving import proxy

        try:
            config = proxy.from_settings(settings, address, port, [f"127.0.0.1:{8601 + k}" for k in range(count)])
        except ValueError as exc:
            _fail(str(exc))
        typer.echo(proxy.caddyfile(config), nl=False)
        return
    from .backends import BACKENDS

    alone = BACKENDS.get(settings.backend).processes(settings) if count > 1 else None
    if alone is not None:  # a store that one process at a time may open (a Milvus Lite file)
        _fail(alone.text())
    try:
        serving.serve(count, address, port, PROJECT_ROOT / "app.py", PROJECT_ROOT, index_first=not no_index,
                      say=lambda line: typer.echo(line, err=True), settings=settings)
    except (RuntimeError, ValueError, OSError) as exc:
        _fail(str(exc))
    except KeyboardInterrupt:  # a second Ctrl-C while the workers stop: they were killed
        raise typer.Exit(130)


judgments_app = typer.Typer(add_completion=False, no_args_is_help=True,
                            help="Team judging: ratings with their raters, imports, agreement, consensus.")
app.add_typer(judgments_app, name="judgments")


@judgments_app.command("import")
def judgments_import(
    ratings: Path = typer.Argument(..., help="The team's ratings file (JSONL), created when missing."),
    files: list[Path] = typer.Argument(..., help="TREC qrels or question-set JSONL files made elsewhere."),
    rater: Optional[str] = typer.Option(None, "--rater", help="The rater of the imported grades (default: each "
                                        "file's name)."),
) -> None:
    """Add judgments made elsewhere to a ratings file, each with its file as source and its rater."""
    from .offline.raters import import_judgments, save_ratings

    try:
        for path in files:
            found = import_judgments(path, rater)
            _echo(f"{path}: {save_ratings(ratings, found)} grades added as rater "
                       f"{rater or path.stem!r} (source {path})")
    except (RetrievalError, ValueError, OSError) as exc:
        _fail(str(exc))


@judgments_app.command("agreement")
def judgments_agreement(
    ratings: Path = typer.Argument(..., help="The team's ratings file (JSONL)."),
    consensus_out: Optional[Path] = typer.Option(None, "--consensus", help="Write the consensus judgments here as "
                                                 "a question-set JSONL (each pair's median grade, with its raters)."),
    json_: bool = typer.Option(False, "--json", help="Print the agreement as JSON."),
) -> None:
    """Cohen's kappa per pair of raters, Fleiss' kappa over what every rater graded, and the disagreements."""
    from .offline.raters import agreement, consensus, load_ratings

    try:
        found = load_ratings(ratings)
    except RetrievalError as exc:
        _fail(str(exc))
    result = agreement(found)
    if consensus_out is not None:
        merged = consensus(found)
        lines = [json.dumps({"id": qid, "question": e["question"], "group": "judged", "filters": e["filters"],
                             "graded": e["graded"], "relevant": sorted(p for p, g in e["graded"].items() if g > 0),
                             "raters": e["raters"]}, ensure_ascii=False) for qid, e in merged.items()]
        try:
            consensus_out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        except OSError as exc:
            _fail(f"{consensus_out}: cannot write ({exc.strerror or exc})")
    if json_:
        typer.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    _echo(f"{len(result['raters'])} raters, {result['pairs']} graded pairs")
    for c in result["cohen"]:
        _echo(f"  Cohen's kappa {c['a']} / {c['b']}: {'n/a' if c['kappa'] is None else c['kappa']} "
                   f"over {c['pairs']} pairs")
    if result["fleiss"]:
        _echo(f"  Fleiss' kappa over {result['fleiss']['pairs']} pairs every rater graded: "
                   f"{result['fleiss']['kappa']}")
    _echo(f"{len(result['disagreements'])} pairs graded differently (widest gap first):")
    for d in result["disagreements"][:20]:
        _echo(f"  {d['qid']} {d['parent']}: " + ", ".join(f"{r} {g}" for r, g in d["grades"].items()))


models_app = typer.Typer(add_completion=False, no_args_is_help=True, help="Cross-encoder models in the local cache.")
app.add_typer(models_app, name="models")


@models_app.command("pull")
def models_pull(
    name: str = typer.Argument("BAAI/bge-reranker-v2-m3", help="Hub name (fallback BAAI/bge-reranker-base for the default)."),
    timeout: float = typer.Option(3.0, "--timeout", help="Seconds to wait for the hub to answer."),
) -> None:
    """Download a cross-encoder into the Hugging Face cache (fails at once when no model hub is reachable)."""
    _setup_logging()
    from .backends.hub import HubUnreachable, pull

    try:
        path = pull(name, timeout)
    except (HubUnreachable, RuntimeError) as exc:
        _fail(str(exc))
    typer.echo(f"{name}: in the local cache at {path}; set RETRIEVAL_RERANKER_MODEL={name}")


def main() -> None:
    """Entry point of ``python -m retrieval``: no traceback reaches a user. An error raised on purpose is one
    line and exit 2 in each command; anything else (a bug) is still one line naming its type, and exit 2."""
    try:  # typer vendors click (its own exception classes); older typers use click's
        from typer._click import exceptions as click_errors
    except ImportError:  # pragma: no cover - depends on the typer version
        from click import exceptions as click_errors
    usage_error = getattr(click_errors, "UsageError", ())
    click_error = getattr(click_errors, "ClickException", ())

    try:
        code = app(standalone_mode=False)
    except SystemExit:
        raise
    except usage_error as exc:  # a bad option or argument: one line, not the usage block
        if type(exc).__name__ == "NoArgsIsHelpError":  # no command at all: the help is the answer
            typer.echo(exc.format_message())
            sys.exit(2)
        ctx = getattr(exc, "ctx", None)
        command = ctx.command_path if ctx is not None else "python -m retrieval"
        typer.echo(f"error: {_one_line(exc.format_message())} (see {command} --help)", err=True)
        sys.exit(2)
    except click_error as exc:
        typer.echo(f"error: {_one_line(exc.format_message())}", err=True)
        sys.exit(2)
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        typer.echo("error: interrupted", err=True)
        sys.exit(130)
    except RetrievalError as exc:
        typer.echo(f"error: {_one_line(str(exc))}", err=True)
        sys.exit(2)
    except BaseException as exc:  # noqa: BLE001 - the last net (a native panic too): one line, never a traceback
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        typer.echo(f"error: internal error ({exc.__class__.__name__}{': ' + first if first else ''}); "
                   "please report it with the command that caused it", err=True)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)
