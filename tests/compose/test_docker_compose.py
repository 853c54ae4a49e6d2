"""compose/docker-compose.yml: static checks, plus a smoke run through the Docker SDK when an engine exists.

Kept apart from the contract suite on purpose: this module may skip (no Docker engine here or in CI),
contract tests may not.
"""

from __future__ import annotations

import re
import shlex
import time
import urllib.request
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

COMPOSE_DIR = Path(__file__).resolve().parents[2] / "compose"
COMPOSE_FILE = COMPOSE_DIR / "docker-compose.yml"
NATIVE = COMPOSE_DIR / "native"

# host ports every consumer (tests, env.sh, docs) relies on
EXPECTED_HOST_PORTS = {
    "hugegraph": {18080, 18182},
    "gremlin-server": {18183},
    "qdrant": {6333, 6334},
}
# the hugegraph-cluster profile: the native cluster launcher's ports (compose/native/hugegraph-cluster)
CLUSTER_HOST_PORTS = {
    "pd": {18601},
    "store-0": {18630},
    "store-1": {18631},
    "store-2": {18632},
    "server-1": {18641, 18651},
    "server-2": {18642, 18652},
}
CLUSTER_PROFILE = "hugegraph-cluster"
PINNED_TAG = re.compile(r"^[\w./-]+:v?\d+\.\d+\.\d+$")
HEALTHY_TIMEOUT_S = 300.0


def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))


def services() -> dict[str, dict[str, Any]]:
    """The services `docker compose up` starts (no profile)."""
    return {n: s for n, s in compose()["services"].items() if not s.get("profiles")}


def cluster_services() -> dict[str, dict[str, Any]]:
    return {n: s for n, s in compose()["services"].items() if CLUSTER_PROFILE in s.get("profiles", [])}


def every_service() -> dict[str, dict[str, Any]]:
    return compose()["services"]


@dataclass(frozen=True)
class PortMapping:
    host_ip: str
    host_port: int
    container_port: int


def port_mappings(service: dict[str, Any]) -> list[PortMapping]:
    mappings = []
    for spec in service.get("ports", []):
        parts = str(spec).split(":")
        assert len(parts) == 3, f"port {spec!r} must be host_ip:host_port:container_port"
        mappings.append(PortMapping(parts[0], int(parts[1]), int(parts[2])))
    return mappings


def pom_property(pom: Path, name: str) -> str:
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    node = ET.parse(pom).getroot().find(f"m:properties/m:{name}", ns)
    assert node is not None and node.text, f"{pom} has no property {name}"
    return node.text


def config_value(path: Path, pattern: str) -> str:
    found = re.search(pattern, path.read_text(encoding="utf-8"), re.MULTILINE)
    assert found, f"{path} does not match {pattern!r}"
    return found.group(1)


# ---------------------------------------------------------------- static checks


def test_compose_defines_the_three_backends() -> None:
    assert set(services()) == set(EXPECTED_HOST_PORTS)


def test_the_cluster_profile_is_the_native_cluster_topology() -> None:
    """One PD, three stores, two graph servers, only under the profile (never started by default)."""
    assert set(cluster_services()) == set(CLUSTER_HOST_PORTS)
    assert set(every_service()) == set(EXPECTED_HOST_PORTS) | set(CLUSTER_HOST_PORTS)
    for name, service in cluster_services().items():
        assert {m.host_port for m in port_mappings(service)} == CLUSTER_HOST_PORTS[name]
        assert {m.host_ip for m in port_mappings(service)} == {"127.0.0.1"}
        assert service.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
    ports = (NATIVE / "hugegraph-cluster" / "ports.sh").read_text(encoding="utf-8")
    assert "GRAPHCTX_HUGEGRAPH_CLUSTER_PORT_BASE:-18600" in ports  # 18601 PD REST, 1864x/1865x servers


@pytest.mark.parametrize("name", sorted(EXPECTED_HOST_PORTS) + sorted(CLUSTER_HOST_PORTS))
def test_every_image_is_pinned_to_a_version_tag(name: str) -> None:
    image = every_service()[name]["image"]
    assert PINNED_TAG.match(image), f"{name}: image {image!r} is not pinned to a version tag"
    assert not image.endswith(":latest")


@pytest.mark.parametrize("name", sorted(EXPECTED_HOST_PORTS))
def test_ports_are_published_on_loopback_only(name: str) -> None:
    mappings = port_mappings(services()[name])
    assert mappings, f"{name} publishes no port"
    assert {m.host_ip for m in mappings} == {"127.0.0.1"}


@pytest.mark.parametrize("name", sorted(EXPECTED_HOST_PORTS))
def test_host_ports_are_the_native_launchers_ports(name: str) -> None:
    assert {m.host_port for m in port_mappings(services()[name])} == EXPECTED_HOST_PORTS[name]


@pytest.mark.parametrize("name", sorted(EXPECTED_HOST_PORTS))
def test_every_service_has_a_healthcheck(name: str) -> None:
    test = services()[name].get("healthcheck", {}).get("test")
    assert test, f"{name} has no healthcheck"


def test_native_configs_listen_on_the_same_ports() -> None:
    hugegraph_conf = NATIVE / "hugegraph" / "conf"
    rest = config_value(
        hugegraph_conf / "rest-server.properties", r"^restserver\.url=http://127\.0\.0\.1:(\d+)$"
    )
    hg_gremlin = config_value(hugegraph_conf / "gremlin-server.yaml", r"^port: (\d+)$")
    gremlin = config_value(NATIVE / "gremlin-server" / "conf" / "gremlin-server.yaml", r"^port: (\d+)$")
    assert {int(rest), int(hg_gremlin)} == EXPECTED_HOST_PORTS["hugegraph"]
    assert {int(gremlin)} == EXPECTED_HOST_PORTS["gremlin-server"]
    for conf in (hugegraph_conf / "gremlin-server.yaml", NATIVE / "gremlin-server/conf/gremlin-server.yaml"):
        assert config_value(conf, r"^host: (\S+)$") == "127.0.0.1", f"{conf} must bind loopback"


def test_env_sh_points_at_the_published_ports() -> None:
    env = (NATIVE / "env.sh").read_text(encoding="utf-8")
    exports = dict(
        line.removeprefix("export ").split("=", 1) for line in env.splitlines() if line.startswith("export ")
    )
    assert exports == {
        "GRAPHCTX_TEST_HUGEGRAPH_URL": "http://127.0.0.1:${GRAPHCTX_HUGEGRAPH_REST_PORT:-18080}",
        "GRAPHCTX_TEST_HUGEGRAPH_GREMLIN_URL": "ws://127.0.0.1:${GRAPHCTX_HUGEGRAPH_GREMLIN_PORT:-18182}/gremlin",
        "GRAPHCTX_TEST_GREMLIN_URL": "ws://127.0.0.1:${GRAPHCTX_GREMLIN_PORT:-18183}/gremlin",
    }


def test_images_run_the_versions_the_native_launchers_assemble() -> None:
    hugegraph = pom_property(NATIVE / "hugegraph" / "pom.xml", "hugegraph.version")
    tinkerpop = pom_property(NATIVE / "gremlin-server" / "pom.xml", "tinkerpop.version")
    assert services()["hugegraph"]["image"] == f"hugegraph/hugegraph:{hugegraph}"
    assert services()["gremlin-server"]["image"] == f"tinkerpop/gremlin-server:{tinkerpop}"


def test_bind_mounted_files_exist() -> None:
    for name, service in every_service().items():
        for volume in service.get("volumes", []):
            source = str(volume).split(":")[0]
            if source.startswith("."):
                assert (COMPOSE_DIR / source).is_file(), f"{name} mounts missing {source}"


# ---------------------------------------------------------------- live smoke run (needs a Docker engine)


def docker_client() -> Any:
    """A pinged Docker SDK client, or a skip that says why there is none."""
    docker = pytest.importorskip("docker", reason="the docker SDK is not installed (pip install -e '.[dev]')")
    try:
        client = docker.from_env(timeout=10)
        client.ping()
    except Exception as exc:  # the SDK raises DockerException or requests errors, depending on the cause
        pytest.skip(f"no Docker engine reachable: {exc}")
    return client


def nanoseconds(duration: str) -> int:
    return int(float(duration.rstrip("s")) * 1_000_000_000)


def run_kwargs(name: str, service: dict[str, Any], run_id: str) -> dict[str, Any]:
    """docker-compose.yml's service as Docker SDK `containers.run` arguments (host ports: ephemeral)."""
    volumes: dict[str, dict[str, str]] = {}
    for spec in service.get("volumes", []):
        source, target, *mode = str(spec).split(":")
        bind_mount = source.startswith(".")
        key = str((COMPOSE_DIR / source).resolve()) if bind_mount else f"graphctx-test-{run_id}-{source}"
        volumes[key] = {"bind": target, "mode": mode[0] if mode else "rw"}
    health = service["healthcheck"]
    test = health["test"]
    kwargs: dict[str, Any] = {
        "image": service["image"],
        "name": f"graphctx-test-{run_id}-{name}",
        "detach": True,
        # ephemeral host ports: native servers may hold the fixed ones while this runs
        "ports": {f"{m.container_port}/tcp": ("127.0.0.1", None) for m in port_mappings(service)},
        "volumes": volumes,
        "environment": service.get("environment", {}),
        "healthcheck": {
            "test": test if isinstance(test, list) else ["CMD-SHELL", test],
            "interval": nanoseconds(health["interval"]),
            "timeout": nanoseconds(health["timeout"]),
            "retries": int(health["retries"]),
            "start_period": nanoseconds(health["start_period"]),
        },
    }
    for key in ("entrypoint", "command"):
        if key in service:
            value = service[key]
            kwargs[key] = value if isinstance(value, list) else shlex.split(value)
    return kwargs


def wait_healthy(containers: dict[str, Any]) -> None:
    deadline = time.monotonic() + HEALTHY_TIMEOUT_S
    pending = dict(containers)
    while pending:
        for name, container in list(pending.items()):
            container.reload()
            state = container.attrs["State"]
            status = state.get("Health", {}).get("Status")
            if status == "healthy":
                del pending[name]
            elif status == "unhealthy" or state["Status"] == "exited":
                logs = container.logs(tail=40).decode(errors="replace")
                raise AssertionError(f"{name} did not become healthy ({status or state['Status']}):\n{logs}")
        if pending and time.monotonic() > deadline:
            raise TimeoutError(f"not healthy after {HEALTHY_TIMEOUT_S:.0f} s: {sorted(pending)}")
        time.sleep(2)


def host_port(container: Any, container_port: int) -> int:
    container.reload()
    return int(container.ports[f"{container_port}/tcp"][0]["HostPort"])


@pytest.fixture(scope="session")
def compose_stack() -> Iterator[dict[str, Any]]:
    """The compose services started through the Docker SDK and healthy; removed afterwards."""
    client = docker_client()
    run_id = uuid.uuid4().hex[:8]
    containers: dict[str, Any] = {}
    try:
        for name, service in services().items():
            client.images.pull(service["image"])
            containers[name] = client.containers.run(**run_kwargs(name, service, run_id))
        wait_healthy(containers)
        yield containers
    finally:
        for container in containers.values():
            container.remove(force=True, v=True)
        for volume in client.volumes.list(filters={"name": f"graphctx-test-{run_id}-"}):
            volume.remove(force=True)


def http_get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
        return response.read().decode()


@pytest.mark.slow
def test_compose_hugegraph_answers(compose_stack: dict[str, Any]) -> None:
    port = host_port(compose_stack["hugegraph"], 8080)
    assert "hugegraph" in http_get(f"http://127.0.0.1:{port}/graphs")


@pytest.mark.slow
def test_compose_gremlin_server_answers(compose_stack: dict[str, Any]) -> None:
    port = host_port(compose_stack["gremlin-server"], 8182)
    answer = http_get(f"http://127.0.0.1:{port}/?gremlin=g.inject(41).math('_%2B1')")
    assert '"@value":42.0' in answer


@pytest.mark.slow
def test_compose_qdrant_answers(compose_stack: dict[str, Any]) -> None:
    port = host_port(compose_stack["qdrant"], 6333)
    assert "collections" in http_get(f"http://127.0.0.1:{port}/collections")


def test_sdk_arguments_mirror_the_compose_services() -> None:
    """The smoke fixture runs exactly what the compose file declares (checked without an engine)."""
    for name, service in services().items():
        kwargs = run_kwargs(name, service, "unit")
        assert kwargs["image"] == service["image"]
        assert set(kwargs["ports"]) == {f"{m.container_port}/tcp" for m in port_mappings(service)}
        assert all(binding == ("127.0.0.1", None) for binding in kwargs["ports"].values())
        for source, mount in kwargs["volumes"].items():
            assert source.startswith(("/", "graphctx-test-unit-")), source
            assert mount["bind"].startswith("/")
        assert kwargs["healthcheck"]["test"][0] in {"CMD", "CMD-SHELL"}
        assert kwargs["healthcheck"]["interval"] > 0
    gremlin = run_kwargs("gremlin-server", services()["gremlin-server"], "unit")
    assert gremlin["entrypoint"] == ["/opt/gremlin-server/bin/gremlin-server.sh"]
