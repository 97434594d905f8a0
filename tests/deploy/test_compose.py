"""deploy/compose.yaml and the image: the stack has the services and wiring it needs.

The file is read as Compose reads it (YAML with merge keys, ``${VAR:-default}`` interpolated with
an empty environment), and each reference is followed to what it names: the env vars point at
the services that exist, the commands are ones the monitor's CLI accepts, Prometheus' config and
rules are mounted where the config says, Grafana's provisioning finds the dashboard. promtool and
amtool check the configs as laid out inside the containers. The image builds and runs where a
Docker engine exists.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import uuid
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml
from sqlalchemy.engine import make_url

from monitor.cli import build_parser, cmd_db_upgrade
from monitor.config import Settings, load_settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
DOCKERFILE = DEPLOY / "Dockerfile"
RULES = DEPLOY / "prometheus" / "rules.yml"

_VAR = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")


def interpolate(value: Any) -> Any:
    """Compose's ``${VAR:-default}`` with nothing set; a variable without a default fails."""
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            assert m.group(2) is not None, f"${{{m.group(1)}}} has no default"
            return m.group(2)

        return _VAR.sub(sub, value)
    if isinstance(value, dict):
        return {k: interpolate(v) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v) for v in value]
    return value


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    doc: dict[str, Any] = interpolate(yaml.safe_load(COMPOSE.read_text()))
    return doc


def service(compose: dict[str, Any], name: str) -> dict[str, Any]:
    svc: dict[str, Any] = compose["services"][name]
    return svc


def env_of(svc: dict[str, Any]) -> dict[str, str]:
    env = svc.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: str(v) for k, v in env.items()}


def mounts(svc: dict[str, Any]) -> dict[str, Path]:
    """Container path -> host path, for the service's bind mounts."""
    out = {}
    for vol in svc.get("volumes", []):
        source, target = vol.split(":")[:2]
        if source.startswith("."):
            out[target] = (DEPLOY / source).resolve()
    return out


def flag(command: list[str], name: str) -> str:
    values = [arg.split("=", 1)[1] for arg in command if arg.startswith(f"--{name}=")]
    assert len(values) == 1, f"--{name} given {len(values)} times"
    return values[0]


def host_port(address: str) -> tuple[str, int]:
    address = address.split("://", 1)[-1]
    host, _, port = address.rpartition(":")
    return host, int(port)


def depends(svc: dict[str, Any]) -> dict[str, str]:
    deps = svc.get("depends_on", {})
    if isinstance(deps, list):
        return dict.fromkeys(deps, "service_started")
    return {name: spec.get("condition", "service_started") for name, spec in deps.items()}


# --- services and wiring -------------------------------------------------------------------------


def test_the_stack_has_every_service(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) >= {
        "kafka",
        "postgres",
        "migrate",
        "worker",
        "prometheus",
        "alertmanager",
        "grafana",
    }


def test_kafka_is_a_single_kraft_broker(compose: dict[str, Any]) -> None:
    kafka = service(compose, "kafka")
    env = env_of(kafka)
    assert set(env["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}
    voters = env["KAFKA_CONTROLLER_QUORUM_VOTERS"].split(",")
    assert voters == [f"{env['KAFKA_NODE_ID']}@kafka:9093"]
    assert "KAFKA_ZOOKEEPER_CONNECT" not in env
    for key in (
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR",
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR",
    ):
        assert env[key] == "1", key  # one broker cannot hold more replicas
    assert kafka["healthcheck"]["test"]


def _advertised(kafka: dict[str, Any]) -> dict[str, tuple[str, int]]:
    listeners = env_of(kafka)["KAFKA_ADVERTISED_LISTENERS"].split(",")
    return {name: host_port(rest) for name, _, rest in (li.partition("://") for li in listeners)}


def test_workers_point_at_the_stack_broker_and_database(compose: dict[str, Any]) -> None:
    worker = service(compose, "worker")
    env = env_of(worker)
    settings = load_settings(environ=env)

    internal = _advertised(service(compose, "kafka"))[
        env_of(service(compose, "kafka"))["KAFKA_INTER_BROKER_LISTENER_NAME"]
    ]
    assert host_port(settings.broker) == internal == ("kafka", 9092)

    url = make_url(settings.db_url)
    pg = env_of(service(compose, "postgres"))
    assert url.get_backend_name() == "postgresql"
    assert (url.host, url.port or 5432) == ("postgres", 5432)
    assert (url.username, url.password, url.database) == (
        pg["POSTGRES_USER"],
        pg["POSTGRES_PASSWORD"],
        pg["POSTGRES_DB"],
    )
    assert env_of(service(compose, "migrate"))["MONITOR_DB_URL"] == env["MONITOR_DB_URL"]


def test_every_monitor_variable_is_a_setting(compose: dict[str, Any]) -> None:
    fields = {"MONITOR_" + name.upper() for name in Settings.__struct_fields__}
    for name in ("migrate", "worker"):
        env = env_of(service(compose, name))
        unknown = {k for k in env if k.startswith("MONITOR_")} - fields
        assert not unknown, f"{name}: {unknown}"
        load_settings(environ=env)  # and every value converts


def test_two_workers_and_enough_partitions(compose: dict[str, Any]) -> None:
    worker = service(compose, "worker")
    replicas = worker["deploy"]["replicas"]
    assert replicas == 2
    assert "container_name" not in worker  # a fixed name would allow one replica only
    assert not worker.get("ports"), "a published port cannot be shared by two replicas"
    assert replicas <= load_settings(environ=env_of(worker)).partitions


def test_workers_wait_for_migrations_and_a_healthy_broker(compose: dict[str, Any]) -> None:
    worker_deps = depends(service(compose, "worker"))
    assert worker_deps["migrate"] == "service_completed_successfully"
    assert worker_deps["kafka"] == "service_healthy"
    assert depends(service(compose, "migrate"))["postgres"] == "service_healthy"
    for name, svc in compose["services"].items():
        for dep, condition in depends(svc).items():
            assert dep in compose["services"], f"{name} depends on unknown {dep}"
            if condition == "service_healthy":
                assert service(compose, dep).get("healthcheck"), f"{dep} has no healthcheck"


def test_migration_job_runs_db_upgrade_once(compose: dict[str, Any]) -> None:
    migrate = service(compose, "migrate")
    command = migrate["command"]
    assert command == ["monitor", "db", "upgrade"]
    args = build_parser().parse_args(command[1:])
    assert args.func is cmd_db_upgrade and args.revision == "head"
    assert migrate.get("restart", "no") == "no"
    assert "replicas" not in migrate.get("deploy", {})


def test_services_run_the_image_built_from_the_dockerfile(compose: dict[str, Any]) -> None:
    worker, migrate = service(compose, "worker"), service(compose, "migrate")
    assert worker["image"] == migrate["image"]
    build = worker["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DOCKERFILE
    assert worker["command"][:2] == ["python", "-m"]
    assert importlib.util.find_spec(worker["command"][2] + ".__main__") is not None


# --- Prometheus, Alertmanager, Grafana --------------------------------------------------------


def _prometheus_config(compose: dict[str, Any]) -> tuple[PurePosixPath, dict[str, Any]]:
    prom = service(compose, "prometheus")
    path = PurePosixPath(flag(prom["command"], "config.file"))
    host = mounts(prom)[str(path)]
    config: dict[str, Any] = yaml.safe_load(host.read_text())
    return path, config


def test_prometheus_loads_the_project_rules(compose: dict[str, Any]) -> None:
    prom = service(compose, "prometheus")
    path, config = _prometheus_config(compose)
    mounted = mounts(prom)
    assert config["rule_files"], "no rule files"
    for rule_file in config["rule_files"]:
        in_container = path.parent / rule_file
        assert mounted.get(str(in_container)) == RULES.resolve(), rule_file


def test_prometheus_scrapes_every_worker_and_alerts_alertmanager(compose: dict[str, Any]) -> None:
    _, config = _prometheus_config(compose)
    web_port = load_settings(environ=env_of(service(compose, "worker"))).web_port
    job = next(j for j in config["scrape_configs"] if j["job_name"] == "compaction-monitor")
    assert job.get("metrics_path", "/metrics") == "/metrics"
    (sd,) = job["dns_sd_configs"]
    assert sd["names"] == ["worker"] and sd["type"] == "A" and sd["port"] == web_port

    am = service(compose, "alertmanager")
    (target,) = config["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"]
    assert host_port(target) == ("alertmanager", 9093)
    assert "9093:9093" in am["ports"]


def _lay_out(svc: dict[str, Any], root: Path) -> None:
    """Copy the service's bind mounts under ``root`` at their container paths."""
    for target, source in mounts(svc).items():
        dest = root / target.lstrip("/")
        if source.is_dir():
            shutil.copytree(source, dest)
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, dest)


@pytest.mark.prometheus
def test_promtool_accepts_the_stack_config(compose: dict[str, Any], tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian package `prometheus`)")
    _lay_out(service(compose, "prometheus"), tmp_path)
    path, _ = _prometheus_config(compose)
    done = subprocess.run(
        [promtool, "check", "config", str(tmp_path / str(path).lstrip("/"))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 rule files found" in done.stdout


def _alertmanager_config(compose: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    am = service(compose, "alertmanager")
    host = mounts(am)[flag(am["command"], "config.file")]
    config: dict[str, Any] = yaml.safe_load(host.read_text())
    return host, config


def _rule_alerts() -> list[dict[str, Any]]:
    doc = yaml.safe_load(RULES.read_text())
    return [r for g in doc["groups"] for r in g["rules"] if "alert" in r]


def test_alertmanager_routes_every_severity(compose: dict[str, Any]) -> None:
    _, config = _alertmanager_config(compose)
    receivers = {r["name"] for r in config["receivers"]}
    routed = {}
    for route in config["route"]["routes"]:
        assert route["receiver"] in receivers
        for matcher in route["matchers"]:
            name, _, value = matcher.partition("=")
            if name == "severity":
                routed[value.strip('"')] = route["receiver"]
    severities = {a["labels"]["severity"] for a in _rule_alerts()}
    assert severities <= set(routed), severities - set(routed)
    assert routed["page"] == "page"


def test_alertmanager_inhibitions_name_real_alerts(compose: dict[str, Any]) -> None:
    _, config = _alertmanager_config(compose)
    alerts = {a["alert"] for a in _rule_alerts()}
    for rule in config.get("inhibit_rules", []):
        for matcher in rule["source_matchers"] + rule["target_matchers"]:
            name, _, value = matcher.partition("=")
            if name == "alertname":
                assert value.strip('"') in alerts, value


def test_amtool_accepts_the_alertmanager_config(compose: dict[str, Any]) -> None:
    amtool = shutil.which("amtool")
    if amtool is None:
        pytest.skip("amtool not installed (Debian package `prometheus-alertmanager`)")
    host, _ = _alertmanager_config(compose)
    done = subprocess.run(
        [amtool, "check-config", str(host)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for severity in ("page", "ticket"):
        routed = subprocess.run(
            [amtool, "config", "routes", "test", f"--config.file={host}", f"severity={severity}"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert routed.stdout.strip() == severity, routed.stdout + routed.stderr


def test_grafana_provisions_the_dashboard_and_the_stack_prometheus(
    compose: dict[str, Any],
) -> None:
    grafana = service(compose, "grafana")
    mounted = mounts(grafana)
    providers = mounted["/etc/grafana/provisioning/dashboards"]
    assert providers == (DEPLOY / "grafana" / "provisioning" / "dashboards").resolve()
    for provider_file in providers.glob("*.y*ml"):
        for provider in yaml.safe_load(provider_file.read_text())["providers"]:
            dashboards = mounted[provider["options"]["path"]]
            assert (dashboards / "compaction-monitor.json").is_file()

    sources = [
        (target, host)
        for target, host in mounted.items()
        if target.startswith("/etc/grafana/provisioning/datasources")
    ]
    assert sources
    for _, host in sources:
        for source in yaml.safe_load(host.read_text())["datasources"]:
            assert source["type"] == "prometheus"
            assert host_port(source["url"]) == ("prometheus", 9090)
    assert "prometheus" in depends(grafana)


def test_compose_cli_accepts_the_file() -> None:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("no docker client")
    probe = subprocess.run([docker, "compose", "version"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip("docker compose plugin not installed")
    done = subprocess.run(
        [docker, "compose", "-f", str(COMPOSE), "config", "--quiet"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


# --- the image -----------------------------------------------------------------------------------


def _instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def _final_stage() -> list[tuple[str, str]]:
    steps = _instructions()
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def test_image_runs_unprivileged_with_a_health_check() -> None:
    final = _final_stage()
    users = [rest for word, rest in final if word == "USER"]
    assert users and users[-1].split(":")[0] not in {"root", "0"}
    (health,) = [rest for word, rest in final if word == "HEALTHCHECK"]
    assert "/health" in health and "urllib" in health and "curl" not in health
    assert "slim" in _instructions()[0][1] or any(
        "slim" in rest for word, rest in _instructions() if word == "ARG"
    )


def test_image_installs_the_package_without_the_dev_extra() -> None:
    runs = " ".join(rest for word, rest in _instructions() if word == "RUN")
    assert "pip" in runs and "compaction-monitor" in runs
    assert "[dev]" not in runs and ".[dev" not in runs


def test_image_installs_from_the_runtime_lock() -> None:
    steps = _instructions()
    runs = " ".join(rest for word, rest in steps if word == "RUN")
    copies = " ".join(rest for word, rest in steps if word == "COPY")
    assert "-r requirements/runtime.txt" in runs and "requirements/runtime.txt" in copies
    assert "--no-index" in runs  # the final stage resolves nothing anew
    assert "!requirements/runtime.txt" in (ROOT / ".dockerignore").read_text().splitlines()


def test_image_needs_no_migrations_outside_the_package() -> None:
    """The migrations are package data now: the image copies nothing for them and sets no
    variable to find them; the build context holds only what the wheel is built from."""
    final = _final_stage()
    copies = [rest for word, rest in final if word == "COPY"]
    assert not [c for c in copies if "alembic" in c], copies
    env = " ".join(rest for word, rest in _instructions() if word == "ENV")
    assert "ALEMBIC" not in env
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    for source in ("monitor", "pyproject.toml", "README.md"):
        assert f"!{source}" in ignored or f"!{source}/" in ignored, source


def _docker_engine() -> str:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("no docker client")
    if subprocess.run([docker, "info"], capture_output=True, timeout=30).returncode != 0:
        pytest.skip("no Docker engine (the client alone cannot build)")
    return docker


@pytest.mark.slow
def test_the_image_builds_and_runs_migrations(tmp_path: Path) -> None:
    docker = _docker_engine()
    tag = f"compaction-monitor-test:{uuid.uuid4().hex[:8]}"
    built = subprocess.run(
        [docker, "build", "-f", str(DOCKERFILE), "-t", tag, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    try:
        uid = subprocess.run(
            [docker, "run", "--rm", tag, "id", "-u"], capture_output=True, text=True, timeout=60
        )
        assert uid.returncode == 0 and uid.stdout.strip() != "0"
        migrated = subprocess.run(
            [docker, "run", "--rm", tag, "monitor", "db", "upgrade", "--db", "sqlite:///m.db"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert migrated.returncode == 0, migrated.stderr
    finally:
        subprocess.run([docker, "rmi", "-f", tag], capture_output=True, timeout=60)


def test_image_sets_no_setting_a_config_file_could_not_override() -> None:
    """Env vars win over MONITOR_CONFIG's file, so a setting baked into the image would hide it."""
    env = " ".join(rest for word, rest in _instructions() if word == "ENV")
    fields = {"MONITOR_" + name.upper() for name in Settings.__struct_fields__}
    assert not {name for name in re.findall(r"(MONITOR_\w+)=", env)} & fields
