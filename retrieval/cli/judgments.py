"""``judgments import | agreement``: team judging, ratings with their raters (:mod:`retrieval.offline.raters`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ..core.errors import RetrievalError
from .common import echo, fail


#: The ``judgments`` group (added to the command line by :mod:`retrieval.cli`).
app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Team judging: ratings with their raters, imports, agreement, consensus.")


@app.command("import")
def judgments_import(
    ratings: Path = typer.Argument(..., help="The team's ratings file (JSONL), created when missing."),
    files: list[Path] = typer.Argument(..., help="TREC qrels or question-set JSONL files made elsewhere."),
    rater: Optional[str] = typer.Option(None, "--rater", help="The rater of the imported grades (default: each "
                                        "file's name)."),
) -> None:
    """Add judgments made elsewhere to a ratings file, each with its file as source and its rater."""
    from ..offline.raters import import_judgments, save_ratings

    try:
        for path in files:
            found = import_judgments(path, rater)
            echo(f"{path}: {save_ratings(ratings, found)} grades added as rater "
                 f"{rater or path.stem!r} (source {path})")
    except (RetrievalError, ValueError, OSError) as exc:
        fail(str(exc))


@app.command("agreement")
def judgments_agreement(
    ratings: Path = typer.Argument(..., help="The team's ratings file (JSONL)."),
    consensus_out: Optional[Path] = typer.Option(None, "--consensus", help="Write the consensus judgments here as "
                                                 "a question-set JSONL (each pair's median grade, with its raters)."),
    json_: bool = typer.Option(False, "--json", help="Print the agreement as JSON."),
) -> None:
    """Cohen's kappa per pair of raters, Fleiss' kappa over what every rater graded, and the disagreements."""
    from ..offline import summaries
    from ..offline.raters import agreement, consensus, load_ratings

    try:
        found = load_ratings(ratings)
    except RetrievalError as exc:
        fail(str(exc))
    result = agreement(found)
    if consensus_out is not None:
        merged = consensus(found)
        lines = [json.dumps({"id": qid, "question": e["question"], "group": "judged", "filters": e["filters"],
                             "graded": e["graded"], "relevant": sorted(p for p, g in e["graded"].items() if g > 0),
                             "raters": e["raters"]}, ensure_ascii=False) for qid, e in merged.items()]
        try:
            consensus_out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        except OSError as exc:
            fail(f"{consensus_out}: cannot write ({exc.strerror or exc})")
    if json_:
        typer.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    echo(summaries.agreement(result))
