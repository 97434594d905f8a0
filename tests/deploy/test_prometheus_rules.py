"""The shipped Prometheus rules: promtool accepts them and their unit tests pass, every alert is
documented and has a runbook section, and every alert is tested both firing and not firing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

PROMETHEUS = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
RULES = PROMETHEUS / "rules.yml"
UNIT_TESTS = sorted((PROMETHEUS / "tests").glob("*.yml"))
README = PROMETHEUS.parent / "README.md"
#: Every runbook link starts with the configured base (an external label), so it is absolute.
BASE_TEMPLATE = "{{ $externalLabels.runbook_base_url }}"


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.skip("promtool not installed (Debian package `prometheus`)")
    return found


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_promtool(), *args], capture_output=True, text=True, timeout=240, cwd=PROMETHEUS
    )


def _alerts() -> list[dict[str, Any]]:
    doc = yaml.safe_load(RULES.read_text())
    return [rule for group in doc["groups"] for rule in group["rules"] if "alert" in rule]


def _anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return slug.replace(" ", "-")


@pytest.mark.prometheus
def test_promtool_checks_rules_and_config() -> None:
    for args in (("check", "rules", str(RULES)), ("check", "config", "prometheus.yml")):
        done = _run(*args)
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.prometheus
@pytest.mark.parametrize("unit_test", UNIT_TESTS, ids=lambda p: p.stem)
def test_promtool_unit_tests_pass(unit_test: Path) -> None:
    done = _run("test", "rules", str(unit_test))
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_alert_is_annotated_and_has_a_runbook_section() -> None:
    headings = {
        _anchor(line.lstrip("#"))
        for line in README.read_text().splitlines()
        if line.startswith("#")
    }
    alerts = _alerts()
    assert {a["alert"] for a in alerts} >= {
        "FlagRateSpike",
        "CompactorVersionFlagRateHigh",
        "NoEventsIngested",
        "DeadLetterRateHigh",
        "ConsumerLagGrowing",
        "SinkFailing",
        "IntakeStale",
    }
    for alert in alerts:
        notes = alert["annotations"]
        assert notes["summary"] and notes["description"], alert["alert"]
        path, _, anchor = notes["runbook_url"].partition("#")
        assert path == BASE_TEMPLATE + "/deploy/README.md", alert["alert"]
        assert anchor == _anchor(alert["alert"]) and anchor in headings, alert["alert"]
        assert alert["labels"]["severity"] in {"page", "ticket"}
        assert "for" in alert, alert["alert"]


def test_every_alert_is_tested_firing_and_not_firing() -> None:
    firing: set[str] = set()
    silent: set[str] = set()
    for path in UNIT_TESTS:
        doc = yaml.safe_load(path.read_text())
        assert doc["rule_files"] == ["../rules.yml"], path.name
        for case in doc["tests"]:
            for check in case.get("alert_rule_test", []):
                (firing if check.get("exp_alerts") else silent).add(check["alertname"])
    names = {a["alert"] for a in _alerts()}
    assert names <= firing, names - firing
    assert names <= silent, names - silent


def test_every_prometheus_config_sets_an_absolute_runbook_base() -> None:
    for config in (PROMETHEUS / "prometheus.yml", PROMETHEUS.parent / "compose" / "prometheus.yml"):
        base = yaml.safe_load(config.read_text())["global"]["external_labels"]["runbook_base_url"]
        assert base.startswith("https://") and not base.endswith("/"), config


def test_unit_tests_render_absolute_runbook_links() -> None:
    for path in UNIT_TESTS:
        doc = yaml.safe_load(path.read_text())
        for case in doc["tests"]:
            base = case.get("external_labels", {}).get("runbook_base_url", "")
            for check in case.get("alert_rule_test", []):
                for alert in check.get("exp_alerts") or []:
                    url = alert.get("exp_annotations", {}).get("runbook_url")
                    if url is not None:
                        assert base.startswith("https://") and url.startswith(base + "/"), url
