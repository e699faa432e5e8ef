"""The docs that are generated from the code are not stale."""

import ast
import re
import subprocess
from pathlib import Path

import pytest

from tests.console import run_main
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


# --- Claims the docs make about the code, held to it ---------------------------------------------------

_NUMBER_WORDS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten".split())}


def test_readme_counts_the_unit_files_in_systemd() -> None:
    readme = (ROOT / "README.md").read_text()
    line = next(line for line in readme.splitlines() if line.startswith("systemd/ "))
    count = _NUMBER_WORDS[line.split()[1]]
    units = sorted(p.name for p in (ROOT / "systemd").iterdir() if p.suffix in (".service", ".timer"))
    assert count == len(units), f"README says {line.split()[1]} unit files; systemd/ has {units}"
    assert line.split()[2:4] == ["unit", "files"]


def test_architecture_doc_names_the_packages_mypy_is_not_strict_on() -> None:
    import tomllib

    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    strict = {m.removesuffix(".*") for o in mypy["overrides"] if o.get("strict") for m in o["module"]}
    packages = {name for name in mypy["files"] if (ROOT / name / "__init__.py").exists()} - {"tests"}
    claim = re.search(
        r"mypy checks every package, the tests and the benchmarks, strict on all\s+but (.+?) \(", DOC.read_text()
    )
    assert claim is not None, "docs/architecture.md: the line on mypy's strictness"
    assert set(re.findall(r"`(\w+)/`", claim.group(1))) == packages - strict - {"benchmarks"}
    assert {"tests", "benchmarks"} <= set(mypy["files"])


def test_architecture_doc_lists_table_loops_parameters_as_the_code_has_them() -> None:
    import inspect

    from controller.table.loop.loop import TableLoop

    listed = re.search(r"`TableLoop\(([^`]*)\)`", DOC.read_text())
    assert listed is not None, "docs/architecture.md: TableLoop's constructor"
    words = [w.strip() for w in listed.group(1).replace("\n", " ").split(",") if w.strip() != "*"]
    expected = [p.name for p in list(inspect.signature(TableLoop.__init__).parameters.values())[1:]]
    assert words == expected


def test_the_table_never_imports_the_floor_but_the_demo_that_runs_it() -> None:
    # docs/architecture.md: the demo runs the floor too and may use floor/; the table's processes never do.
    importers = []
    for module in sorted((ROOT / "controller").rglob("*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            if any(n == "floor" or n.startswith("floor.") for n in names):
                importers.append(str(module.relative_to(ROOT)))
    assert [m for m in importers if "demo" not in Path(m).name] == []
    assert "Nothing under `controller/` imports\n  `floor/`" in DOC.read_text()


def test_floor_doc_names_the_record_kinds_the_pit_checks_and_the_sizes_it_takes() -> None:
    from controller.game.records import RecordKind
    from floor.pit_intake import MAX_ALERT_BYTES, MAX_RECORD_BYTES, body_ok
    from floor_protocol.state import MAX_STATE_BYTES

    doc = (ROOT / "docs" / "floor.md").read_text()
    record_row = next(line for line in doc.splitlines() if line.startswith("| `record` |"))
    named = re.search(r"and for (.+?) records the fields the pit shows", record_row)
    money = re.search(r"and a money record \((.+?)\) exactly its kind's body", record_row)
    assert named is not None and money is not None, record_row
    checked = {kind.value for kind in RecordKind if not body_ok(kind, {})}  # an empty body is refused
    assert set(re.findall(r"`(\w+)`", named.group(1) + money.group(1))) == checked
    sizes = {}
    for line in doc.splitlines():
        topic = re.match(r"\| `?(state|status|record|alert)\b", line)
        limit = line.rstrip().removesuffix("|").rsplit("|", 1)[-1]  # the last cell: "64 KiB, ..." or "... (80 KiB)"
        size = max((int(n) for n in re.findall(r"(\d+) KiB", limit)), default=None)
        if topic and size is not None:
            sizes[topic.group(1)] = size * 1024
    assert sizes == {"state": MAX_STATE_BYTES, "record": MAX_RECORD_BYTES, "alert": MAX_ALERT_BYTES}


@pytest.mark.e2e  # asks git for the tags
def test_install_doc_names_no_tag_or_tarball_the_repository_lacks() -> None:
    install = (ROOT / "docs" / "install.md").read_text()
    tags = set(subprocess.run(["git", "tag"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split())
    named = set(re.findall(r"(?<![\w.])v\d+\.\d+\.\d+\b", install))
    tarballs = {f"v{v}" for v in re.findall(r"shoe-controller-(\d+\.\d+\.\d+)\.tar\.gz", install)}
    assert (named | tarballs) - tags == set(), "docs/install.md names a release that was never made"


def test_install_doc_gives_a_pc_the_mock_pin_factory_and_check_config_says_it(tmp_path: Path) -> None:
    install = (ROOT / "docs" / "install.md").read_text()
    section = install.split("### A PC", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```toml\n(.*?)```", section, flags=re.DOTALL)
    assert block is not None, "docs/install.md, A PC: the configuration"
    config = tmp_path / "config.toml"
    config.write_text(block.group(1))
    said = re.search(r"`check-config` then says `([^`]+)`", section)
    assert said is not None
    out = run_main(["shoe-controller", "check-config", str(config)])
    assert out.returncode == 0, out.stderr
    assert said.group(1) in out.stdout
    assert install.count("[A PC](#a-pc)") >= 2  # the package's steps and the venv route both point at it


Commands = dict[str, "Commands"]


def _subcommands(parser: object) -> Commands:
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    found: Commands = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[name] = _subcommands(sub)
    return found


_COMMAND = re.compile(r"(?<![\w/.-])(shoe-controller|shoe-floor)(?![\w-])((?: [a-z][a-z-]*)*)")


def undocumented_commands(texts: dict[str, str]) -> list[str]:
    """`shoe-controller X` and `shoe-floor X [Y]` in the docs' code (blocks and spans) whose X (or Y) is no
    subcommand (a unit name after systemctl and a user name after `-u` are not commands)."""
    from controller.cli import build_parser
    from floor.cli import parser as floor_parser

    commands = {"shoe-controller": _subcommands(build_parser()), "shoe-floor": _subcommands(floor_parser())}
    wrong = []
    for where, text in texts.items():
        blocks = re.findall(r"```.*?```", text, flags=re.DOTALL)
        spans = re.findall(r"`[^`\n]+`", re.sub(r"```.*?```", "", text, flags=re.DOTALL))
        for line in (line for code in blocks + spans for line in code.splitlines()):
            for match in _COMMAND.finditer(line):
                before = line[: match.start()]
                words = match.group(2).split()
                if not words or "systemctl" in before or before.endswith("-u "):
                    continue
                node = commands[match.group(1)]
                if words[0] not in node:
                    wrong.append(f"{where}: {match.group(1)} {words[0]}")
                elif node[words[0]] and len(words) > 1 and words[1] not in node[words[0]]:
                    wrong.append(f"{where}: {match.group(1)} {words[0]} {words[1]}")
    return wrong


def test_every_command_the_docs_name_exists() -> None:
    texts = {"README.md": (ROOT / "README.md").read_text()}
    texts |= {str(d.relative_to(ROOT)): d.read_text() for d in sorted((ROOT / "docs").glob("*.md"))}
    assert undocumented_commands(texts) == []


def test_a_planted_command_that_does_not_exist_is_caught() -> None:
    texts = {"docs/x.md": "```sh\nshoe-floor serv --archive x\nshoe-controller journal verfy\n```\n`shoe-floor verify`"}
    assert undocumented_commands(texts) == ["docs/x.md: shoe-floor serv", "docs/x.md: shoe-controller journal verfy"]
