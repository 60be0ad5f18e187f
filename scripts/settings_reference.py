"""Write docs/settings-reference.md from the settings model (every field, its variable, default, bounds and
description): ``python scripts/settings_reference.py`` after a change to ``retrieval/settings.py``; a test fails
while the page and the model disagree."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PAGE = ROOT / "docs" / "settings-reference.md"


def _default(value: object) -> str:
    if isinstance(value, Path):
        try:
            value = value.relative_to(ROOT)
        except ValueError:
            pass
    text = "" if value is None else (",".join(value) if isinstance(value, tuple) else str(value))
    return f"`{text}`" if text else "unset"


def _type(annotation: object) -> str:
    text = getattr(annotation, "__name__", None) or str(annotation)
    return text.replace("typing.", "").replace("pathlib.", "").replace("pydantic.types.", "")


def reference() -> str:
    from retrieval.settings import SCOPES, Settings, bounds, scope_of

    lines = ["# Settings reference", "",
             "Generated from `retrieval/settings.py` by `scripts/settings_reference.py` (a test fails when they "
             "disagree). Each setting is read from the environment variable `RETRIEVAL_<NAME>` (or `.env`); see "
             "[Settings](settings.md) for how they are chosen.", "",
             "Each setting has a scope, written on its field in `retrieval/settings.py`: **request** settings may "
             "change from one question to the next (the URL, the pickers, `--set`, an evaluation's "
             "configurations); **index** settings shape an index or a model loaded once with it (every cache of "
             "indexes keys on them, and a request that names another value is refused); **state** and "
             "**process** settings are index-level too but never change which chunks an index holds (the reader's "
             "state store, the memory ceiling); **connection** settings reach a service (Milvus, the LLM); "
             "**serving** settings are the served app's policy (roots, uploads, access, the front door).", ""]
    for scope in SCOPES:
        names = [n for n in Settings.model_fields if scope_of(n) == scope]
        lines += [f"## {scope.capitalize()} settings", "",
                  "| setting | variable | type | default | bounds | what it does |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for name in names:
            info = Settings.model_fields[name]
            low, high = bounds(name)
            bound = "" if low is None and high is None else f"[{'' if low is None else low}, {'' if high is None else high}]"
            about = " ".join((info.description or "").split()).replace("|", "\\|")
            lines.append(f"| `{name}` | `RETRIEVAL_{name.upper()}` | `{_type(info.annotation)}` | "
                         f"{_default(info.default)} | {bound} | {about} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    PAGE.write_text(reference(), encoding="utf-8")
    from retrieval.settings import Settings

    print(f"{PAGE.relative_to(ROOT)}: {len(Settings.model_fields)} settings")
