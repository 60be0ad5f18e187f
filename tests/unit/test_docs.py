"""The documentation: the README stays short, the site builds strictly (a broken link fails), the settings
reference is the settings model's, and the figures the pages state about the code are the code's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_is_read_in_ten_minutes() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 300


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "site" / "architecture" / "index.html").is_file()


def test_the_settings_reference_is_the_settings_models() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    from settings_reference import PAGE, reference

    assert PAGE.read_text(encoding="utf-8") == reference(), "run: python scripts/settings_reference.py"


def test_the_feature_counts_the_models_page_states_are_the_codes() -> None:
    from retrieval.learned.judge.features import CANDIDATE_NAMES, GATE_NAMES, SENTENCE_NAMES

    page = " ".join((ROOT / "docs" / "models.md").read_text(encoding="utf-8").split())
    assert f"{len(CANDIDATE_NAMES)} features per candidate" in page
    assert f"{len(SENTENCE_NAMES)} per context sentence and {len(GATE_NAMES)} per selected context" in page
    assert f"the {len(GATE_NAMES)} gate features" in page


def test_every_page_the_code_cites_exists_and_none_is_outside_the_repository() -> None:
    """Docstrings and pages cite ``docs/<page>.md``: each exists; nothing cites a design file the repository
    does not hold."""
    import re

    files = [*ROOT.joinpath("retrieval").rglob("*.py"), *ROOT.joinpath("ui").rglob("*.py"), ROOT / "README.md",
             *ROOT.joinpath("docs").glob("*.md")]
    cited, outside = set(), []
    for path in files:
        text = path.read_text(encoding="utf-8")
        cited |= set(re.findall(r"docs/([\w-]+\.md)", text))
        if "DESIGN.md" in text:
            outside.append(str(path.relative_to(ROOT)))
    assert cited and not [name for name in sorted(cited) if not (ROOT / "docs" / name).is_file()]
    assert outside == []
