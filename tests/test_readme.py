"""The newcomer path: after ``make demo`` the README's next commands work as written, the demo
prints them, and ``make demo`` installs only the runtime lock."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
MAKEFILE = (ROOT / "Makefile").read_text()
MARKER = "After `make demo`, these work as written"


def readme_commands() -> list[str]:
    after = README[README.index(MARKER) :]
    block = re.search(r"```sh\n(.*?)```", after, re.S)
    assert block, "no command block after the marker"
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "monitor", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_readme_commands_work_after_the_demo(tmp_path: Path) -> None:
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "sessions.jsonl.gz", tmp_path / "examples")
    # What `make demo` runs (its replay line), in a copy of the repository root's layout.
    demo = re.search(r"\$\(MONITOR\) (replay [^|\n]+?) \|\|", MAKEFILE)
    assert demo is not None
    done = _run(shlex.split(demo.group(1)), tmp_path)
    assert done.returncode == 3, done.stderr  # the two bad example lines, on purpose
    assert (tmp_path / "monitor.db").exists()
    commands = readme_commands()
    assert len(commands) >= 4
    for line in commands:
        words = shlex.split(line)
        assert words[0] == ".venv/bin/monitor", line  # where the command lives, said as such
        done = _run(words[1:], tmp_path)
        assert done.returncode == 0, (line, done.stderr)
        assert done.stdout.strip(), (line, done.stderr)  # each one shows something
        assert "Traceback" not in done.stderr


def test_the_demo_prints_the_next_commands() -> None:
    demo = MAKEFILE[MAKEFILE.index("\ndemo:") :].split("\n\n")[0]
    echoed = [line for line in demo.splitlines() if "@echo" in line and "$(MONITOR) " in line]
    printed = {line.split("$(MONITOR) ", 1)[1].split("  ")[0].rstrip('"') for line in echoed}
    readme = {line.removeprefix(".venv/bin/monitor ") for line in readme_commands()}
    assert printed - {"--help"} <= readme, printed - readme
    assert len(printed) >= 4


def test_make_demo_installs_only_the_runtime_lock() -> None:
    demo = re.search(r"^demo: (.*)$", MAKEFILE, re.M)
    assert demo is not None and demo.group(1).split() == ["$(VENV)/.runtime"]
    runtime = MAKEFILE[MAKEFILE.index("$(VENV)/.runtime:") :].split("\n\n")[0]
    assert "$(RUNTIME_LOCK)" in runtime and "DEV_LOCK" not in runtime and "[dev]" not in runtime
    assert "RUNTIME_LOCK := requirements/runtime.txt" in MAKEFILE
