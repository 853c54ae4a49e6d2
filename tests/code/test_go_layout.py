"""Go import paths from go.mod files, and build constraints."""

from __future__ import annotations

import pytest

from graphctx.code.golayout import Config, Constraint, GoLayout, name_constraint, package_dir


def test_import_paths_follow_the_nearest_go_mod():
    files = ["a/x.go", "tools/gen/y.go", "tools/z.go", "loose/w.go", "x.go"]
    layout = GoLayout(
        files, {"go.mod": b"module example.com/m\n", "tools/go.mod": b'module "example.com/tools"\n'}
    )
    assert layout.dirs == {
        "a": "example.com/m/a",
        "tools/gen": "example.com/tools/gen",
        "tools": "example.com/tools",
        "loose": "example.com/m/loose",
        "": "example.com/m",
    }
    assert GoLayout(["p/q/x.go"], {}).dirs == {"p/q": "p/q"}  # no go.mod: the directory


def test_the_standard_library_is_named_by_its_directories_and_its_vendored_copies():
    files = ["net/http/client.go", "vendor/golang.org/x/net/idna/idna.go", "cmd/go/main.go",
             "cmd/vendor/golang.org/x/mod/module/module.go"]  # fmt: skip
    layout = GoLayout(files, {"go.mod": b"module std\n\ngo 1.26\n", "cmd/go.mod": b"module cmd\n"})
    assert layout.dirs["net/http"] == "net/http"
    assert layout.dirs["vendor/golang.org/x/net/idna"] == "vendor/golang.org/x/net/idna"
    assert layout.dirs["cmd/go"] == "cmd/go"
    assert layout.dirs["cmd/vendor/golang.org/x/mod/module"] == "golang.org/x/mod/module"
    # an import from std finds std's vendored copy, one from cmd finds cmd's
    assert layout.resolve_import("net/http", "golang.org/x/net/idna") == "vendor/golang.org/x/net/idna"
    assert layout.resolve_import("cmd/go", "golang.org/x/mod/module") == "cmd/vendor/golang.org/x/mod/module"
    assert layout.resolve_import("net/http", "example.com/absent") is None


def test_the_go_tool_ignores_testdata_and_underscore_or_dot_directories():
    assert package_dir("a/testdata/x.go") is None
    assert package_dir("_old/x.go") is None and package_dir("a/.hidden/x.go") is None
    assert package_dir("a/_x.go") is None
    assert package_dir("a/b/x.go") == "a/b"


@pytest.mark.parametrize(
    ("expr", "active"),
    [
        ("linux", True), ("windows", False), ("linux && !race", True), ("unix", True),
        ("(darwin || linux) && amd64", True), ("!cgo", True), ("go1.21", True), ("go1.99", False),
        ("linux && arm64", False), ("linux &&", True),  # unparsable: not held against the file
    ],
)  # fmt: skip
def test_build_expressions(expr, active):
    assert Constraint(expr).active() is active


def test_file_name_constraints():
    assert name_constraint("a/x_windows.go") == "windows"
    assert name_constraint("a/x_linux_arm64_test.go") == "linux && arm64"
    assert name_constraint("a/linux.go") == ""  # the whole name is not a suffix
    assert Constraint("", "windows").active() is False
    assert Constraint("", "windows").active(Config(goos="windows")) is True
    assert Constraint("linux", "linux").text == "//go:build linux"
    assert Constraint("", "windows").text == "(file name: windows)"
