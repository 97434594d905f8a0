"""The package as a user installs it: the wheel built from this tree, installed with the runtime
lock into a fresh virtual environment, run from another directory (not the checkout).

It proves the wheel's own files run (``monitor.__file__`` is in the new environment), that the
migrations ship inside it (``db upgrade`` on Postgres), and that replay, the error paths and a
worker on the test broker work there. Dependencies come from the runtime lock through pip's
cache, so after a first run this costs about the time of a venv and one wheel build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from monitor import __version__
from monitor.testing import free_port, stop_pid, worker_env

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.kafka]


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def _heads() -> frozenset[str]:
    """The head revision(s) the checkout's migrations end in."""
    from monitor.store.db import make_engine, revisions

    return revisions(make_engine("sqlite://"))[1]


def _clean_env(venv: Path) -> dict[str, str]:
    """The environment of a user with the new venv first on PATH (nothing of the checkout)."""
    keep = ("HOME", "LANG", "LC_ALL", "TMPDIR", "PIP_CERT", "PIP_DEFAULT_TIMEOUT", "PIP_INDEX_URL")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["PATH"] = f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(venv, a working directory outside the checkout) with the wheel installed."""
    base = tmp_path_factory.mktemp("installed")
    source = base / "source"  # a copy: the build leaves nothing in the checkout
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "monitor", source / "monitor",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))  # fmt: skip
    venv = base / "venv"
    env = _clean_env(venv)
    python = str(venv / "bin" / "python")
    _run([sys.executable, "-m", "venv", str(venv)], base, env, timeout=120)
    _run([python, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(base / "dist"), str(source)],
         base, env)  # fmt: skip
    (wheel,) = (base / "dist").glob("compaction_monitor-*.whl")
    _run([python, "-m", "pip", "install", "-q", "-r", str(ROOT / "requirements" / "runtime.txt")],
         base, env)  # fmt: skip
    _run([python, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], base, env)
    _run([python, "-m", "pip", "check"], base, env)
    elsewhere = base / "elsewhere"
    (elsewhere / "examples").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "sessions.jsonl.gz", elsewhere / "examples")
    yield venv, elsewhere


def _monitor(venv: Path, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**_clean_env(venv), **env}
    return subprocess.run(
        [str(venv / "bin" / "monitor"), *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_wheel_is_what_runs(installed: tuple[Path, Path]) -> None:
    venv, cwd = installed
    out = _run([str(venv / "bin" / "python"), "-c", "import monitor; print(monitor.__file__)"],
               cwd, _clean_env(venv))  # fmt: skip
    path = Path(out.strip())
    assert path.is_relative_to(venv) and "site-packages" in path.parts, path
    assert not path.is_relative_to(ROOT)
    migrations = path.parent / "store" / "migrations" / "versions"
    shipped = ROOT / "monitor" / "store" / "migrations" / "versions"
    assert sorted(p.name for p in migrations.glob("*.py")) == sorted(
        p.name for p in shipped.glob("*.py")
    )
    done = _monitor(venv, cwd, "--version")
    assert done.returncode == 0 and done.stdout.strip() == f"monitor {__version__}"


def test_replay_from_another_directory(installed: tuple[Path, Path]) -> None:
    venv, cwd = installed
    done = _monitor(venv, cwd, "replay", "examples/sessions.jsonl.gz", "--no-progress")
    assert done.returncode in (0, 3), done.stderr
    assert "Traceback" not in done.stderr
    counts = done.stdout.splitlines()[1]
    assert counts.startswith("flags: repeated_tool_call ")
    assert int(counts.split()[2]) > 0  # flags were found and printed
    assert (cwd / "monitor.db").exists()
    listed = _monitor(venv, cwd, "flags", "--limit", "2", "--json")
    assert listed.returncode == 0
    (first, _) = json.loads(listed.stdout)["flags"]
    assert first["source"]["file"] == str(cwd / "examples" / "sessions.jsonl.gz")


def test_errors_from_the_installed_package_are_one_line(installed: tuple[Path, Path]) -> None:
    venv, cwd = installed
    cases = [
        (("replay", "missing.jsonl"), 1),
        (("flags", "--db", "notaurl"), 1),
        (("flags", "--db", "postgresql://monitor@127.0.0.1:1/monitor"), 1),
        (("flags", "--since", "yesterday"), 2),
    ]
    for args, status in cases:
        done = _monitor(venv, cwd, *args)
        assert done.returncode == status, (args, done.stderr)
        assert "Traceback" not in done.stderr and done.stderr.strip(), args
        assert len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)


def test_db_upgrade_and_a_worker_on_postgres_and_the_broker(
    installed: tuple[Path, Path], pg_url: str, tansu_broker: str, tmp_path: Path
) -> None:
    venv, cwd = installed
    done = _monitor(venv, cwd, "db", "upgrade", "--db", pg_url)
    assert done.returncode == 0, done.stderr
    dsn = pg_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    assert row is not None and row[0] in _heads()
    port = free_port()
    env = {
        **_clean_env(venv),
        **worker_env(tansu_broker, pg_url, f"installed-{port}", WEB_PORT=str(port)),
    }
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(venv / "bin" / "monitor"), "worker"],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 120
        status = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=3) as r:
                    status = r.status
                    break
            except (urllib.error.URLError, OSError):
                time.sleep(0.5)
        assert status == 200, log.read_text(errors="replace")[-4000:]
    finally:
        stop_pid(proc, timeout_s=20)
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text[-4000:]
