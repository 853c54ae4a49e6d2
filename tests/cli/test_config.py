"""The CLI's habits: --version, --verbose / --quiet, environment variable names in --help, the
graphctx.toml config files with their precedence, and `graphctx config` saying where each setting
came from."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphctx import __version__, cli
from graphctx.cli import app

runner = CliRunner()


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A fresh $XDG_CONFIG_HOME and data directory; no GRAPHCTX_* variable set."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    for name in ("GRAPHCTX_DATA_DIR", "GRAPHCTX_TENANT_ID", "GRAPHCTX_NAMESPACE", "GRAPHCTX_EMBEDDER"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "config" / "graphctx").mkdir(parents=True)
    return tmp_path


def user_file(home: Path, text: str) -> Path:
    path = home / "config" / "graphctx" / "graphctx.toml"
    path.write_text(text, encoding="utf-8")
    return path


def data_file(data_dir: Path, text: str) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "graphctx.toml"
    path.write_text(text, encoding="utf-8")
    return path


def effective(*args: str) -> dict:
    result = runner.invoke(app, [*args, "config", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"graphctx {__version__}"


def test_help_and_version_import_neither_numpy_nor_the_stores():
    probe = (
        "import sys\n"
        "from graphctx.cli import main\n"
        "sys.argv = ['graphctx', sys.argv[1]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('numpy', 'pydantic', 'graphctx.service', 'graphctx.code.indexer', "
        "'tantivy', 'graphctx.api') if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    for flag in ("--help", "--version"):
        done = subprocess.run(
            [sys.executable, "-c", probe, flag], capture_output=True, text=True, timeout=120
        )
        assert "HEAVY []" in done.stderr, (flag, done.stderr[-2000:])


def test_help_names_the_environment_variables():
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for name in ("GRAPHCTX_DATA_DIR", "GRAPHCTX_TENANT_ID", "GRAPHCTX_NAMESPACE", "graphctx config"):
        assert name in result.stdout, name
    serve = runner.invoke(app, ["serve", "--help"], env={"COLUMNS": "200"})
    assert "GRAPHCTX_HTTP_HOST" in serve.stdout and "GRAPHCTX_HTTP_PORT" in serve.stdout


def test_precedence_flag_then_environment_then_data_dir_file_then_user_file(home, monkeypatch):
    data_dir = home / "data"
    user = user_file(
        home,
        f'data_dir = "{data_dir}"\ntenant_id = "from-user"\nnamespace = "ns-user"\n'
        'embedder = "hashing"\nhttp_port = 9001\n',
    )
    local = data_file(data_dir, 'namespace = "ns-local"\nhttp_port = 9002\ngraph_ids = ["g1"]\n')
    monkeypatch.setenv("GRAPHCTX_HTTP_PORT", "9003")
    got = effective("--tenant", "from-flag")["settings"]
    assert got["data_dir"] == {"value": str(data_dir), "source": str(user), "env": "GRAPHCTX_DATA_DIR"}
    assert got["tenant_id"]["value"] == "from-flag" and got["tenant_id"]["source"] == "override"
    assert got["namespace"] == {"value": "ns-local", "source": str(local), "env": "GRAPHCTX_NAMESPACE"}
    assert got["http_port"]["value"] == 9003 and got["http_port"]["source"] == "env GRAPHCTX_HTTP_PORT"
    assert got["graph_ids"]["value"] == ["g1"] and got["embedder"]["value"] == "hashing"
    assert got["deadline_s"] == {"value": 10.0, "source": "default", "env": "GRAPHCTX_DEADLINE_S"}
    # the config files reach every command, not only `config`
    remembered = runner.invoke(app, ["remember", "--entity", '{"id": "e", "name": "e"}', "--json"])
    assert remembered.exit_code == 0, remembered.output
    status = json.loads(runner.invoke(app, ["status", "--json"]).stdout)
    assert status["scope"] == {"tenant_id": "from-user", "namespace": "ns-local", "graph_id": ""}
    assert status["data_dir"] == str(data_dir)


def test_the_data_directory_named_by_a_flag_brings_its_own_file(home):
    elsewhere = home / "elsewhere"
    local = data_file(elsewhere, 'tenant_id = "from-elsewhere"\n')
    got = effective("--data-dir", str(elsewhere))
    assert got["settings"]["tenant_id"]["value"] == "from-elsewhere"
    assert got["files"] == [str(local)]


def test_human_output_lists_each_setting_with_its_source(home):
    user = user_file(home, 'tenant_id = "from-user"\nqdrant_api_key = "s3cret-key"\n')
    before = cli.out.width
    cli.out.width = 300  # the whole path on one line
    try:
        result = runner.invoke(app, ["config"])
    finally:
        cli.out.width = before
    assert result.exit_code == 0, result.output
    assert "s3cret-key" not in result.stdout and "**********" in result.stdout
    line = next(x for x in result.stdout.splitlines() if "tenant_id" in x)
    assert "from-user" in line and str(user) in line
    assert f"config file {user}: read" in result.stdout
    assert "s3cret-key" not in json.dumps(effective())


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('tenant = "x"\n', "unknown setting 'tenant'"),
        ("tenant_id = [\n", "is not valid TOML"),
        ('http_port = "abc"\n', "setting http_port (from "),
        ('data_dir = "/elsewhere"\n', "data_dir cannot be set inside the data directory"),
    ],
)
def test_a_bad_config_file_is_a_config_error_naming_the_file(home, monkeypatch, text, says):
    data_dir = home / "data"
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(data_dir))
    path = data_file(data_dir, text)
    for command in (["status"], ["config"]):
        result = runner.invoke(app, command)
        assert result.exit_code == 78, result.output
        assert says in result.stderr and str(path) in result.stderr, result.stderr


def test_a_bad_environment_value_is_a_config_error_naming_the_variable(home, monkeypatch):
    monkeypatch.setenv("GRAPHCTX_DEADLINE_S", "-1")
    result = runner.invoke(app, ["status", "--json"])
    assert result.exit_code == 78
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "config_error" and error["details"]["source"] == "env GRAPHCTX_DEADLINE_S"


def test_verbose_logs_to_stderr_and_quiet_silences_it(home, monkeypatch):
    monkeypatch.setenv("GRAPHCTX_EMBEDDER", "hashing")
    assert runner.invoke(app, ["remember", "--entity", '{"id": "e", "name": "e"}']).exit_code == 0
    loud = runner.invoke(app, ["-v", "status", "--json"])
    assert loud.exit_code == 0
    assert "INFO graphctx.cli: data directory" in loud.stderr
    json.loads(loud.stdout)  # the answer on stdout stays clean JSON
    assert "INFO" not in runner.invoke(app, ["status", "--json"]).stderr
    quiet = runner.invoke(app, ["-q", "-v", "status", "--json"])
    assert quiet.exit_code == 0 and quiet.stderr == ""


# -- the adapters' settings: [gremlin] and [hugegraph] tables ---------------------------------------


@pytest.fixture
def no_adapter_env(home, monkeypatch) -> Path:
    import os

    for name in list(os.environ):
        if name.startswith(("GRAPHCTX_GREMLIN_", "GRAPHCTX_HUGEGRAPH_")):
            monkeypatch.delenv(name)
    return home


def test_adapter_settings_come_from_their_table_with_the_same_precedence(no_adapter_env, monkeypatch):
    home = no_adapter_env
    data_dir = home / "data"
    user = user_file(
        home,
        f'data_dir = "{data_dir}"\n[gremlin]\nurl = "ws://user:1/gremlin"\npool_size = 2\nretries = 5\n'
        '[hugegraph]\ngraph = "from_user"\npassword = "hg-s3cret"\n',
    )
    local = data_file(data_dir, "[gremlin]\npool_size = 3\nretries = 4\n")
    monkeypatch.setenv("GRAPHCTX_GREMLIN_RETRIES", "1")
    got = effective()
    gremlin, hugegraph = got["sections"]["gremlin"], got["sections"]["hugegraph"]
    assert gremlin["url"] == {
        "value": "ws://user:1/gremlin",
        "source": f"{user} [gremlin]",
        "env": "GRAPHCTX_GREMLIN_URL",
    }
    assert gremlin["pool_size"]["value"] == 3 and gremlin["pool_size"]["source"] == f"{local} [gremlin]"
    assert gremlin["retries"]["value"] == 1 and gremlin["retries"]["source"] == "env GRAPHCTX_GREMLIN_RETRIES"
    assert gremlin["backoff_s"] == {"value": 0.2, "source": "default", "env": "GRAPHCTX_GREMLIN_BACKOFF_S"}
    assert hugegraph["graph"]["value"] == "from_user"
    assert hugegraph["password"]["value"] == "**********"
    assert "hg-s3cret" not in json.dumps(got)
    # the core settings do not take the tables as settings of their own
    assert "gremlin" not in got["settings"] and got["settings"]["data_dir"]["value"] == str(data_dir)
    before = cli.out.width
    cli.out.width = 300
    try:
        human = runner.invoke(app, ["config"])
    finally:
        cli.out.width = before
    line = next(x for x in human.stdout.splitlines() if "gremlin.pool_size" in x)
    assert " 3 " in line and f"{local} [gremlin]" in line
    assert "hg-s3cret" not in human.stdout


def test_the_adapter_connects_where_the_table_of_the_flagged_data_directory_says(no_adapter_env):
    elsewhere = no_adapter_env / "elsewhere"
    data_file(
        elsewhere,
        'graph_backend = "gremlin"\nembedder = "hashing"\n'
        '[gremlin]\nurl = "ws://127.0.0.1:9/from-the-table"\nconnect_timeout_s = 1\nretries = 0\n',
    )
    result = runner.invoke(app, ["--data-dir", str(elsewhere), "status", "--json"])
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "backend_unavailable", error
    assert error["details"]["url"] == "ws://127.0.0.1:9/from-the-table"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[gremlin]\npoolsize = 2\n", "unknown setting gremlin.poolsize"),
        ("[hugegraph]\npool_size = 0\n", "setting hugegraph.pool_size (from "),
        ('gremlin = "ws://x"\n', "gremlin must be a table"),
        ("[cassandra]\nurl = 1\n", "unknown setting 'cassandra'"),
    ],
)
def test_a_bad_adapter_table_is_a_config_error_naming_the_file(no_adapter_env, monkeypatch, text, says):
    data_dir = no_adapter_env / "data"
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(data_dir))
    path = data_file(data_dir, text)
    result = runner.invoke(app, ["config"])
    assert result.exit_code == 78, result.output
    assert says in result.stderr and str(path) in result.stderr, result.stderr
