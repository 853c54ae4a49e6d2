"""The store kernel: what every store and every caller of a store builds on.

- `templates` — the versioned, backend-neutral template catalogue (parameter and result models);
- `ports` — the Protocols every backend implements (GraphStore, LexicalIndex, VectorIndex, ...);
- `dispatch` — `TemplateDispatch`, the typed template dispatch graph-store adapters subclass;
- `rules` — the store rules every graph store applies the same way (uniqueness, fact order, ...);
- `walk` — the hop-wise bounded traversal (neighbourhood, shortest path) over any store's hop reads;
- `reads` — reads composed from templates (id-ordered hash scans, fixed-size batches);
- `stores` — the set of stores a service runs on, opened by name through the registry.

Adapters and the contract suite import from here; nothing here imports an adapter.
"""
