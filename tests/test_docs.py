"""The docs that are generated from the code are not stale."""

import ast
import re
import subprocess
from pathlib import Path

import pytest

from tools.state_diagram import DOC, doc_block, mermaid

ROOT = Path(__file__).resolve().parent.parent


def test_state_diagram_in_architecture_doc_is_generated_from_the_code() -> None:
    assert doc_block(DOC.read_text()) == mermaid(), "run: .venv/bin/python tools/state_diagram.py"


def test_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text()
    for name in (
        "architecture",
        "protocol",
        "simulator",
        "configuration",
        "wiring",
        "install",
        "operations",
        "floor",
        "performance",
    ):
        assert f"docs/{name}.md" in readme
        assert (ROOT / "docs" / f"{name}.md").exists(), name


def test_rule_card_in_architecture_doc_is_the_tableau() -> None:
    from controller.game.tableau import TABLEAU

    assert "```\n" + "\n".join(TABLEAU.rule_card()) + "\n```" in DOC.read_text()


# --- No doc or docstring names a file that is not in the repository ---------------------------------

DOCSTRING_PACKAGES = (
    "controller",
    "floor",
    "floor_protocol",
    "eventstream",
    "commandline",
    "firmware_protocol",
    "hw_sim",
    "benchmarks",
    "tools",
)
# A path-like mention: at least one folder and then a file with an extension (`docs/floor.md`,
# `controller/table/loop/loop.py`, `shared/ARCHITECTURE.md`), or a path under one of the repository's top-level
# folders (`scripts/test`, `controller/table/loop/`). Not part of a URL or an absolute path: no `/`, `:`, `~`, `.`,
# `<`, `>`, `$`, `-` or a word character just before it (`<demo dir>/Tn/journal.db` is a path at run time).
_EXTENSIONS = "py|md|toml|json|service|sysusers|rules|conf|acl|txt|sh|cfg|ini|yml|yaml|html|js|css|sql|db"
_MENTION = re.compile(
    r"(?<![\w/:~.<>$-])((?:[A-Za-z_][\w.-]*/)+(?:[\w.-]+\.(?:" + _EXTENSIONS + r")\b|[\w.-]*))(?![\w*<{])"
)


def _tracked() -> set[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return set(out.split())


def _top_level_folders(tracked: set[str]) -> set[str]:
    return {name.split("/", 1)[0] for name in tracked if "/" in name and not name.startswith(".")}


def path_mentions(text: str, top_levels: set[str]) -> set[str]:
    """The repository paths a text names (see `_MENTION`): a file with an extension, or a top-level path."""
    found = set()
    for match in _MENTION.finditer(text):
        mention = match.group(1).rstrip(".")
        first = mention.split("/", 1)[0]
        has_extension = re.search(r"\.(?:" + _EXTENSIONS + r")$", mention) is not None
        if has_extension or first in top_levels:
            found.add(mention)
    return found


def _exists(mention: str, tracked: set[str], where: str) -> bool:
    """`mention` is a tracked file or folder, from the top or (a Markdown link) from `where`'s folder."""
    names = {mention.rstrip("/")}
    if where.endswith(".md"):
        names.add(str(Path(Path(where).parent, mention)))
    return any(name in tracked or any(path.startswith(name + "/") for path in tracked) for name in names)


_WITH_DOCSTRING = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _doc_texts() -> dict[str, str]:
    texts = {"README.md": (ROOT / "README.md").read_text()}
    for doc in sorted((ROOT / "docs").glob("*.md")):
        texts[str(doc.relative_to(ROOT))] = doc.read_text()
    for package in DOCSTRING_PACKAGES:
        for module in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(module.read_text())
            nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, _WITH_DOCSTRING))]
            docstrings = [ast.get_docstring(node, clean=False) or "" for node in nodes]
            texts[str(module.relative_to(ROOT))] = "\n".join(docstrings)
    return texts


def stale_mentions(texts: dict[str, str], tracked: set[str]) -> list[str]:
    top_levels = _top_level_folders(tracked)
    return sorted(
        f"{where}: {mention}"
        for where, text in texts.items()
        for mention in path_mentions(text, top_levels)
        if not _exists(mention, tracked, where)
    )


@pytest.mark.e2e
def test_docs_and_docstrings_name_only_files_in_the_repository() -> None:
    assert stale_mentions(_doc_texts(), _tracked()) == []


@pytest.mark.e2e
def test_a_planted_stale_path_is_caught() -> None:
    tracked = _tracked()
    texts = {"docs/x.md": "see `controller/table.py`, `shared/ARCHITECTURE.md` and tests/e2e/test_gone.py"}
    assert stale_mentions(texts, tracked) == [
        "docs/x.md: controller/table.py",
        "docs/x.md: shared/ARCHITECTURE.md",
        "docs/x.md: tests/e2e/test_gone.py",
    ]
    kept = {"docs/x.md": "`controller/table/loop/`, /etc/shoe-controller/config.toml, http://host/a/b.md, scripts/test"}
    assert stale_mentions(kept, tracked) == []


# --- README's layout lists every top-level folder --------------------------------------------------


def readme_layout_folders(readme: str) -> set[str]:
    block = readme.split("## Layout", 1)[1].split("```", 2)[1]
    return {line.split()[0].split("/", 1)[0] for line in block.splitlines() if line.strip()}


@pytest.mark.e2e
def test_readme_layout_lists_every_top_level_folder() -> None:
    readme = (ROOT / "README.md").read_text()
    assert readme_layout_folders(readme) == _top_level_folders(_tracked())


# --- Links into a doc's sections land on a heading -----------------------------------------------------


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.DOTALL)
    return {github_slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, flags=re.MULTILINE)}


def test_section_links_land_on_a_heading() -> None:
    broken = []
    for source in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target, anchor in re.findall(r"\]\(([\w./-]*\.md)?#([\w-]+)\)", source.read_text()):
            doc = (source.parent / target) if target else source
            if doc.exists() and anchor not in _anchors(doc):
                broken.append(f"{source.relative_to(ROOT)}: {target}#{anchor}")
    assert broken == []


def test_github_slug() -> None:
    assert github_slug("card -> LEDs (`bench_card_led.py`)") == "card---leds-bench_card_ledpy"
    assert github_slug("The floor's archive rate") == "the-floors-archive-rate"
