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
    from retrieval.settings import Settings, bounds

    lines = ["# Settings reference", "",
             "Generated from `retrieval/settings.py` by `scripts/settings_reference.py` (a test fails when they "
             "disagree). Each setting is read from the environment variable `RETRIEVAL_<NAME>` (or `.env`); see "
             "[Settings](settings.md) for how they are chosen.", "",
             "| setting | variable | type | default | bounds | what it does |", "| --- | --- | --- | --- | --- | --- |"]
    for name, info in Settings.model_fields.items():
        low, high = bounds(name)
        bound = "" if low is None and high is None else f"[{'' if low is None else low}, {'' if high is None else high}]"
        about = " ".join((info.description or "").split()).replace("|", "\\|")
        lines.append(f"| `{name}` | `RETRIEVAL_{name.upper()}` | `{_type(info.annotation)}` | "
                     f"{_default(info.default)} | {bound} | {about} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    PAGE.write_text(reference(), encoding="utf-8")
    print(f"{PAGE.relative_to(ROOT)}: {len(reference().splitlines()) - 6} settings")
