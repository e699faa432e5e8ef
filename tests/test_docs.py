"""The docs that are generated from the code are not stale."""

from pathlib import Path

from tools.state_diagram import DOC, doc_block, mermaid

ROOT = Path(__file__).resolve().parent.parent


def test_state_diagram_in_architecture_doc_is_generated_from_the_code() -> None:
    assert doc_block(DOC.read_text()) == mermaid(), "run: .venv/bin/python tools/state_diagram.py"


def test_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text()
    for name in ("architecture", "protocol", "simulator", "configuration", "wiring", "install", "operations"):
        assert f"docs/{name}.md" in readme
        assert (ROOT / "docs" / f"{name}.md").exists(), name


def test_rule_card_in_architecture_doc_is_the_tableau() -> None:
    from controller.game.tableau import TABLEAU

    assert "```\n" + "\n".join(TABLEAU.rule_card()) + "\n```" in DOC.read_text()
