"""The dependency pins: the locks agree with pyproject.toml and with each other, and the worker
refuses a Faust outside the range its tests pass on."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from monitor.stream.versions import DISTRIBUTION, SUPPORTED, UnsupportedVersion, check_faust

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def pins(lock: Path) -> dict[str, Version]:
    out: dict[str, Version] = {}
    for line in lock.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        if m:
            out[canonicalize_name(m.group(1))] = Version(m.group(2))
    return out


def test_pyproject_declares_the_supported_faust_range() -> None:
    (faust,) = [
        Requirement(r) for r in PROJECT["dependencies"] if Requirement(r).name == DISTRIBUTION
    ]
    assert faust.specifier == SUPPORTED


@pytest.mark.parametrize(
    ("lock", "requirements"),
    [
        ("runtime.txt", PROJECT["dependencies"]),
        ("dev.txt", PROJECT["dependencies"] + PROJECT["optional-dependencies"]["dev"]),
    ],
)
def test_each_lock_pins_every_declared_dependency_within_its_range(
    lock: str, requirements: list[str]
) -> None:
    pinned = pins(ROOT / "requirements" / lock)
    for text in requirements:
        req = Requirement(text)
        name = canonicalize_name(req.name)
        assert name in pinned, f"{req.name} is not in requirements/{lock}: run `make lock`"
        assert pinned[name] in req.specifier, f"{lock} pins {name} {pinned[name]} outside {req}"


def test_the_runtime_lock_is_the_development_lock_without_the_dev_extra() -> None:
    runtime = pins(ROOT / "requirements" / "runtime.txt")
    dev = pins(ROOT / "requirements" / "dev.txt")
    assert {k: dev.get(k) for k in runtime} == runtime
    assert canonicalize_name("pytest") not in runtime


def test_the_installed_faust_is_supported() -> None:
    assert Version(check_faust()) in SUPPORTED


@pytest.mark.parametrize("version", ["0.11.3", "0.13.2", "0.16.0", "1.0", "not-a-version"])
def test_a_faust_outside_the_range_is_refused_with_the_range_named(version: str) -> None:
    with pytest.raises(UnsupportedVersion) as info:
        check_faust(version)
    message = str(info.value)
    assert version in message and str(SUPPORTED) in message and "\n" not in message


def test_versions_inside_the_range_pass() -> None:
    assert check_faust("0.15.3") == "0.15.3"
    assert check_faust("0.15.9") == "0.15.9"
