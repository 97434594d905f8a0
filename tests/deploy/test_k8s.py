"""deploy/k8s: the manifests parse, hang together and configure the worker as Settings expects.

Cross-references are followed: the Deployment's replicas against the configured partitions, every
``MONITOR_*`` variable against ``Settings``, secrets to keys of the Secret, the config mount to
``MONITOR_CONFIG``, ports and probes to the web port, Service and ServiceMonitor selectors to the
pod labels. ``kubectl kustomize`` renders the set where kubectl is installed.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from monitor.cli import build_parser, cmd_db_upgrade
from monitor.config import Settings, load_settings

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"
#: Settings that are secrets: they may reach a pod only through a Secret.
SECRET_SETTINGS = {"db_url", "sasl_password"}
#: MONITOR_ variables that are not settings but read by the monitor all the same.
OTHER_VARIABLES = {"MONITOR_CONFIG"}


def _documents() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


@pytest.fixture(scope="module")
def manifests() -> dict[str, dict[str, Any]]:
    """``Kind/name`` -> manifest."""
    return {f"{d['kind']}/{d['metadata']['name']}": d for d in _documents()}


def one(manifests: dict[str, dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [m for m in manifests.values() if m["kind"] == kind]
    return found


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = workload["spec"]["template"]["spec"]
    return spec


def container(workload: dict[str, Any]) -> dict[str, Any]:
    (c,) = pod_spec(workload)["containers"]
    return c  # type: ignore[no-any-return]


def config_toml(manifests: dict[str, dict[str, Any]]) -> dict[str, Any]:
    data = one(manifests, "ConfigMap")["data"]
    return tomllib.loads(data["monitor.toml"])


def worker_settings(manifests: dict[str, dict[str, Any]], tmp_path: Path) -> Settings:
    """The Settings a worker pod ends up with: the mounted TOML plus its plain env values."""
    path = tmp_path / "monitor.toml"
    path.write_text(one(manifests, "ConfigMap")["data"]["monitor.toml"])
    env = {
        e["name"]: e["value"]
        for e in container(one(manifests, "Deployment"))["env"]
        if "value" in e and e["name"] != "MONITOR_CONFIG"
    }
    return load_settings(environ=env, config_file=path)


def test_every_file_is_deployed_or_documented_as_optional() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    resources = set(kustomization["resources"])
    files = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert resources <= files, resources - files
    assert files - resources == {"servicemonitor.yaml"}


def test_the_config_file_holds_only_settings_and_no_secrets(
    manifests: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    keys = set(config_toml(manifests))
    assert keys <= set(Settings.__struct_fields__), keys - set(Settings.__struct_fields__)
    assert not keys & SECRET_SETTINGS
    worker_settings(manifests, tmp_path)  # and the monitor accepts it


def test_replicas_do_not_exceed_partitions(
    manifests: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    replicas = one(manifests, "Deployment")["spec"]["replicas"]
    assert 1 <= replicas <= worker_settings(manifests, tmp_path).partitions


def test_every_monitor_variable_is_a_setting_and_secrets_come_from_the_secret(
    manifests: dict[str, dict[str, Any]],
) -> None:
    fields = {"MONITOR_" + name.upper() for name in Settings.__struct_fields__}
    secret = one(manifests, "Secret")
    secret_keys = set(secret.get("stringData", {})) | set(secret.get("data", {}))
    for workload in (one(manifests, "Deployment"), one(manifests, "Job")):
        for env in container(workload)["env"]:
            name = env["name"]
            assert name in fields | OTHER_VARIABLES, name
            if name.removeprefix("MONITOR_").lower() in SECRET_SETTINGS:
                assert "value" not in env, f"{name} must come from a Secret"
                ref = env["valueFrom"]["secretKeyRef"]
                assert ref["name"] == secret["metadata"]["name"]
                assert ref["key"] in secret_keys, ref["key"]
    worker_env = {e["name"] for e in container(one(manifests, "Deployment"))["env"]}
    assert "MONITOR_DB_URL" in worker_env


def test_the_config_map_is_mounted_where_monitor_config_points(
    manifests: dict[str, dict[str, Any]],
) -> None:
    deployment = one(manifests, "Deployment")
    c = container(deployment)
    config_path = PurePosixPath(next(e["value"] for e in c["env"] if e["name"] == "MONITOR_CONFIG"))
    mount = next(m for m in c["volumeMounts"] if m["mountPath"] == str(config_path.parent))
    volume = next(v for v in pod_spec(deployment)["volumes"] if v["name"] == mount["name"])
    configmap = one(manifests, "ConfigMap")
    assert volume["configMap"]["name"] == configmap["metadata"]["name"]
    assert config_path.name in configmap["data"]


def test_ports_probes_and_scrape_annotations_use_the_web_port(
    manifests: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    deployment = one(manifests, "Deployment")
    c = container(deployment)
    web_port = worker_settings(manifests, tmp_path).web_port
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert web_port in ports.values()

    def resolve(port: int | str) -> int:
        return ports[port] if isinstance(port, str) else port

    assert c["livenessProbe"]["httpGet"]["path"] == "/health"
    assert c["readinessProbe"]["httpGet"]["path"] == "/ready"
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        if probe in c:
            assert resolve(c[probe]["httpGet"]["port"]) == web_port, probe

    notes = deployment["spec"]["template"]["metadata"]["annotations"]
    assert notes["prometheus.io/scrape"] == "true"
    assert int(notes["prometheus.io/port"]) == web_port
    assert notes["prometheus.io/path"] == "/metrics"


def test_workers_and_migration_run_real_commands_as_non_root(
    manifests: dict[str, dict[str, Any]],
) -> None:
    deployment, job = one(manifests, "Deployment"), one(manifests, "Job")
    assert container(deployment)["command"] == ["python", "-m", "monitor.stream"]
    command = container(job)["command"]
    assert command[0] == "monitor"
    assert build_parser().parse_args(command[1:]).func is cmd_db_upgrade
    assert container(job)["image"] == container(deployment)["image"]
    assert pod_spec(job)["restartPolicy"] in {"OnFailure", "Never"}
    for workload in (deployment, job):
        assert pod_spec(workload)["securityContext"]["runAsNonRoot"] is True
        assert container(workload)["securityContext"]["allowPrivilegeEscalation"] is False


def test_writable_paths_are_volumes_on_a_read_only_root(
    manifests: dict[str, dict[str, Any]],
) -> None:
    deployment = one(manifests, "Deployment")
    c = container(deployment)
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    mounted = {m["mountPath"] for m in c["volumeMounts"]}
    dockerfile = (K8S.parent / "Dockerfile").read_text()
    workdir = [line.split()[1] for line in dockerfile.splitlines() if line.startswith("WORKDIR")]
    assert workdir[-1] in mounted, "Faust writes its data directory into the working directory"
    assert "/tmp" in mounted


def test_selectors_match_the_worker_pods(manifests: dict[str, dict[str, Any]]) -> None:
    deployment = one(manifests, "Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    selectors = [
        deployment["spec"]["selector"]["matchLabels"],
        one(manifests, "Service")["spec"]["selector"],
        one(manifests, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"],
    ]
    for selector in selectors:
        assert selector.items() <= labels.items(), selector
    job_labels = one(manifests, "Job")["spec"]["template"]["metadata"]["labels"]
    assert not selectors[1].items() <= job_labels.items(), "the Service would select the Job"

    service = one(manifests, "Service")
    monitor = one(manifests, "ServiceMonitor")
    service_labels = service["metadata"]["labels"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service_labels.items()
    port_names = {p["name"] for p in service["spec"]["ports"]}
    for endpoint in monitor["spec"]["endpoints"]:
        assert endpoint["port"] in port_names
        assert endpoint["path"] == "/metrics"


def test_pdb_keeps_a_worker_running(manifests: dict[str, dict[str, Any]]) -> None:
    replicas = one(manifests, "Deployment")["spec"]["replicas"]
    assert one(manifests, "PodDisruptionBudget")["spec"]["maxUnavailable"] < replicas


def test_kubectl_kustomize_renders_the_set() -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed")
    done = subprocess.run(
        [kubectl, "kustomize", str(K8S)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    rendered = [d for d in yaml.safe_load_all(done.stdout) if d]
    kinds = sorted(d["kind"] for d in rendered)
    assert kinds == sorted(
        ["ConfigMap", "Secret", "Job", "Deployment", "Service", "PodDisruptionBudget"]
    )
    for doc in rendered:
        assert doc["metadata"]["labels"]["app.kubernetes.io/part-of"] == "compaction-monitor"
        for spec in [doc.get("spec", {}).get("template", {}).get("spec", {})]:
            for c in spec.get("containers", []):
                assert ":" in c["image"], "image without a tag"
