"""The code operations: search, symbol, callers, callees and impact over the code graph.

Every answer is an evidence envelope under the budget rules (what is cut is named in `omissions`;
a subject that does not fit is a budget error). Names resolve exactly as for explain and path
(graphctx.names: id, qualified name, `path::name`, then an unambiguous plain name). Reads use only
catalogue templates and re-check every entity and fact against the scope.

Cards are compact and said once: an entry is its qualified name, `at` (file:first-last line) and
the call lines; the subject adds type, signature and summary. A test that calls the symbol is
listed once, among the callers, marked `test`; `tests` holds only the tests that reach it
otherwise (through fixtures, helpers, set-up). Provenance names only the stores the operation
read. Opaque ids only with include_ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from graphctx import bounds
from graphctx.clock import Clock
from graphctx.code import ids
from graphctx.code.diff import Change, FileChange, merge, parse_diff
from graphctx.code.repos import list_repositories
from graphctx.deadlines import Deadline
from graphctx.envelope import Budget, Option, open_envelope
from graphctx.errors import AmbiguousName, InputError, NotFound
from graphctx.followups import call
from graphctx.kernel.reads import batches, stored_hashes
from graphctx.kernel.stores import Stores
from graphctx.kernel.templates import (
    ENTITY_GET,
    FACTS_FROM_ROOTS,
    NEIGHBOURHOOD,
    Direction,
    EntityGetParams,
    FactsFromRootsParams,
    NeighbourhoodParams,
)
from graphctx.model import EdgeKind, Entity, Fact, NodeKind
from graphctx.names import resolve
from graphctx.retrieval.isolation import Isolation
from graphctx.retrieval.pipeline import FOLLOW_UP_CHARS, Candidate, Retriever, Stopwatch
from graphctx.retrieval.render import entity_card
from graphctx.scope import Scope

CODE_TYPES = frozenset(k.value for k in NodeKind)
CALLS, TESTED_BY, IMPORTS = EdgeKind.CALLS.value, EdgeKind.TESTED_BY.value, EdgeKind.IMPORTS.value
CONTAINS = EdgeKind.CONTAINS.value
FILE_TYPES = frozenset(
    {
        NodeKind.MODULE.value,
        NodeKind.DOCUMENT.value,
        NodeKind.REPOSITORY.value,
        NodeKind.FILE.value,
        NodeKind.PACKAGE.value,
    }
)
UNIT_TYPES = (NodeKind.MODULE, NodeKind.DOCUMENT, NodeKind.FILE)
"""A changed file as a whole: what imports it is affected (a Go file's importers import its package)."""
DEFAULT_LIMIT = bounds.PER_DIRECTION_LIMIT
"""Entries per direction unless asked: the traversal template's cap (an entry is a name, a location
and call lines, so 50 of them cost about 1,000 tokens)."""
ROOTS_PER_CALL = 8
"""Roots per traversal in impact: a template call's node limit is shared by all of its roots."""
SUMMARY_CHARS = 160
CALL_SITES = 10
"""Call-site lines shown per entry; the rest are counted in `more_call_sites`."""
HASH_PAGE = 1000
FILE_SYMBOL_PAGES = 20
"""At most this many pages of a file's symbols are read (20,000 symbols); beyond, the cut is named."""
CUT_FOLLOW_UP = "Cut to fit the budget; raise max_tokens, or ask `symbol` about one entry."
"""The advice in words, when the complete call does not fit (or no larger budget is left)."""


def _more_tokens(budget: Budget) -> int | None:
    """Twice this answer's budget (capped), or None when it had the largest budget already."""
    tokens = int(budget.envelope["budget"]["max_tokens"])
    return min(bounds.MAX_TOKENS, tokens * 2) if tokens < bounds.MAX_TOKENS else None


def _retry(op: str, subject: Entity, *, limit: int, depth: int = 1) -> dict[str, Any]:
    """The call that asked for this answer, its subject by an identity that resolves to it alone;
    arguments left at their defaults are left out."""
    args: dict[str, Any] = {"op": op, "name": subject.identity()}
    if depth != 1:
        args["depth"] = depth
    if limit != DEFAULT_LIMIT:
        args["limit"] = limit
    return args


def _reserve_follow_up(budget: Budget) -> bool:
    """Room for the follow-up decided after placement: a complete call's, else the words'; whether
    the room fits (the words are left in place when neither does)."""
    for room in ("x" * FOLLOW_UP_CHARS, CUT_FOLLOW_UP):
        budget.envelope["follow_up"] = room
        if budget.fits():
            return True
    return False


def _set_follow_up(budget: Budget, *texts: str) -> None:
    """The first of `texts` that fits the budget, else none."""
    for text in texts:
        budget.envelope["follow_up"] = text
        if budget.fits():
            return
    budget.envelope.pop("follow_up")


def code_card(
    entity: Entity, *, include_ids: bool, summary_chars: int | None = SUMMARY_CHARS
) -> dict[str, Any]:
    """An entity as a search hit: name, qualified name, type, file + line range, signature, summary.
    Aliases, content hashes and timestamps stay out (the qualified name or location identifies it)."""
    card = entity_card(entity, include_ids=include_ids, summary_chars=summary_chars)
    for key in ("aliases", "source", "updated_at"):
        card.pop(key, None)
    return card


def at(entity: Entity) -> str:
    """Where an entity is: `path:first-last` (its whole range), or the path of a file."""
    if not entity.path:
        return ""
    if entity.type in FILE_TYPES or not entity.line_start:
        return entity.path
    return f"{entity.path}:{entity.line_start}-{entity.line_end or entity.line_start}"


def brief_card(entity: Entity, *, include_ids: bool) -> dict[str, Any]:
    """A related entity: its qualified name and where it is."""
    card: dict[str, Any] = {"name": entity.display_name()}
    if include_ids:
        card["id"] = entity.id
    where = at(entity)
    if where:
        card["at"] = where
    return card


def subject_card(entity: Entity, *, include_ids: bool, def_line: int | None = None) -> dict[str, Any]:
    """The entity asked about: qualified name, type, where (and, when decorated, its `def` line:
    the range starts at the first decorator), signature and summary."""
    card = brief_card(entity, include_ids=include_ids)
    card["type"] = entity.type
    if def_line and def_line != entity.line_start:
        card["def_line"] = def_line
    if entity.signature:
        card["signature"] = entity.signature
    if entity.summary:
        card["summary"] = entity.summary
    return card


def _lines(value: str | None) -> list[int]:
    """Call-site lines of a `calls` fact ("12,40"); anything else in the value is ignored."""
    return sorted({int(p) for p in (value or "").split(",") if p.strip().isdigit()})


def run_id(entity: Entity) -> str | None:
    """How a test runner selects a test: its pytest node id (`path::Class::test`), or for Go the
    `go test` command line that runs it alone."""
    parsed = ids.parse(entity.id)
    if parsed is None or not parsed.member:
        return None
    if parsed.lang == "go":
        directory = parsed.path.rpartition("/")[0]
        where = f"./{directory}" if directory else "."
        if parsed.member.startswith("Benchmark"):
            return f"go test -run '^$' -bench '^{parsed.member}$' {where}"
        return f"go test -run '^{parsed.member}$' {where}"
    if parsed.lang != "py":
        return None
    return f"{parsed.path}::{parsed.member.replace('.', '::')}"


@dataclass
class Related:
    """What one relation reaches from some roots: nodes by id with their depth, the edges, and how
    many edges the template's per-direction and node limits cut."""

    roots: dict[str, Entity]
    hops: int = 1
    nodes: dict[str, tuple[Entity, int]] = field(default_factory=dict)
    edges: list[Fact] = field(default_factory=list)
    cut: int = 0
    cut_unknown: bool = False
    """A limit cut edges of an answer the isolation re-check had to clean: how many is not known."""

    def entity(self, entity_id: str) -> Entity | None:
        if entity_id in self.roots:
            return self.roots[entity_id]
        found = self.nodes.get(entity_id)
        return found[0] if found else None


class CodeOps:
    """The code operations over one set of stores (the ContextService's), its read trunk and clock."""

    def __init__(self, stores: Stores, retriever: Retriever, clock: Clock) -> None:
        self.stores = stores
        self.retriever = retriever
        self.clock = clock

    # -- search -------------------------------------------------------------------------------

    def search(
        self, scope: Scope, query: str, *, max_tokens: int | None = None, include_ids: bool = False
    ) -> dict[str, Any]:
        """Code and docs through the read trunk: exact identifiers first, then BM25 + dense fused by
        RRF, hydrated from the graph and re-checked against the scope; at most 8 items."""
        query = bounds.check_query(query)
        watch = Stopwatch()
        isolation = Isolation(scope)
        retriever = self.retriever
        found, legs, coverage = retriever.find(scope, query, Deadline(retriever.deadline_s), watch, isolation)
        found = self._named(scope, query, found, isolation)
        code = [c for c in found if c.entity.type in CODE_TYPES]
        coverage["not_code"] = len(found) - len(code)
        selected = code[: bounds.MAX_ENTRIES]
        coverage["returned"] = len(selected)
        envelope, budget = self._envelope(
            "search", scope, max_tokens, bounds.DEFAULT_RECALL_TOKENS, isolation
        )
        envelope.update(legs=legs, coverage=coverage, items=[])
        _reserve_follow_up(budget)
        # every stage timed is measured (as a fixed-width placeholder) before anything is placed
        envelope["timings_ms"] = dict.fromkeys((*watch.laps, "total"), 0.0)
        unmatched = "No code or docs matched in this scope; try an exact qualified name or path::name, "
        no_match = unmatched + "or `recall` for memory."
        if not selected:
            envelope["follow_up"] = no_match
        budget.require_fit("the envelope")
        entries = []
        for rank, cand in enumerate(selected, start=1):
            card = {
                "rank": rank,
                **code_card(cand.entity, include_ids=include_ids),
                "match": cand.match_card(),
            }
            entries.append((cand.entity.display_name(), [Option(card)]))
        budget.place("items", entries)
        if not selected:
            _set_follow_up(budget, unmatched + "or memory: " + call("recall", query=query), no_match)
        elif not envelope["omissions"]:
            envelope["follow_up"] = None
        else:
            more = _more_tokens(budget)
            first = call("symbol", name=selected[0].entity.identity())
            _set_follow_up(
                budget,
                *([f"Cut to fit the budget; retry with more: {call('search', query=query, max_tokens=more)}"]
                  if more else []),
                f"Cut to fit the budget; see the first item in full: {first}",
                CUT_FOLLOW_UP,
            )  # fmt: skip
        return budget.finish(watch.total())

    def _named(
        self, scope: Scope, query: str, found: list[Candidate], isolation: Isolation
    ) -> list[Candidate]:
        """A query that is one dotted name no entity carries exactly, but that `symbol` resolves to
        one definition (a name a package or module re-exports, `attrs.define` for
        attr._next_gen.define; a unique dotted tail, `Attribute.evolve`): that definition first,
        matched as `resolved_name`."""
        name = query.strip().strip("`'\"")
        if any(c.exact for c in found) or " " in name or "." not in name.strip("."):
            return found
        try:
            entity = resolve(self.stores.graph, scope, name)
        except (NotFound, AmbiguousName, InputError):
            return found
        if entity.type not in CODE_TYPES or not isolation.admit_entity(entity):
            return found
        ranked = next((c for c in found if c.entity.id == entity.id), None)
        first = Candidate(entity, "resolved_name", *((ranked.ranks, ranked.score) if ranked else ()))
        return [first, *(c for c in found if c.entity.id != entity.id)]

    # -- symbol, callers, callees -------------------------------------------------------------

    def symbol(
        self,
        scope: Scope,
        name: str,
        *,
        limit: int = DEFAULT_LIMIT,
        max_tokens: int | None = None,
        include_ids: bool = False,
    ) -> dict[str, Any]:
        """The definition card: the symbol, its callers (tests among them marked) and callees with
        their call lines, and the tests that reach it otherwise; each direction capped at `limit`
        with counts of what was cut."""
        watch = Stopwatch()
        isolation = Isolation(scope)
        subject = resolve(self.stores.graph, scope, name)
        limit = _limit(limit)
        callers = self._walk(scope, isolation, [subject], (CALLS,), "in", 1, limit)
        tests = self._walk(scope, isolation, [subject], (TESTED_BY,), "out", 1, limit)
        rels = {
            "callers": callers,
            "callees": self._walk(scope, isolation, [subject], (CALLS,), "out", 1, limit),
            "tests": _without(tests, callers.nodes),
        }
        marked = self._tests_of(scope, isolation, callers, tests)
        envelope, budget = self._envelope("symbol", scope, max_tokens, bounds.DEFAULT_CODE_TOKENS, isolation)
        envelope["subject"] = self._subject(scope, isolation, subject, include_ids)
        budget.require_fit(f"the subject {subject.display_name()!r}")
        directions: dict[str, Direction] = {"callers": "in", "callees": "out", "tests": "out"}
        entries = self._prepare(budget, rels, directions, limit, include_ids, exact=True, tests=marked)
        self._fill(budget, entries, _retry("symbol", subject, limit=limit))
        return budget.finish(watch.total())

    def calls(
        self,
        scope: Scope,
        name: str,
        direction: Direction,
        *,
        depth: int = 1,
        limit: int = DEFAULT_LIMIT,
        max_tokens: int | None = None,
        include_ids: bool = False,
    ) -> dict[str, Any]:
        """Callers (direction "in") or callees ("out") of one symbol, 1-2 hops."""
        key = {"in": "callers", "out": "callees"}[direction]
        watch = Stopwatch()
        isolation = Isolation(scope)
        subject = resolve(self.stores.graph, scope, name)
        depth = bounds.clamp(depth, 1, bounds.MAX_HOPS)
        limit = _limit(limit)
        rel = self._walk(scope, isolation, [subject], (CALLS,), direction, depth, limit)
        tests: set[str] = set()
        if direction == "in":
            tested = self._walk(scope, isolation, [subject], (TESTED_BY,), "out", 1, limit)
            tests = self._tests_of(scope, isolation, rel, tested)
        envelope, budget = self._envelope(key, scope, max_tokens, bounds.DEFAULT_CODE_TOKENS, isolation)
        envelope["subject"] = self._subject(scope, isolation, subject, include_ids)
        envelope["depth"] = depth
        budget.require_fit(f"the subject {subject.display_name()!r}")
        entries = self._prepare(
            budget, {key: rel}, {key: direction}, limit, include_ids, exact=depth == 1, tests=tests
        )
        self._fill(budget, entries, _retry(key, subject, limit=limit, depth=depth))
        return budget.finish(watch.total())

    def _subject(
        self, scope: Scope, isolation: Isolation, subject: Entity, include_ids: bool
    ) -> dict[str, Any]:
        """The subject's card, with its `def` line when decorated (kept on its `contains` edge)."""
        def_line = None
        if subject.type not in FILE_TYPES and subject.line_start:
            params = FactsFromRootsParams(
                roots=(subject.id,), predicates=(CONTAINS,), direction="in", limit=2
            )
            for fact in self.stores.graph.run(FACTS_FROM_ROOTS, scope, params).facts:
                if isolation.admit_fact(fact) and fact.object_id == subject.id and _lines(fact.value):
                    def_line = _lines(fact.value)[0]
        return subject_card(subject, include_ids=include_ids, def_line=def_line)

    # -- impact -------------------------------------------------------------------------------

    def impact(
        self,
        scope: Scope,
        files: Sequence[str] = (),
        diff: str | None = None,
        *,
        depth: int = 1,
        limit: int = DEFAULT_LIMIT,
        max_tokens: int | None = None,
        include_ids: bool = False,
        repo: str | None = None,
    ) -> dict[str, Any]:
        """What a change touches: the symbols whose line ranges overlap the changed lines (every
        symbol of a file listed without lines), their callers (1-2 hops) and the tests to run (each
        with its runner id). Paths are repository-relative; a path several indexed repositories hold
        counts in each unless `repo` names one. Files the graph does not hold are `unknown`."""
        watch = Stopwatch()
        deadline = Deadline(self.retriever.deadline_s)
        isolation = Isolation(scope)
        changes = _changes(files, diff)
        depth = bounds.clamp(depth, 1, bounds.MAX_HOPS)
        limit = _limit(limit)
        repos = self._repositories(scope, repo)
        affected: dict[str, Entity] = {}
        unknown: list[str] = []
        scan_cut = 0
        for change in changes:
            deadline.check("mapping the changed files")
            hit, cut = self._affected(scope, isolation, change, repos)
            scan_cut += cut
            if hit is None:
                unknown.append(change.path)
            else:
                affected.update((e.id, e) for e in hit)
        roots = sorted(affected.values(), key=_order)
        modules = [e for e in roots if e.type in UNIT_TYPES]
        symbols = [e for e in roots if e.type not in UNIT_TYPES]
        modules += self._packages_of(scope, isolation, [e for e in modules if e.type == NodeKind.FILE])
        deadline.check("the callers of the change")
        callers = self._walk(scope, isolation, symbols, (CALLS,), "in", depth, limit)
        importers = self._walk(scope, isolation, modules, (IMPORTS,), "in", 1, limit)
        callers.roots.update(importers.roots)
        callers.nodes.update({k: v for k, v in importers.nodes.items() if k not in callers.nodes})
        callers.edges += importers.edges
        callers.cut += importers.cut
        callers.cut_unknown |= importers.cut_unknown
        tested = [*symbols, *(e for e, d in callers.nodes.values() if d == 1)]
        deadline.check("the tests of the change")
        tests = self._walk(scope, isolation, tested, (TESTED_BY,), "out", 1, limit)
        changed_tests = self._tests_among(scope, isolation, symbols)
        for entity in symbols:  # a changed test is a test to run
            if entity.id in changed_tests:
                tests.nodes.setdefault(entity.id, (entity, 1))
        for edge in tests.edges:  # a test that calls the change is listed once, as a test
            moved = callers.nodes.pop(edge.object_id or "", None)
            if moved is not None:
                tests.nodes.setdefault(moved[0].id, (moved[0], 1))
        for test_id in tests.nodes:
            callers.nodes.pop(test_id, None)

        envelope, budget = self._envelope("impact", scope, max_tokens, bounds.DEFAULT_CODE_TOKENS, isolation)
        envelope["changed"] = {
            "files": len(changes),
            "ranges": sum(len(c.changes) for c in changes if not c.whole),
            "whole_files": sum(1 for c in changes if c.whole),
        }
        envelope["depth"] = depth
        if not roots and unknown:
            envelope["follow_up"] = "No changed file is in this graph; index the repository first."
        budget.require_fit("the envelope")
        budget.reserve("unknown")
        budget.reserve("affected")
        envelope["counts"] = {"affected": len(roots)}
        rels = {"callers": callers, "tests": tests}
        entries = self._prepare(
            budget, rels, {"callers": "in", "tests": "out"}, limit, include_ids, exact=False, runnable=True
        )
        if scan_cut:
            budget.note({"what": "affected", "count": scan_cut, "reason": "limit", "at_least": True})
        budget.place("unknown", [(p, [Option({"path": p[:512]})]) for p in unknown])
        budget.place(
            "affected",
            [
                (e.display_name(), [Option({**brief_card(e, include_ids=include_ids), "type": e.type})])
                for e in roots
            ],
        )
        self._fill(budget, entries)
        return budget.finish(watch.total())

    def _repositories(self, scope: Scope, repo: str | None) -> list[str]:
        names = [r.name for r in list_repositories(self.stores.graph, scope)]
        if repo is None:
            return names
        ids.check_repo_name(repo)
        if repo not in names:
            raise NotFound(f"no repository named {repo!r} in this scope", name=repo)
        return [repo]

    def _affected(
        self, scope: Scope, isolation: Isolation, change: FileChange, repos: Sequence[str]
    ) -> tuple[list[Entity] | None, int]:
        """The symbols a file change touches in every repository holding the file (None when none
        does) and how many of their symbols were left unread by the page cap."""
        graph = self.stores.graph
        path = change.path.removeprefix("./")
        wanted = [i for r in repos for i in ids.file_ids(r, path)]
        heads = [
            e
            for chunk in batches(wanted, HASH_PAGE)
            for e in graph.run(ENTITY_GET, scope, EntityGetParams(ids=tuple(chunk))).entities
            if isolation.admit_entity(e)
        ]
        if not heads:
            return None, 0
        found: list[Entity] = []
        cut = 0
        for head in heads:
            hit, more = self._touched(scope, isolation, head, change)
            found += hit
            cut += more
        return found, cut

    def _touched(
        self, scope: Scope, isolation: Isolation, head: Entity, change: FileChange
    ) -> tuple[list[Entity], int]:
        graph = self.stores.graph
        prefix = f"{head.id}#" if head.id.startswith("md:") else f"{head.id}::"
        member_ids, cut = self._ids_with_prefix(scope, prefix)
        members = [
            e
            for chunk in batches(member_ids, HASH_PAGE)
            for e in graph.run(ENTITY_GET, scope, EntityGetParams(ids=chunk)).entities
            if isolation.admit_entity(e)
        ]
        if change.whole:
            return [head, *members], cut
        hit: set[str] = set()
        for c in change.changes:
            touching = [
                e for e in members if e.line_start and c.touches(e.line_start, e.line_end or e.line_start)
            ]
            innermost = [e for e in touching if not any(o is not e and _inside(o, e) for o in touching)]
            if innermost:
                hit.update(e.id for e in innermost)
            else:
                hit.add(head.id)  # module-level code changed
        return [e for e in [head, *members] if e.id in hit], cut

    def _packages_of(self, scope: Scope, isolation: Isolation, files: Sequence[Entity]) -> list[Entity]:
        """The Go packages these files belong to (what importers import)."""
        rel = self._walk(scope, isolation, files, (CONTAINS,), "in", 1, 1)
        return [e for e, _ in rel.nodes.values() if e.type == NodeKind.PACKAGE]

    def _ids_with_prefix(self, scope: Scope, prefix: str) -> tuple[list[str], int]:
        """Ids are prefix-enumerable: at most FILE_SYMBOL_PAGES pages of them, and 1 if more exist."""
        cap = FILE_SYMBOL_PAGES * HASH_PAGE
        found = stored_hashes(self.stores.graph, scope, prefix, page=HASH_PAGE)
        ids_ = [h.id for h in islice(found, cap + 1)]
        return ids_[:cap], int(len(ids_) > cap)

    # -- shared parts -------------------------------------------------------------------------

    def _walk(
        self,
        scope: Scope,
        isolation: Isolation,
        roots: Sequence[Entity],
        edge_types: tuple[str, ...],
        direction: Direction,
        depth: int,
        limit: int,
    ) -> Related:
        rel = Related(roots={e.id: e for e in roots}, hops=depth)
        ids_ = list(rel.roots)
        seen: set[str] = set()
        for batch in batches(ids_, ROOTS_PER_CALL):
            params = NeighbourhoodParams(
                roots=batch,
                edge_types=edge_types,
                direction=direction,
                depth=depth,
                per_direction_limit=limit,
                limit=bounds.NEIGHBOURHOOD_LIMIT,
                as_of=self.clock(),
            )
            sub = self.stores.graph.run(NEIGHBOURHOOD, scope, params)
            kept = isolation.admit_subgraph(sub, batch, direction, params.depth)
            rel.cut += kept.omitted if kept.clean else 0  # a leaky store's count counts foreign edges
            rel.cut_unknown |= kept.truncated and not kept.clean
            for node in kept.nodes:
                if node.entity.id in rel.roots:
                    continue
                known = rel.nodes.get(node.entity.id)
                if known is None or node.depth < known[1]:
                    rel.nodes[node.entity.id] = (node.entity, node.depth)
            for edge in kept.edges:
                if edge.id not in seen:
                    seen.add(edge.id)
                    rel.edges.append(edge)
        return rel

    def _tests_of(self, scope: Scope, isolation: Isolation, callers: Related, tested: Related) -> set[str]:
        """Which callers are tests: the subject's tests (a test that calls it is one), and, for the
        callers that walk could not vouch for (farther callers, or tests cut by the limit), a read."""
        known = set(tested.nodes)
        unsure = [e for e, d in callers.nodes.values() if e.id not in known and (d > 1 or tested.cut)]
        return known | (self._tests_among(scope, isolation, unsure) if unsure else set())

    def _tests_among(self, scope: Scope, isolation: Isolation, entities: Sequence[Entity]) -> set[str]:
        """Which of these entities are tests: those something is `tested_by` (one edge suffices)."""
        rel = self._walk(scope, isolation, entities, (TESTED_BY,), "in", 1, 1)
        return {e.object_id or "" for e in rel.edges if e.predicate == TESTED_BY} & set(rel.roots)

    def _prepare(
        self,
        budget: Budget,
        rels: dict[str, Related],
        directions: dict[str, Direction],
        limit: int,
        include_ids: bool,
        *,
        exact: bool,
        tests: set[str] = frozenset(),  # type: ignore[assignment]
        runnable: bool = False,
    ) -> dict[str, list[tuple[str, list[Option]]]]:
        """Counts, room for each direction, and the limit cuts named. `exact`: one root at depth 1,
        where the template's cut count is the exact number of entries left out. `tests`: the ids of
        the tests among the entries (marked); `runnable`: test entries say how to run them."""
        envelope = budget.envelope
        entries = {
            key: self._entries(rel, directions[key], include_ids, many=len(rel.roots) > 1,
                               tests=tests if key == "callers" else set(),
                               runnable=runnable and key == "tests")
            for key, rel in rels.items()
        }  # fmt: skip
        counts: dict[str, Any] = envelope.setdefault("counts", {})
        for key, rel in rels.items():
            exact_total = exact and not rel.cut_unknown
            counts[key] = len(entries[key]) + (rel.cut if exact_total else 0)
        for key in rels:
            budget.reserve(key)
        for key, rel in rels.items():
            if rel.cut or rel.cut_unknown:
                note: dict[str, Any] = {"what": key, "count": rel.cut, "reason": "limit", "limit": limit}
                if not exact or rel.cut_unknown:
                    note.update(unit="edges", at_least=True)
                budget.note(note)
        return entries

    def _fill(
        self,
        budget: Budget,
        entries: dict[str, list[tuple[str, list[Option]]]],
        retry: dict[str, Any] | None = None,
    ) -> None:
        """Smaller directions are placed first so that a wide fan-in cannot crowd out the rest; the
        JSON keeps the order the directions were reserved in. What does not fit is named, and the
        follow-up is the same call (`retry`: its op and arguments) with a larger budget when one is
        left, or, at the largest, the call of one cut direction alone (a symbol's callers or
        callees); the advice in words when neither fits."""
        envelope = budget.envelope
        had, earlier = "follow_up" in envelope, envelope.get("follow_up")
        if earlier is None and not _reserve_follow_up(budget):
            envelope["follow_up"] = None
            if not had:
                envelope.pop("follow_up")
        for key in sorted(entries, key=lambda k: len(entries[k])):
            budget.place(key, entries[key])
        if earlier is not None:
            return
        if not envelope["omissions"]:
            if had:
                envelope["follow_up"] = None
            else:
                envelope.pop("follow_up")
            return
        calls = []
        if retry is not None:
            op, args = retry["op"], {k: v for k, v in retry.items() if k != "op"}
            more = _more_tokens(budget)
            if more:
                calls.append(f"Cut to fit the budget; retry with more: {call(op, **args, max_tokens=more)}")
            elif op == "symbol":
                cut = [om["what"] for om in envelope["omissions"] if om.get("what") in ("callers", "callees")]
                if cut:
                    one = call(cut[0], name=args["name"])
                    calls.append(f"Cut to fit the largest budget; see the {cut[0]} alone: {one}")
        _set_follow_up(budget, *calls, CUT_FOLLOW_UP)

    def _entries(
        self,
        rel: Related,
        direction: Direction,
        include_ids: bool,
        *,
        many: bool,
        tests: set[str] = frozenset(),  # type: ignore[assignment]
        runnable: bool = False,
    ) -> list[tuple[str, list[Option]]]:
        """One entry per node: its card, the call lines (in the caller's file) of the edges that
        reach it from the previous hop, and which entities those edges join it to."""
        out = []
        nodes = sorted(rel.nodes.values(), key=lambda n: (n[1], *_order(n[0])))
        for entity, depth in nodes:
            if direction == "in":
                edges = [
                    e for e in rel.edges if e.subject_id == entity.id and _prior(rel, e.object_id, depth)
                ]
                others = [e.object_id or "" for e in edges]
            else:
                edges = [
                    e for e in rel.edges if e.object_id == entity.id and _prior(rel, e.subject_id, depth)
                ]
                others = [e.subject_id for e in edges]
            card = brief_card(entity, include_ids=include_ids)
            if entity.id in tests:
                card["test"] = True
            if runnable and run_id(entity):
                card["run"] = run_id(entity)
            if rel.hops > 1 or many:
                card["depth"] = depth
                card["via"] = sorted({_name(rel, o) for o in others})
            lines = sorted({line for edge in edges for line in _lines(edge.value)})
            if lines:
                card["lines"] = lines[:CALL_SITES]
                if len(lines) > CALL_SITES:
                    card["more_lines"] = len(lines) - CALL_SITES
            out.append((entity.display_name(), [Option(card)]))
        return out

    def _envelope(
        self, op: str, scope: Scope, max_tokens: int | None, default: int, isolation: Isolation
    ) -> tuple[dict[str, Any], Budget]:
        """An answer of a graph-only operation: its provenance is the graph store and the catalogue."""
        tokens = bounds.normalise_tokens(max_tokens, default)
        graph = self.stores.describe().get("graph", "")
        return open_envelope(
            op,
            scope,
            as_of=self.clock(),
            backends={"graph": graph},
            max_tokens=tokens,
            rejected=isolation.rejected,
            counter=self.retriever.counter,
        )


def _without(rel: Related, listed: dict[str, tuple[Entity, int]]) -> Related:
    """The relation without the nodes another section already lists."""
    kept = {i: n for i, n in rel.nodes.items() if i not in listed}
    edges = [e for e in rel.edges if (e.object_id or "") in kept or e.subject_id in kept]
    return Related(
        roots=rel.roots, hops=rel.hops, nodes=kept, edges=edges, cut=rel.cut, cut_unknown=rel.cut_unknown
    )


def _changes(files: Sequence[str], diff: str | None) -> list[FileChange]:
    if isinstance(files, str) or not isinstance(files, Sequence):
        raise InputError("files must be a list of paths", field="files")
    bounds.check_count("files", files, bounds.FILE_LIST_ENTRIES)
    out = [FileChange(bounds.check_selector("file path", f), whole=True) for f in files]
    if diff is not None:
        out += parse_diff(diff)
    if not out:
        raise InputError("nothing changed: give a list of files or a unified diff", field="files")
    return merge(out)


def _inside(inner: Entity, outer: Entity) -> bool:
    """`inner` is nested in `outer` (same file, range within)."""
    if inner.path != outer.path or not inner.line_start or not outer.line_start:
        return False
    return (
        outer.line_start <= inner.line_start
        and (inner.line_end or inner.line_start) <= (outer.line_end or outer.line_start)
        and (inner.line_start, inner.line_end) != (outer.line_start, outer.line_end)
    )


def _prior(rel: Related, entity_id: str | None, depth: int) -> bool:
    """The edge's other end is one hop nearer the roots."""
    if entity_id is None:
        return False
    if entity_id in rel.roots:
        return depth == 1
    known = rel.nodes.get(entity_id)
    return known is not None and known[1] == depth - 1


def _name(rel: Related, entity_id: str) -> str:
    entity = rel.entity(entity_id)
    return entity.display_name() if entity else entity_id


def _order(entity: Entity) -> tuple[str, int, str]:
    return (entity.path or "", entity.line_start or 0, entity.display_name())


def _limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InputError(f"limit must be an integer, got {type(limit).__name__}", field="limit")
    return bounds.clamp(limit, 1, bounds.PER_DIRECTION_LIMIT)


__all__ = ["CODE_TYPES", "Change", "CodeOps", "code_card"]
