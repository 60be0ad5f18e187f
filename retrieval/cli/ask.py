"""``ask``: one request, its lists, tier and answer (or the trace as JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ..core.errors import RetrievalError
from ..ingest.location import location_label
from .common import (CorpusOpt, MmrOpt, SetOpt, TransformOpt, adopted, command_settings, echo, fail, filter_pairs,
                     open_bench, setup_logging)


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
    setup_logging()
    settings = command_settings(sets, top_k=top_k, hybrid_enabled=False if dense_only else None,
                                transforms=transform or None, mmr_lambda=mmr)
    from ..pipeline.workbench import validate_question

    try:
        validate_question(question, settings.max_question_chars)  # fail before loading anything
        settings, tuned_note = adopted(settings, corpus)
        bench = open_bench(settings, corpus)
        trace = bench.ask(question, filter_pairs(filter_))
    except RetrievalError as exc:
        fail(str(exc))
    from ..offline.tuned import trace_note

    data = trace_note(trace.to_dict(), tuned_note)
    if json_:
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    echo(f"tier: {data['tier']} — {data['tier_reason']}")
    for note in data.get("notes") or []:
        echo(f"note ({note['stage']}): {note['note']}")
    for q in data["queries"][1:]:
        flags = f"  flags: {', '.join(q['flags'])}" if q["flags"] else ""
        extra = f"  filters added: {q['filters_added']}" if q.get("filters_added") else ""
        echo(f"query [{q['kind']}{', hypothesis only' if q['hypothesis_only'] else ''}]: {q['text']}{flags}{extra}")
    for name in ("lexical", "dense", "fused", "reranked"):
        lst = data[name]
        echo(f"\n{name} ({lst['score_kind']}):" + (f" {lst['note']}" if lst.get("note") else ""))
        for item in lst["items"][: settings.top_k * 2]:
            echo(f"  {item['rank']:>2}. {item['chunk_id']:<40} {item['score']:.4f}")
    echo("\nfinal context:")
    for item in data["final"]:
        sim = "n/a" if item["similarity"] is None else f"{item['similarity']:.3f}"
        where = location_label(item)
        echo(f"  [{item['rank']}] {item['chunk_id']} (cosine {sim})" + (f" · {where}" if where else ""))
    answer = data["answer"]
    echo(f"\nanswer ({answer['adapter']}){' — abstained' if answer['abstained'] else ''}:")
    echo(f"  {answer['text']}")
    if answer.get("note"):
        echo(f"  ({answer['note']})")
    timings = ", ".join(f"{k} {v:.1f} ms" if v is not None else f"{k} n/a" for k, v in data["timings_ms"].items())
    echo(f"\ntimings: {timings}")
