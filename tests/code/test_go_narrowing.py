"""Receivers only a type checker seemed to know, decided from declarations: a type switch's variable
in a clause listing one type, the result of a call (a function's, a method's, a function value's,
a function literal's held by a local), the values ranged over in a call's result, each use of a
name by the declaration Go's block scoping gives it — and never where Go gives the variable another
type (fixture: tests/code/fixtures/goshapes, a module `go vet`
accepts)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from graphctx.scope import Scope
from tests.code.index_helpers import callees, edges

FIXTURE = Path(__file__).parent / "fixtures" / "goshapes"
REPO = Scope("go-narrowing")
SHAPE, USE = "example.com/shapes/shape", "example.com/shapes/use"


@pytest.fixture
def shapes(service, tmp_path: Path):
    root = tmp_path / "goshapes"
    shutil.copytree(FIXTURE, root)
    report = service.index_repository(REPO, root)
    return service, report


def lines_to(service, name: str) -> dict[str, str]:
    return {o: v for s, o, v in edges(service, REPO, name) if s == name}


def test_a_type_switch_variable_has_the_one_type_its_clause_lists(shapes):
    service, _ = shapes
    assert lines_to(service, f"{USE}.Area") == {
        f"{SHAPE}.(*Circle).Scale": "12",
        f"{SHAPE}.(*Circle).Area": "12",
        f"{SHAPE}.Square.Area": "15",  # through s := t; not line 17 (`case *shape.Square, nil`)
    }


def test_a_name_declared_again_inside_the_clause_is_not_narrowed(shapes):
    service, _ = shapes
    # the closure's parameter t is a shape.Shape: its Area is dynamic, f(t) a function value
    assert callees(service, REPO, f"{USE}.Shadowed") == set()


def test_methods_on_what_calls_return(shapes):
    service, report = shapes
    assert lines_to(service, f"{USE}.Results") == {
        f"{SHAPE}.Unit": "35",
        f"{SHAPE}.(*Circle).Scale": "35",
        f"{SHAPE}.(*Circle).Area": "35,36,38",  # unit().Area(): unit holds shape.Unit
        f"{SHAPE}.Pair": "37",
        f"{SHAPE}.Square.Area": "38",
        f"{USE}.local": "38",
    }
    go = report.languages["go"]
    # t.Area() under `case *shape.Square, nil` and `default`: t has x's type, an interface, and so
    # has the closure's parameter t in Shadowed (dynamic); unit(), f(t), Literal's get(), two() and
    # get(), Scoped's each(...) and Later's local(): unresolved, counted as function values
    assert (go["function_values"], go["dynamic"]) == (7, 3)


def test_a_variadic_parameter_is_a_slice_of_its_type(shapes):
    service, _ = shapes
    assert lines_to(service, f"{USE}.Each") == {f"{SHAPE}.(*Circle).Area": "47,49"}


def test_the_values_of_what_a_call_returns_are_ranged_over(shapes):
    service, _ = shapes
    assert lines_to(service, f"{USE}.Ranged") == {
        f"{SHAPE}.(*Circle).Rings": "55",
        f"{SHAPE}.(*Circle).Area": "56,59",  # r of c.Rings(), u of shape.Circles(2)
        f"{SHAPE}.Circles": "58",
    }


def test_a_local_holding_a_function_literal_gives_its_declared_results(shapes):
    service, _ = shapes
    assert lines_to(service, f"{USE}.Literal") == {
        f"{SHAPE}.Unit": "66",  # inside the literal: the enclosing function's call
        f"{SHAPE}.(*Circle).Area": "70",  # c := get(), and get().Scale(2).Area()
        f"{SHAPE}.Square.Area": "70",  # q, _ := two(): the literal's first result
        f"{SHAPE}.(*Circle).Scale": "70",
    }


def test_each_use_of_a_name_refers_to_the_declaration_its_block_sees(shapes):
    service, _ = shapes
    assert lines_to(service, f"{USE}.Scoped") == {
        f"{SHAPE}.Unit": "75",
        f"{SHAPE}.(*Circle).Area": "76,83,87,89",  # the outer c, the ranged c, the block's c := c.Scale(2)
        f"{SHAPE}.Square.Area": "77,80",  # the closure's parameter c, the if statement's c
        f"{SHAPE}.Circles": "82",
        f"{SHAPE}.(*Circle).Scale": "83,86,87",
    }


def test_a_name_used_before_a_local_of_that_name_is_the_packages(shapes):
    service, _ = shapes
    assert lines_to(service, f"{USE}.Later") == {
        f"{USE}.local": "94",
        f"{SHAPE}.(*Circle).Area": "94",  # local(): the package's function, a *shape.Circle
        f"{SHAPE}.Square.Area": "96",  # local(): the literal declared on line 95
    }
