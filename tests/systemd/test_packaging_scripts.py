"""scripts/release and scripts/build-deb's refusals, without building anything: each mistake is one line and a
non-zero exit, and the release's tag lands on the commit that wrote the version. (Beside the package's
container test, test_package_under_systemd.py, which builds and installs the packages.)

Runs the real scripts on a real git clone of this checkout's committed history in a temporary directory.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.systemd.machine import ROOT

PREVIOUS_RELEASE = "Version 0.2.0"


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60, check=False)


def git(clone: Path, *args: str) -> str:
    result = run(["git", *args], clone)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and this checkout's history")
    target = tmp_path / "clone"
    result = run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(target)], tmp_path)
    assert result.returncode == 0, result.stderr
    # an identity of the clone's own: a fresh machine (or CI) has none, and an annotated tag needs one
    git(target, "config", "user.name", "shoe-controller tests")
    git(target, "config", "user.email", "tests@shoe-controller.invalid")
    # this checkout's scripts as they are now (they may not be committed yet)
    for name in ("release", "build-deb"):
        shutil.copy(ROOT / "scripts" / name, target / "scripts" / name)
    git(target, "add", "scripts")
    git(target, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "--allow-empty", "-m", "scripts")
    for tag in git(target, "tag").split():
        git(target, "tag", "-d", tag)
    return target


def refusal(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def previous_release(clone: Path) -> str:
    log = git(clone, "log", "--format=%H %s").splitlines()
    commits = [line.split()[0] for line in log if line.split(" ", 1)[1].startswith(PREVIOUS_RELEASE)]
    assert commits, f"no commit whose message starts {PREVIOUS_RELEASE!r} (a shallow clone?)"
    return commits[-1]


@pytest.mark.e2e
def test_release_refuses_a_dirty_tree_and_unreleased_entries(clone: Path) -> None:
    (clone / "scratch.txt").write_text("not committed\n")
    assert "not clean" in refusal(run(["scripts/release", "--no-build"], clone))
    (clone / "scratch.txt").unlink()
    # an entry under Unreleased at HEAD (a change made after the version's section was written) is not the
    # version's: it is refused until it is moved into the version's section
    text = (clone / "CHANGELOG.md").read_text().replace("## Unreleased\n", "## Unreleased\n\n- A change.\n", 1)
    (clone / "CHANGELOG.md").write_text(text)
    git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-am", "an unreleased change")
    said = refusal(run(["scripts/release", "--no-build"], clone))
    assert 'under "## Unreleased"' in said, said
    assert git(clone, "tag") == ""


@pytest.mark.e2e
def test_release_tags_the_commit_that_wrote_the_version_once(clone: Path) -> None:
    commit = previous_release(clone)
    made = run(["scripts/release", "--at", commit, "--no-build"], clone)
    assert made.returncode == 0, made.stderr
    assert git(clone, "rev-parse", "v0.2.0^{commit}") == commit
    assert git(clone, "cat-file", "-t", "v0.2.0") == "tag"  # annotated
    message = git(clone, "tag", "-l", "--format=%(contents)", "v0.2.0")
    assert message.startswith("shoe-controller 0.2.0\n\n## 0.2.0 - "), message
    assert "\n### Added\n" in message, message  # the section whole, its headings not taken for comments
    again = run(["scripts/release", "--at", commit, "--no-build"], clone)
    assert again.returncode == 0 and "already" in again.stdout, again.stdout + again.stderr
    after = git(clone, "rev-list", "--ancestry-path", f"{commit}..HEAD").split()[-1]  # still 0.2.0
    elsewhere = refusal(run(["scripts/release", "--at", after, "--no-build"], clone))
    assert "exists already, on another commit" in elsewhere, elsewhere


@pytest.mark.e2e
def test_release_refuses_a_version_without_its_changelog_section(clone: Path) -> None:
    text = (clone / "CHANGELOG.md").read_text().replace("## 0.2.0 - ", "## 0.2.0-draft - ")
    (clone / "CHANGELOG.md").write_text(text)
    git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-am", "no section")
    said = refusal(run(["scripts/release", "--at", previous_release(clone), "--no-build"], clone))
    assert 'no section "## 0.2.0 - YYYY-MM-DD"' in said, said


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--arch", "i386"], "unsupported architecture: i386"),
        (["--tree", "/nonexistent"], "no such tree: /nonexistent"),
        (["--tree", "/"], "not the project's source tree"),
        (["--frobnicate"], "unknown argument: --frobnicate"),
    ],
)
@pytest.mark.e2e
def test_build_deb_refuses_in_one_line(argv: list[str], says: str, tmp_path: Path) -> None:
    result = run([str(ROOT / "scripts" / "build-deb"), "--out", str(tmp_path), *argv], tmp_path)
    assert result.returncode != 0
    assert says in result.stderr.splitlines()[0], result.stderr
    assert "Traceback" not in result.stderr and not list(tmp_path.iterdir())
