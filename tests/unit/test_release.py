"""The package's release metadata: one version everywhere, the license, the classifiers.

``tests/support/release.py`` holds the rule CHANGELOG.md is checked against (also
by the release workflow, against the pushed tag); ``.ci/check_package.py`` (``tox
-e package``) checks the built wheel and sdist themselves.
"""

from __future__ import annotations

import configparser
from importlib import metadata

import pytest

import mcpclient
from mcpclient._core.version import VERSION
from mcpclient.cli import main
from tests.support.release import (
    RELEASE_URLS,
    ROOT,
    changelog_problems,
    source_version,
    url_problems,
)

SETUP = configparser.ConfigParser()
SETUP.read(ROOT / "setup.cfg", encoding="utf-8")
META = SETUP["metadata"]


def _lines(key: str) -> list[str]:
    return [line.strip() for line in META[key].strip().splitlines() if line.strip()]


def test_the_version_is_written_once_and_read_by_setup_cfg() -> None:
    assert META["version"] == "attr: mcpclient._core.version.VERSION"
    assert source_version() == VERSION == mcpclient.__version__


def test_the_installed_metadata_has_the_version() -> None:
    assert metadata.version("mcpclient") == VERSION


def test_the_command_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"mcpclient {VERSION}"


def test_the_changelog_agrees_with_the_version() -> None:
    assert changelog_problems((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), VERSION) == []


HEAD = "# Changelog\n\n"


@pytest.mark.parametrize(
    ("text", "release", "tag", "problem"),
    [
        (HEAD + "## [Unreleased]\n- x\n\n## [0.1.0] - 2026-01-01\n", False, None, "newest release"),
        (HEAD + "## [Unreleased]\n- x\n", True, "v0.2.0", "needs a '## [0.2.0]"),
        (HEAD + "## [Unreleased]\n- x\n\n## [0.2.0] - 2026-01-01\n", True, "v0.2.0", "empty"),
        (HEAD + "## [Unreleased]\n\n## [0.2.0]\n- y\n", True, "v0.2.0", "with a date"),
        (HEAD + "## [0.2.0] - 2026-01-01\n- y\n", True, "v0.2.1", "the tag"),
        (HEAD + "nothing\n", False, None, "no '## [...]' section"),
    ],
)
def test_a_disagreeing_changelog_or_tag_is_reported(
    text: str, release: bool, tag: str | None, problem: str
) -> None:
    problems = changelog_problems(text, "0.2.0", release=release, tag=tag)
    assert any(problem.replace("with a date", "YYYY-MM-DD") in p for p in problems), problems


@pytest.mark.parametrize(
    "text",
    [
        HEAD + "## [Unreleased]\n- x\n",
        HEAD + "## [Unreleased]\n- x\n\n## [0.2.0] - 2026-01-01\n",
    ],
)
def test_an_agreeing_changelog_in_development(text: str) -> None:
    assert changelog_problems(text, "0.2.0") == []


def test_a_release_changelog_and_tag_that_agree() -> None:
    text = HEAD + "## [Unreleased]\n\n## [0.2.0] - 2026-01-01\n- y\n\n## [0.1.0] - 2025-01-01\n"
    assert changelog_problems(text, "0.2.0", release=True, tag="v0.2.0") == []


def test_the_license_is_mit_named_in_setup_cfg_and_present() -> None:
    assert META["license"] == "MIT"
    assert _lines("license_files") == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "License :: OSI Approved :: MIT License" in _lines("classifiers")


def test_classifiers_name_every_supported_python_and_os() -> None:
    classifiers = set(_lines("classifiers"))
    for version in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in classifiers
    for system in (
        "Operating System :: POSIX :: Linux",
        "Operating System :: MacOS",
        "Operating System :: Microsoft :: Windows",
    ):
        assert system in classifiers
    assert "Typing :: Typed" in classifiers
    assert SETUP["options"]["python_requires"] == ">=3.11"


def test_no_project_url_is_guessed_while_the_project_is_not_hosted() -> None:
    # Not hosted anywhere yet: an invented address would point at someone else's repository.
    assert "url" not in META
    assert "project_urls" not in META


def test_a_release_is_refused_until_every_project_url_is_set() -> None:
    assert len(url_problems((ROOT / "setup.cfg").read_text(encoding="utf-8"))) == 4
    hosted = "[metadata]\nproject_urls =\n" + "".join(
        f"    {name} = https://example.org/{name.lower()}\n" for name in RELEASE_URLS
    )
    assert url_problems(hosted) == []
    assert url_problems(hosted.replace("https://example.org/issues", "")) == [
        "setup.cfg names no https Issues URL in project_urls (set them before a release)"
    ]


def test_the_wheel_carries_py_typed() -> None:
    assert SETUP["options.package_data"]["mcpclient"].strip() == "py.typed"
    assert (ROOT / "mcpclient" / "py.typed").is_file()


@pytest.mark.parametrize("name", ["ci.yml", "release.yml"])
def test_the_hosted_workflows_parse_and_run_on_every_os_and_python(name: str) -> None:
    # The hosted workflows cannot run here; this at least keeps them valid YAML of the
    # right shape (PyYAML is not a dependency: skipped where it is not installed).
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text(encoding="utf-8"))
    assert workflow["jobs"] and all("steps" in job for job in workflow["jobs"].values())
    if name == "ci.yml":
        matrix = workflow["jobs"]["test"]["strategy"]["matrix"]
        assert matrix["os"] == ["ubuntu-latest", "macos-latest", "windows-latest"]
        assert matrix["python"] == ["3.11", "3.12", "3.13"]
