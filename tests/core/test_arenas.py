"""The malloc arena limit `graphctx serve` applies unless the environment sets one."""

from __future__ import annotations

from graphctx import arenas


def test_serving_limits_the_arenas_to_two_when_the_environment_says_nothing() -> None:
    environ: dict[str, str] = {"PATH": "/usr/bin"}
    assert arenas.limit_for_serving(environ) == "2"
    assert environ == {"PATH": "/usr/bin", "MALLOC_ARENA_MAX": "2"}  # the reader processes inherit it


def test_a_limit_in_the_environment_wins_and_is_left_as_it_is() -> None:
    for given in ("8", "1", "64"):
        environ = {"MALLOC_ARENA_MAX": given}
        assert arenas.limit_for_serving(environ) == given
        assert environ == {"MALLOC_ARENA_MAX": given}
