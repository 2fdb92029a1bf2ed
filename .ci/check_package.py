"""CI's packaging check: build, check, install alone, run the demo from the wheel.

Run by ``tox -e package`` (which provides ``build`` and ``twine``); it works on
any OS (the hosted workflow runs it too). Steps, each failing the run:

1. ``python -m build`` makes an sdist and a wheel into a fresh folder;
2. ``twine check --strict`` accepts both;
3. the wheel holds ``py.typed`` and the license and no tests; the sdist holds the license;
4. a fresh virtual environment gets the wheel alone (and its dependencies);
5. there, ``mcpclient --version``, the installed metadata and CHANGELOG.md agree
   with ``mcpclient._core.version.VERSION``, and ``python -m mcpclient demo`` runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.release import changelog_problems, source_version  # noqa: E402


def run(*argv: str | Path, cwd: Path = ROOT) -> str:
    print("+", " ".join(map(str, argv)), flush=True)
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, check=True, capture_output=True, text=True
    )
    return done.stdout


def check_wheel(wheel: Path, version: str) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "mcpclient/py.typed" in names, "the wheel has no mcpclient/py.typed"
    assert any(
        n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in names
    ), f"the wheel carries no LICENSE: {names[-8:]}"
    strays = [n for n in names if n.split("/")[0] in ("tests", "benchmarks", "docs")]
    assert not strays, f"the wheel carries files outside the package: {strays[:5]}"
    assert wheel.name.startswith(f"mcpclient-{version}-"), wheel.name


def check_sdist(sdist: Path, version: str) -> None:
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    top = f"mcpclient-{version}"
    for required in ("LICENSE", "README.md", "CHANGELOG.md", "setup.cfg", "mcpclient/py.typed"):
        assert f"{top}/{required}" in names, f"the sdist has no {required}"


def main() -> int:
    version = source_version()
    problems = changelog_problems((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), version)
    assert not problems, problems
    with tempfile.TemporaryDirectory(prefix="mcpclient-package-") as tmp:
        out = Path(tmp) / "dist"
        run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", out, ROOT)
        (wheel,) = out.glob("*.whl")
        (sdist,) = out.glob("*.tar.gz")
        run(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist)
        check_wheel(wheel, version)
        check_sdist(sdist, version)

        env_dir = Path(tmp) / "venv"
        venv.EnvBuilder(with_pip=True).create(env_dir)
        bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
        python = bin_dir / ("python.exe" if os.name == "nt" else "python")
        run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel)
        # Run from the venv's folder so the checkout's mcpclient/ cannot shadow the wheel.
        where = run(python, "-c", "import mcpclient; print(mcpclient.__file__)", cwd=env_dir)
        assert Path(where.strip()).is_relative_to(env_dir), where
        cli = run(bin_dir / "mcpclient", "--version", cwd=env_dir).strip()
        meta = run(
            python,
            "-c",
            "import importlib.metadata as m; print(m.version('mcpclient'))",
            cwd=env_dir,
        ).strip()
        assert cli == f"mcpclient {version}", (cli, version)
        assert meta == version, (meta, version)
        print(run(python, "-m", "mcpclient", "demo", cwd=env_dir))
    print(f"mcpclient {version}: built, checked, installed alone, demo ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
