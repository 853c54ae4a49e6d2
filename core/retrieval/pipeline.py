"""The read trunk: exact first, BM25 and dense legs, RRF, hydration, isolation, expansion, budget."""

from __future__ import annotations

import time
from concurrent.futures import Executor, TimeoutError
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from graphctx import bounds, deadlines
from graphctx.clock import Clock, iso
from graphctx.deadlines import Deadline
from graphctx.envelope import ENVELOPE_VERSION, Budget, Option
from graphctx.errors import GraphctxError, InvalidVector
from graphctx.followups import call
from graphctx.kernel.ports import LexicalHit, VectorHit
from graphctx.kernel.stores import Stores
from graphctx.kernel.templates import (
    CATALOG_VERSION,
    ENTITY_FIND_EXACT,
    ENTITY_GET,
    FACTS_FROM_ROOTS,
    NEIGHBOURHOOD,
    EntityFindExactParams,
    EntityGetParams,
    ExactMatch,
    FactsFromRootsParams,
    NeighbourhoodParams,
)
from graphctx.model import Entity, Fact
from graphctx.retrieval.ends import name_ends
from graphctx.retrieval.exact import probes, split_matches
from graphctx.retrieval.fusion import Fused, rrf
from graphctx.retrieval.isolation import Isolation
from graphctx.retrieval.render import entity_card, fact_line, facts_about, item_options
from graphctx.retrieval.runner import Saturated
from graphctx.scope import Scope
from graphctx.tokens import TokenCounter
from graphctx.vectors import checked_vector


class Stopwatch:
    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.laps: dict[str, float] = {}

    def lap(self, stage: str, since: float) -> float:
        now = time.perf_counter()
        self.laps[stage] = (now - since) * 1000.0
        return now

    def total(self) -> dict[str, float]:
        return {**self.laps, "total": (time.perf_counter() - self.start) * 1000.0}


FOLLOW_UP_CHARS = 120
"""Room kept for the follow-up: a complete call with a selector of up to about 50 characters (the
answer must fit 256 tokens); a longer one is worded without the call."""
STAGES = ("exact", "legs", "hydrate", "fuse", "expand", "budget")


@dataclass
class Candidate:
    entity: Entity
    exact: str | None = None
    ranks: dict[str, int] = field(default_factory=dict)
    score: float = 0.0

    def match_card(self) -> dict[str, Any]:
        """How it was found: the exact field, each leg's rank, the fused score."""
        match: dict[str, Any] = {"exact": self.exact} if self.exact else {}
        match.update(self.ranks)
        if self.score:
            match["score"] = round(self.score, 6)
        return match


class Retriever:
    def __init__(
        self,
        stores: Stores,
        executor: Executor,
        clock: Clock,
        deadline_s: float = bounds.DEADLINE_S,
        dense_deadline_s: float = bounds.DENSE_DEADLINE_S,
    ) -> None:
        self.stores = stores
        self.executor = executor
        self.clock = clock
        self.deadline_s = deadline_s
        self.dense_deadline_s = dense_deadline_s
        self.counter: TokenCounter | None = None
        """A pinned tokenizer every answer is also counted with (graphctx.tokens); None: bytes/4 only."""

    # -- legs ---------------------------------------------------------------------------------

    def _dense(self, scope: Scope, query: str) -> list[VectorHit]:
        embedder, vector = self.stores.embedder, self.stores.vector
        assert embedder is not None and vector is not None
        query_vector = checked_vector(embedder.embed([query])[0], embedder.dimension)
        hits = vector.search(scope, query_vector.tolist(), bounds.LEG_CANDIDATES)
        return [h for h in hits if h.score >= embedder.similarity_floor]

    def _legs(
        self, scope: Scope, query: str, deadline: Deadline, legs: dict[str, Any]
    ) -> tuple[list[LexicalHit], list[VectorHit]]:
        dense_future = None
        if self.stores.vector is not None and self.stores.embedder is not None:
            dense_future = self.executor.submit(deadlines.carry(self._dense), scope, query)
        else:
            legs["dense"] = {"status": "disabled"}
        lexical_hits: list[LexicalHit] = []
        try:
            lexical_hits = self.stores.lexical.search(scope, query, bounds.LEG_CANDIDATES)
            legs["bm25"] = {"status": "ok"}
        except GraphctxError as exc:
            legs["bm25"] = {"status": "error", "error": exc.code}
        dense_hits: list[VectorHit] = []
        if dense_future is not None:
            budget = max(0.0, min(self.dense_deadline_s, deadline.remaining()))
            try:
                dense_hits = dense_future.result(timeout=budget)
                legs["dense"] = {"status": "ok"}
            except TimeoutError:
                dense_future.cancel()
                legs["dense"] = {"status": "timeout", "budget_s": self.dense_deadline_s}
            except Saturated:  # every thread the leg may use is held by a hung earlier call
                legs["dense"] = {"status": "skipped", "reason": "earlier dense calls are still running"}
            except InvalidVector:
                legs["dense"] = {"status": "invalid_vector"}
            except Exception as exc:  # any embedder/vector failure degrades to lexical
                legs["dense"] = {"status": "error", "error": getattr(exc, "code", type(exc).__name__)}
            if legs["dense"]["status"] != "ok":
                legs["dense"]["fallback"] = "lexical"
        return lexical_hits[: bounds.LEG_CANDIDATES], dense_hits[: bounds.LEG_CANDIDATES]

    # -- recall -------------------------------------------------------------------------------

    def recall(
        self,
        scope: Scope,
        query: str,
        *,
        max_tokens: int | None = None,
        depth: int = 1,
        include_ids: bool = False,
        as_of: datetime | None = None,
    ) -> dict[str, Any]:
        """`as_of` (default now) is the instant the facts are valid at."""
        query = bounds.check_query(query)
        tokens = bounds.normalise_tokens(max_tokens, bounds.DEFAULT_RECALL_TOKENS)
        depth = bounds.clamp(depth, 1, bounds.MAX_HOPS)
        deadline = Deadline(self.deadline_s)
        watch = Stopwatch()
        as_of = as_of or self.clock()
        isolation = Isolation(scope)

        candidates, legs, coverage = self.find(scope, query, deadline, watch, isolation)
        t = time.perf_counter()
        selected = candidates[: bounds.MAX_ENTRIES]
        coverage["returned"] = len(selected)

        envelope = self._skeleton("recall", scope, as_of, tokens, legs, coverage, isolation)
        budget = Budget(envelope, tokens, byte_cap=bounds.RECALL_JSON_BYTES, counter=self.counter)
        budget.require_fit("the envelope")
        facts: list[Fact] = []
        names: dict[str, str] = {c.entity.id: c.entity.display_name() for c in selected}
        related: list[dict[str, Any]] = []
        if selected and deadline.remaining() > 0:
            facts, names, related = self._expand(scope, isolation, selected, names, depth, as_of, budget)
        elif selected:
            budget.note({"what": "facts", "count": len(selected), "reason": "deadline"})
        t = watch.lap("expand", t)

        entries = []
        shown: set[str] = set()  # each fact once, under the best-ranked item it touches
        for rank, cand in enumerate(selected, start=1):
            card = entity_card(cand.entity, include_ids=include_ids)
            base = {"rank": rank, **card, "match": cand.match_card()}
            mine = [f for f in facts_about(cand.entity.id, facts) if f.id not in shown]
            shown.update(f.id for f in mine)
            lines = [fact_line(f, cand.entity.id, names, include_ids=include_ids) for f in mine]
            label = cand.entity.display_name()
            entries.append((label, item_options(base, label, lines)))
        envelope["isolation"] = {"rejected": isolation.rejected}  # every check has run by now
        envelope["follow_up"] = "x" * FOLLOW_UP_CHARS  # room for the follow-up decided after placement
        if related:
            budget.reserve("related")
        budget.place("items", entries)
        if related:
            budget.place("related", [(r["name"], [Option(r)]) for r in related])
        first = selected[0].entity if selected else None
        envelope["follow_up"] = self._follow_up(envelope, legs, query, first)
        if not budget.fits():  # a long name or query (or escaped characters) outgrew the reserved room
            envelope["follow_up"] = self._follow_up(envelope, legs, None, None)
            budget.require_fit("the envelope")  # measured again only when the follow-up changed
        watch.lap("budget", t)
        return budget.finish(watch.total())

    def find(
        self, scope: Scope, query: str, deadline: Deadline, watch: Stopwatch, isolation: Isolation
    ) -> tuple[list[Candidate], dict[str, Any], dict[str, Any]]:
        """Steps 2-6 of the trunk: exact first, both legs, hydration, fusion, isolation. Returns every
        admitted candidate in rank order, the legs that ran and the coverage counts."""
        t = watch.start
        asked = probes(query)
        values = tuple(asked.values())
        # a long prose question may hold nothing short enough to be an identifier: no lookup then
        found = (
            self.stores.graph.run(
                ENTITY_FIND_EXACT, scope, EntityFindExactParams(values=values, limit=16)
            ).matches
            if values
            else ()
        )
        identity, mentions = split_matches([m for m in found if isolation.admit_entity(m.entity)], asked)
        t = watch.lap("exact", t)
        legs: dict[str, Any] = {"exact": {"status": "ok", "hits": len(identity), "mentions": len(mentions)}}

        deadline.check("the search legs")
        lexical_hits, dense_hits = self._legs(scope, query, deadline, legs)
        lexical_hits = [h for h in lexical_hits if isolation.admit_hit(h)]
        dense_hits = [h for h in dense_hits if isolation.admit_hit(h)]
        for leg, hits in (("bm25", lexical_hits), ("dense", dense_hits)):
            if legs.get(leg, {}).get("status") == "ok":  # counted after the re-check: no foreign hit
                legs[leg]["hits"] = len(hits)
        t = watch.lap("legs", t)

        deadline.check("hydration")
        fresh, by_id, coverage = self._hydrate(
            scope, isolation, identity + mentions, lexical_hits, dense_hits
        )
        fresh["mention"] = [m.entity.id for m in mentions if m.entity.id in by_id]
        t = watch.lap("hydrate", t)

        candidates = self._rank(identity, rrf(fresh), by_id)
        watch.lap("fuse", t)
        return candidates, legs, coverage

    def _hydrate(
        self,
        scope: Scope,
        isolation: Isolation,
        exact_hits: list[ExactMatch],
        lexical_hits: list[LexicalHit],
        dense_hits: list[VectorHit],
    ) -> tuple[dict[str, list[str]], dict[str, Entity], dict[str, Any]]:
        """Read every candidate from the graph, which is authoritative. An index hit whose entity is
        gone, or whose content hash is not the graph's, is dropped before fusion, so a lagging index
        never surfaces deleted or stale data (and never hides what the exact leg found)."""
        ids = list(
            dict.fromkeys(
                [m.entity.id for m in exact_hits]
                + [h.entity_id for h in lexical_hits]
                + [h.entity_id for h in dense_hits]
            )
        )
        found = (
            self.stores.graph.run(ENTITY_GET, scope, EntityGetParams(ids=tuple(ids))).entities if ids else ()
        )
        by_id = {e.id: e for e in found if isolation.admit_entity(e)}
        missing: set[str] = set()
        stale: set[str] = set()
        fresh: dict[str, list[str]] = {}
        hashes: dict[str, str] = {}  # an entity both legs found is hashed once
        for leg, hits in (("bm25", lexical_hits), ("dense", dense_hits)):
            fresh[leg] = []
            for hit in hits:
                entity = by_id.get(hit.entity_id)
                if entity is None:
                    missing.add(hit.entity_id)
                    continue
                if entity.id not in hashes:
                    hashes[entity.id] = entity.content_hash
                if hit.content_hash != hashes[entity.id]:
                    stale.add(hit.entity_id)
                else:
                    fresh[leg].append(hit.entity_id)
        coverage: dict[str, Any] = {
            "candidates": len(ids),
            "hydrated": len(by_id),
            "dropped_missing": len(missing),
            "dropped_stale": len(stale),
        }
        return fresh, by_id, coverage

    @staticmethod
    def _rank(exact_hits: list[ExactMatch], fused: list[Fused], by_id: dict[str, Entity]) -> list[Candidate]:
        """The query's identity matches first (in lookup order), then the fused candidates: BM25,
        dense and the mention leg (exact matches of words named inside a longer query)."""
        fused_by_id = {f.entity_id: f for f in fused}
        out: list[Candidate] = []
        for match in exact_hits:
            entity = by_id.get(match.entity.id)
            if entity is not None:
                extra = fused_by_id.get(entity.id)
                out.append(
                    Candidate(
                        entity, match.field, dict(extra.ranks) if extra else {}, extra.score if extra else 0.0
                    )
                )
        exact_ids = {c.entity.id for c in out}
        out += [
            Candidate(by_id[f.entity_id], None, dict(f.ranks), f.score)
            for f in fused
            if f.entity_id not in exact_ids
        ]
        return out

    def _expand(
        self,
        scope: Scope,
        isolation: Isolation,
        selected: list[Candidate],
        names: dict[str, str],
        depth: int,
        as_of: datetime,
        budget: Budget,
    ) -> tuple[list[Fact], dict[str, str], list[dict[str, Any]]]:
        graph = self.stores.graph
        roots = tuple(c.entity.id for c in selected)
        result = graph.run(FACTS_FROM_ROOTS, scope, FactsFromRootsParams(roots=roots, as_of=as_of))
        facts = [f for f in result.facts if isolation.admit_fact(f)]
        if result.truncated:
            budget.note({"what": "facts", "reason": "limit", "limit": bounds.MAX_FACTS})
        related: list[dict[str, Any]] = []
        if depth >= 2:
            params = NeighbourhoodParams(roots=roots, depth=2, as_of=as_of)
            sub = graph.run(NEIGHBOURHOOD, scope, params)
            kept = isolation.admit_subgraph(sub, roots, params.direction, params.depth)
            names.update({n.entity.id: n.entity.display_name() for n in kept.nodes})
            related = _related(kept.nodes, kept.edges, names)
            note = kept.limit_note("related")
            if note:
                budget.note(note)
        name_ends(graph, scope, isolation, names, facts)
        facts = [f for f in facts if all(i is None or i in names for i in (f.subject_id, f.object_id))]
        return facts, names, related

    # -- envelope parts -----------------------------------------------------------------------

    def _skeleton(
        self,
        op: str,
        scope: Scope,
        as_of: datetime,
        tokens: int,
        legs: dict[str, Any],
        coverage: dict[str, Any],
        isolation: Isolation,
    ) -> dict[str, Any]:
        return {
            "v": ENVELOPE_VERSION,
            "op": op,
            "scope": scope.as_dict(),
            "as_of": iso(as_of),
            "items": [],
            "legs": legs,
            "coverage": coverage,
            "isolation": {"rejected": isolation.rejected},
            "omissions": [],
            "truncated": False,
            "follow_up": None,
            "provenance": {**self.stores.describe(), "catalog": CATALOG_VERSION},
            "budget": {"max_tokens": tokens},
            "timings_ms": dict.fromkeys((*STAGES, "total"), 0.0),
        }

    @staticmethod
    def _follow_up(
        envelope: dict[str, Any], legs: dict[str, Any], query: str | None, first: Entity | None
    ) -> str | None:
        """The next call to make, complete with its arguments; without `query` / `first` (a long
        one outgrew the envelope's FOLLOW_UP_CHARS of room) the same advice in words."""
        items = envelope["items"]
        if not items and envelope["omissions"]:
            more = min(bounds.MAX_TOKENS, envelope["budget"]["max_tokens"] * 2)
            if query is None:
                return f"Every match was cut to fit the budget; retry with max_tokens {more}."
            return "Every match was cut to fit the budget; retry with more: " + call(
                "recall", query=query, max_tokens=more
            )
        if not items:
            return "No evidence in this scope; retry with an exact name, alias or identifier."
        if envelope["omissions"]:
            if first is None:
                return "Cut to fit the budget; `explain` the first item to see it in full."
            return "Cut to fit the budget; see the first item in full: " + call(
                "explain", name=first.identity()
            )
        if legs.get("dense", {}).get("status") not in ("ok", "disabled"):
            return "The dense leg was unavailable, so these are lexical and exact matches only."
        return None


def _related(nodes: list[Any], edges: list[Fact], names: dict[str, str]) -> list[dict[str, Any]]:
    """Second-hop neighbours with the edge that reaches them from a first-hop node."""
    depth = {n.entity.id: n.depth for n in nodes}
    out: list[dict[str, Any]] = []
    for node in nodes:
        if node.depth != 2:
            continue
        for edge in edges:
            ends = (edge.subject_id, edge.object_id)
            if node.entity.id in ends:
                other = edge.object_id if edge.subject_id == node.entity.id else edge.subject_id
                if other is not None and depth.get(other) == 1:
                    direction = "in" if edge.subject_id == node.entity.id else "out"
                    out.append(
                        {
                            "name": names[node.entity.id],
                            "type": node.entity.type,
                            "depth": 2,
                            "via": names.get(other, other),
                            "predicate": edge.predicate,
                            "direction": direction,
                        }
                    )
                    break
    return out
