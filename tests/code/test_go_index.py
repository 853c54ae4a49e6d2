"""The Go front end through the real indexer: packages, qualified names, resolution, tests, build
constraints, and incremental re-indexing (fixture: tests/code/fixtures/goshop, a module that
`go vet` and `go test` accept)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.errors import NotFound
from graphctx.scope import Scope
from tests.code.go_fixture import MOD, copy_goshop
from tests.code.index_helpers import assert_indexes_match_graph, callees, callers, edges, write_repo

REPO = Scope("go-index")
CART, STORE = f"{MOD}/cart", f"{MOD}/store"


@pytest.fixture
def shop(service, tmp_path: Path):
    root = copy_goshop(tmp_path)
    report = service.index_repository(REPO, root)
    return service, root, report


def test_counts_say_what_was_resolved_and_why_the_rest_was_not(shop):
    _, _, report = shop
    go = report.languages["go"]
    assert (go["packages"], go["files"]) == (3, 9)  # testdata/ holds no package
    assert go["calls"] == go["resolved_calls"] + go["unresolved_calls"] + go["builtin_calls"]
    # fmt.* and t.Fatal are outside the module, s.log.Log goes through an interface, f() is a
    # function value: counted, never guessed
    assert (go["external"], go["dynamic"], go["function_values"]) == (6, 1, 1)
    assert go["unresolved_calls"] == 8
    assert go["constrained_files"] == 2
    assert report.parse_errors == []


def test_symbols_are_named_as_go_writes_them(shop):
    service, _, _ = shop
    put = service.symbol(REPO, f"{STORE}.(*Store).Put")["subject"]
    assert put == {
        "name": f"{STORE}.(*Store).Put",
        "at": "store/store.go:39-42",
        "type": "method",
        "signature": "func (s *Store) Put(it Item)",
        "summary": "Put stores an item, replacing one of the same name.",
    }
    total = service.symbol(REPO, f"{STORE}.Store.Total")["subject"]  # a value receiver
    assert (total["type"], total["at"]) == ("method", "store/store.go:60-66")
    store = service.symbol(REPO, f"{STORE}.Store")["subject"]
    assert (store["type"], store["signature"]) == ("type", "type Store struct")
    assert store["summary"] == "Store holds items by name."  # the first sentence of the doc comment
    package = service.symbol(REPO, CART)["subject"]
    assert (package["type"], package["summary"]) == ("package", "Package cart adds up orders over a store.")
    # the short spellings an agent may type resolve when they are unambiguous
    assert service.symbol(REPO, "store.(*Store).Put")["subject"]["name"] == f"{STORE}.(*Store).Put"
    assert service.symbol(REPO, f"{STORE}.Store.Put")["subject"]["name"] == f"{STORE}.(*Store).Put"


def test_package_qualified_calls_and_methods_on_known_receivers(shop):
    service, _, _ = shop
    assert callees(service, REPO, f"{CART}.NewCart") == {f"{STORE}.New"}
    # c.Put: promoted from the embedded *store.Store; the call line is kept
    assert edges(service, REPO, f"{CART}.(*Cart).Add") >= {
        (f"{CART}.(*Cart).Add", f"{STORE}.(*Store).Put", "21")
    }
    assert callees(service, REPO, f"{CART}.(*Cart).Sum") == {f"{STORE}.Store.Total"}
    # c.ID(): two levels of embedding (Cart -> *Store -> Base); f := c.Sum; f() stays unresolved
    assert callees(service, REPO, f"{CART}.Describe") == {f"{STORE}.(*Base).ID"}
    assert callees(service, REPO, f"{STORE}.(*Store).Put") == {f"{STORE}.(*Store).note"}
    assert callees(service, REPO, f"{STORE}.(*Store).note") == set()  # s.log.Log: an interface


def test_struct_embedding_is_inheritance(shop):
    service, _, _ = shop
    assert {o for _, o, _ in edges(service, REPO, f"{CART}.Cart", "inherits")} == {f"{STORE}.Store"}
    assert {o for _, o, _ in edges(service, REPO, f"{STORE}.Store", "inherits")} == {f"{STORE}.Base"}


def test_build_constraints_are_marked_and_decide_between_same_named_definitions(shop):
    service, _, _ = shop
    env = service.callees(REPO, f"{STORE}.Platform")
    assert [c["at"] for c in env["callees"]] == ["store/platform_linux.go:5-5"]
    other = service.symbol(REPO, "store/platform_other.go::platform")["subject"]
    assert other["signature"] == "func platform() string  //go:build !linux"
    linux = service.symbol(REPO, "store/platform_linux.go")["subject"]
    assert (linux["type"], linux["signature"]) == ("file", "//go:build linux")


def test_tests_benchmarks_and_examples_are_linked_to_what_they_call(shop):
    service, _, _ = shop
    env = service.symbol(REPO, f"{CART}.NewCart")
    marked = {c["name"]: c.get("test", False) for c in env["callers"]}
    assert marked == {
        f"{CART}.newTestCart": False,  # a helper in a test file is not a test
        f"{CART}.BenchmarkSum": True,
        f"{CART}_test.ExampleDescribe": True,  # the external test package
        f"{MOD}/cmd/shop.main": False,
    }
    # TestAdd reaches NewCart through the helper: listed among the tests, not the callers
    assert [t["name"] for t in env["tests"]] == [f"{CART}.TestAdd"]
    put_tests = service.symbol(REPO, f"{STORE}.(*Store).Put")
    assert {c["name"] for c in put_tests["callers"] if c.get("test")} == {f"{STORE}.TestPutGet"}


def test_imports_link_files_to_packages(shop):
    service, _, _ = shop
    imported = edges(service, REPO, "cart/cart.go", "imports")
    assert {(o, v) for _, o, v in imported} == {(STORE, "7")}


def test_a_re_index_writes_only_what_changed(shop):
    service, root, _ = shop
    again = service.index_repository(REPO, root)
    assert (again.files_changed, again.files_new, again.entities_written, again.facts_written) == (0, 0, 0, 0)
    text = (root / "store/store.go").read_text()
    write_repo(
        root, {"store/store.go": text.replace('s.note("put")', 'if it.Price > 0 {\n\t\ts.note("put")\n\t}')}
    )
    edited = service.index_repository(REPO, root)
    assert edited.files_changed == 1
    assert edges(service, REPO, f"{STORE}.(*Store).Put") == {
        (f"{STORE}.(*Store).Put", f"{STORE}.(*Store).note", "42")
    }
    # the edit moved Get down two lines: its range follows
    assert service.symbol(REPO, f"{STORE}.(*Store).Get")["subject"]["at"] == "store/store.go:47-53"
    assert callers(service, REPO, f"{STORE}.(*Store).Put") == {f"{CART}.(*Cart).Add", f"{STORE}.TestPutGet"}
    write_repo(root, {"cart/cart_test.go": None})
    service.index_repository(REPO, root)
    assert [t["name"] for t in service.symbol(REPO, f"{CART}.NewCart")["tests"]] == []
    assert_indexes_match_graph(service, REPO)


def test_a_renamed_module_renames_every_symbol(shop):
    service, root, _ = shop
    write_repo(root, {"go.mod": "module example.org/renamed\n\ngo 1.22\n"})
    service.index_repository(REPO, root)
    assert service.symbol(REPO, "example.org/renamed/store.New")["subject"]["at"] == "store/store.go:34-36"
    with pytest.raises(Exception, match="no entity"):
        service.symbol(REPO, f"{STORE}.New")


def test_a_file_that_does_not_parse_is_reported_and_the_rest_indexed(service, tmp_path: Path):
    root = write_repo(
        tmp_path / "bad",
        {
            "go.mod": "module bad\n",
            "a/a.go": "package a\n\n// F is fine.\nfunc F() int { return 1 }\n",
            "a/b.go": "package a\n\nfunc G( {\n",
        },
    )
    report = service.index_repository(REPO, root)
    assert [e.split(":")[0] for e in report.parse_errors] == ["a/b.go"]
    assert service.symbol(REPO, "bad/a.F")["subject"]["summary"] == "F is fine."


def test_receivers_typed_from_new_literals_and_agreeing_declarations(service, tmp_path: Path):
    scanner = """package scan

type Scanner struct{ n int }

func (s *Scanner) Init() *Scanner { return s }

func (s *Scanner) Scan() int { return s.n }

func Use() int {
	s := new(Scanner).Init()
	check := func(s *Scanner) int { return s.Scan() }
	(&Scanner{}).Scan()
	Scanner{}.Scan()
	return check(s) + s.Scan()
}

func Unknown(xs []Scanner) {
	for _, s := range xs {
		s.Scan()
	}
	s := xs[0]
	s.Scan()
}
"""
    root = write_repo(tmp_path / "scan", {"go.mod": "module scan\n", "scan.go": scanner})
    report = service.index_repository(REPO, root)
    assert callees(service, REPO, "scan.Use") == {"scan.(*Scanner).Init", "scan.(*Scanner).Scan"}
    lines = {v for _, o, v in edges(service, REPO, "scan.Use") if o == "scan.(*Scanner).Scan"}
    assert lines == {"11,12,13,14"}  # the closure's s and the outer s agree: both are *Scanner
    # the range variable and `s := xs[0]` agree: both are elements of xs []Scanner
    lines = {v for _, o, v in edges(service, REPO, "scan.Unknown") if o == "scan.(*Scanner).Scan"}
    assert lines == {"19,22"}
    assert report.languages["go"]["function_values"] >= 1  # check(s): a local holding a function


def test_adversarial_go_neither_crashes_nor_resolves_a_guess(service, tmp_path: Path):
    nested = "x" + ".f()" * 200
    weird = f"""package w

var a a
var b = c
var c = b
var d, e = e, d

type T = U
type U = T
type S struct{{ S }}

func (s S) M() {{ s.M(); s.S.M(); a.M(); b.M(); d.M() }}

func F(x T) {{ x.M(); {nested}; var t S; t.N() }}
"""
    root = write_repo(tmp_path / "w", {"go.mod": "module w\n", "w.go": weird})
    report = service.index_repository(REPO, root)
    assert report.parse_errors == []
    # s.M() is S's own method; the rest are cycles, aliases of nothing, or methods S lacks
    assert callees(service, REPO, "w.S.M") == {"w.S.M"}
    assert callees(service, REPO, "w.F") == set()


def test_python_and_go_in_one_repository_are_re_indexed_apart(service, tmp_path: Path):
    root = copy_goshop(tmp_path)
    write_repo(root, {"tools/report.py": '"""Report."""\n\n\ndef total(xs):\n    return sum(xs)\n'})
    first = service.index_repository(REPO, root)
    assert (first.modules, first.languages["go"]["files"]) == (1, 9)
    write_repo(root, {"tools/report.py": '"""Report."""\n\n\ndef total(xs):\n    return sum(xs) + 0\n'})
    python_only = service.index_repository(REPO, root)
    assert python_only.files_changed == 1 and python_only.files_parsed == 1  # no Go file parsed
    assert python_only.languages["go"] == {"packages": 3, "files": 9, "symbols": 24}
    assert callees(service, REPO, f"{CART}.NewCart") == {f"{STORE}.New"}
    assert service.symbol(REPO, "tools.report.total")["subject"]["at"] == "tools/report.py:4-5"


def test_deleting_a_package_leaves_nothing_of_it(shop):
    service, root, _ = shop
    for f in sorted((root / "store").iterdir()):
        f.unlink()
    (root / "store").rmdir()
    report = service.index_repository(REPO, root)
    assert report.files_deleted == 5
    for gone in (STORE, f"{STORE}.New", f"{STORE}.(*Store).Put", "store/store.go"):
        with pytest.raises(NotFound):
            service.symbol(REPO, gone)
    # cart.go's calls into the package are gone with it; cart itself is intact
    assert callees(service, REPO, f"{CART}.NewCart") == set()
    assert edges(service, REPO, "cart/cart.go", "imports") == set()
    assert callees(service, REPO, f"{MOD}/cmd/shop.main") == {
        f"{CART}.NewCart", f"{CART}.(*Cart).Add", f"{CART}.(*Cart).Sum"
    }  # fmt: skip
    assert_indexes_match_graph(service, REPO)


def test_type_parameters_shadow_package_types(service, tmp_path: Path):
    code = """package g

type T struct{}

func (T) M() {}

type List[E any] struct{ head *E }

func G[T any](v T) { v.M() }

func (l *List[T]) Each(v T) { v.M() }

func Plain(v T) { v.M() }
"""
    root = write_repo(tmp_path / "g", {"go.mod": "module g\n", "g.go": code})
    service.index_repository(REPO, root)
    assert callees(service, REPO, "g.G") == set()  # v is a T of G's own: not g.T
    assert callees(service, REPO, "g.(*List).Each") == set()
    assert callees(service, REPO, "g.Plain") == {"g.T.M"}


def test_elements_of_declared_slices_and_maps_are_typed(service, tmp_path: Path):
    code = """package e

type T struct{ next []*T }

func (t *T) M() {}

func Each(ts []T, byName map[string]*T) {
	for _, t := range ts {
		t.M()
	}
	for _, t := range byName {
		t.M()
	}
	ts[0].M()
	for i := range ts {
		ts[i].next[0].M()
	}
	for k := range byName {
		_ = k
	}
	fs := []func(){}
	fs[0]()
	xs := make([]T, 1)
	xs[0].M()
	p := &ts[0]
	v := *p
	v.M()
}
"""
    root = write_repo(tmp_path / "e", {"go.mod": "module e\n", "e.go": code})
    report = service.index_repository(REPO, root)
    lines = {v for _, o, v in edges(service, REPO, "e.Each") if o == "e.(*T).M"}
    assert lines == {"9,12,14,16,27"}  # xs := make(...) has a type only a type checker knows
    assert report.languages["go"]["builtin_calls"] == 1  # make, and not xs[0].M()


def test_interface_satisfaction_is_decided_from_method_sets(service, tmp_path: Path):
    files = {
        "go.mod": "module sat\n",
        "store/store.go": """package store

type Item struct{}

// Saver saves items.
type Saver interface {
	Save(it Item, n int) error
}

type closer interface{ close() }

// ReadSaver embeds: not decided here.
type ReadSaver interface {
	Saver
	Read() Item
}

type Disk struct{}

func (d *Disk) Save(x Item, count int) error { return nil }

func (d Disk) close() {}
""",
        "cache/cache.go": """package cache

import st "sat/store"

type Memory struct{}

func (m Memory) Save(it st.Item, n int) error { return nil }

func (m Memory) close() {}

type Wrong struct{}

func (w Wrong) Save(it st.Item, n string) error { return nil }
""",
    }
    root = write_repo(tmp_path / "sat", files)
    service.index_repository(REPO, root)
    implements = lambda name: {o for _, o, _ in edges(service, REPO, name, "implements")}  # noqa: E731
    # names written differently (st.Item, Item; other parameter names) are the same types
    assert implements("sat/cache.Memory") == {"sat/store.Saver"}
    # same package: the unexported interface too; the embedding interface is left undecided
    assert implements("sat/store.Disk") == {"sat/store.Saver", "sat/store.closer"}
    assert implements("sat/cache.Wrong") == set()  # Save(Item, string): another method
    # the interface changes in another file: edges follow, stale ones go, though cache/ is unchanged
    text = (root / "store/store.go").read_text()
    write_repo(
        root, {"store/store.go": text.replace("Save(it Item, n int) error", "Save(it Item, n string) error")}
    )
    again = service.index_repository(REPO, root)
    assert again.files_changed == 1
    assert implements("sat/cache.Memory") == set()
    assert implements("sat/cache.Wrong") == {"sat/store.Saver"}
    assert implements("sat/store.Disk") == {"sat/store.closer"}


def test_an_implements_edge_goes_when_the_interface_changes_elsewhere(service, tmp_path: Path):
    namer = "package names\n\ntype Namer interface{ Name() string }\n"
    person = 'package people\n\ntype Person struct{}\n\nfunc (Person) Name() string { return "" }\n'
    root = write_repo(tmp_path / "n", {"go.mod": "module n\n", "names/n.go": namer, "people/p.go": person})
    service.index_repository(REPO, root)
    implements = lambda: {o for _, o, _ in edges(service, REPO, "n/people.Person", "implements")}  # noqa: E731
    assert implements() == {"n/names.Namer"}  # people/ does not import names/: no import links them
    write_repo(root, {"names/n.go": namer.replace("Name() string", "Name() int")})
    service.index_repository(REPO, root)
    assert implements() == set()
