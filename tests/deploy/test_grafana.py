"""The Grafana dashboard and its provisioning are well-formed, and every expression (dashboard
and rules alike) names only metrics ``monitor.metrics`` defines or recording rules defined in
``rules.yml``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from monitor.metrics import build_metrics

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "compaction-monitor.json"
RULES = DEPLOY / "prometheus" / "rules.yml"
PROVISIONING = DEPLOY / "grafana" / "provisioning"

#: Series Prometheus makes itself.
BUILTIN_SERIES = {"up", "ALERTS", "ALERTS_FOR_STATE"}
_KEYWORDS = {"and", "or", "unless", "offset", "bool", "inf", "nan", "group_left", "group_right"}
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_IDENT = re.compile(r"(?<![\w.$])[A-Za-z_:][\w:]*")


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (functions, labels and keywords removed)."""
    text = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', "", expr)
    text = re.sub(r"\{[^}]*\}", "", text)
    text = re.sub(r"\[[^\]]*\]", "", text)
    text = _GROUPING.sub(" ", text)
    text = re.sub(r"\$\w+", "", text)
    names = set()
    for match in _IDENT.finditer(text):
        rest = text[match.end() :].lstrip()
        if rest.startswith("(") or match.group() in _KEYWORDS:
            continue
        names.add(match.group())
    return names


def known_series() -> set[str]:
    """Every series name the monitor exposes, as Prometheus stores them."""
    suffixes = {
        "counter": ("_total", "_created"),
        "gauge": ("",),
        "histogram": ("_bucket", "_sum", "_count", "_created"),
    }
    names = set(BUILTIN_SERIES)
    for fam in build_metrics().registry.collect():
        names.update(fam.name + suffix for suffix in suffixes[fam.type])
    return names


def load_rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load(RULES.read_text())
    return [rule for group in doc["groups"] for rule in group["rules"]]


def recorded_names() -> set[str]:
    return {rule["record"] for rule in load_rules() if "record" in rule}


def load_dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return data


def panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for panel in dashboard["panels"]:
        out.append(panel)
        out.extend(panel.get("panels", []))
    return out


def dashboard_exprs() -> list[tuple[str, str]]:
    return [
        (panel["title"], target["expr"])
        for panel in panels(load_dashboard())
        for target in panel.get("targets", [])
    ]


def test_extractor_finds_metrics_and_nothing_else() -> None:
    expr = (
        'sum by (kind) (rate(foo_total{kind="a", job=~"x"}[$__rate_interval]))'
        " / on() group_left histogram_quantile(0.9, sum by (le) (rate(bar_bucket[5m])))"
        " > 1e3 and rec:ord:ing offset 1h or time() - baz"
    )
    assert metric_names(expr) == {"foo_total", "bar_bucket", "rec:ord:ing", "baz"}


def test_dashboard_is_well_formed() -> None:
    dash = load_dashboard()
    assert dash["uid"] == "compaction-monitor"
    assert dash["title"]
    assert [v["name"] for v in dash["templating"]["list"]] == [
        "datasource", "compactor", "agent", "instance"
    ]  # fmt: skip
    all_panels = panels(dash)
    ids = [p["id"] for p in all_panels]
    assert len(ids) == len(set(ids))
    cells: set[tuple[int, int]] = set()
    for panel in all_panels:
        pos = panel["gridPos"]
        assert pos["x"] >= 0 and pos["x"] + pos["w"] <= 24, panel["title"]
        covered = {
            (x, y)
            for x in range(pos["x"], pos["x"] + pos["w"])
            for y in range(pos["y"], pos["y"] + pos["h"])
        }
        assert not covered & cells, f"{panel['title']} overlaps another panel"
        cells |= covered
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        refs = [t["refId"] for t in panel["targets"]]
        assert refs and len(refs) == len(set(refs)), panel["title"]
        assert all(t["expr"].strip() for t in panel["targets"]), panel["title"]


def test_dashboard_covers_the_on_call_questions() -> None:
    exprs = " ".join(expr for _, expr in dashboard_exprs())
    for needle in (
        "compaction_monitor_events_consumed_total",  # ingest rate
        "signal:compaction_monitor_flags_per_compaction:ratio1d_offset1h",  # the baseline
        "compactor:compaction_monitor_flags_per_compaction_others:ratio1h",  # the canary
        "compaction_monitor_dead_letters_total",
        "compaction_monitor_consumer_lag_messages",
        "compaction_monitor_event_lag_seconds_bucket",
        "compaction_monitor_sink_write_errors_total",
        "compaction_monitor_intake_items_sampled_total[7d]",
        "compaction_monitor_survival_items_total",  # survival per compactor and class
        "compactor_class:compaction_monitor_survival_absent:ratio1h",  # against its budget
    ):
        assert needle in exprs, needle


def test_template_variables_filter_the_panels() -> None:
    """compactor, agent and instance are queries over label values, multi-valued with All,
    and every panel on raw flag or compaction series filters by all three."""
    variables = {v["name"]: v for v in load_dashboard()["templating"]["list"]}
    for name in ("compactor", "agent", "instance"):
        var = variables[name]
        assert var["type"] == "query" and var["includeAll"] and var["multi"]
        assert var["allValue"] == ".*"
        assert var["definition"].startswith("label_values(compaction_monitor_")
        assert var["definition"].endswith(f", {name})")
        assert var["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
    for title, expr in dashboard_exprs():
        for series in re.findall(r"compaction_monitor_(?:flags|compactions)_total\{[^}]*\}", expr):
            for name in ("compactor", "agent", "instance"):
                assert f'{name}=~"${name}"' in series, (title, series)
        if "compaction_monitor_" in expr and "_total{" in expr:
            assert 'instance=~"$instance"' in expr, title


def test_dashboard_names_only_existing_series() -> None:
    known = known_series() | recorded_names()
    for title, expr in dashboard_exprs():
        names = metric_names(expr)
        assert names, (title, expr)
        assert names <= known, (title, names - known)


def test_rules_name_only_existing_series() -> None:
    known = known_series()
    for rule in load_rules():  # a recording rule may use only those defined before it
        names = metric_names(rule["expr"])
        assert names <= known, (rule.get("record") or rule.get("alert"), names - known)
        if "record" in rule:
            known.add(rule["record"])


@pytest.mark.prometheus
def test_dashboard_expressions_parse(tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian package `prometheus`)")
    rules = [
        {"record": f"dashboard:panel_{i}", "expr": expr.replace("$__rate_interval", "5m")}
        for i, (_, expr) in enumerate(dashboard_exprs())
    ]
    path = tmp_path / "dashboard_rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    done = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_provisioning_points_at_the_dashboard() -> None:
    (ds_file,) = (PROVISIONING / "datasources").glob("*.yml")
    datasources = yaml.safe_load(ds_file.read_text())
    assert datasources["apiVersion"] == 1
    (ds,) = datasources["datasources"]
    assert ds["type"] == "prometheus"
    assert ds["url"].startswith("http")

    (db_file,) = (PROVISIONING / "dashboards").glob("*.yml")
    providers = yaml.safe_load(db_file.read_text())
    assert providers["apiVersion"] == 1
    (provider,) = providers["providers"]
    assert provider["type"] == "file"
    assert provider["options"]["path"].endswith("compaction-monitor")
