// Registers the traversal source `g` for bytecode and script requests.
// TinkerGraph scans every element for a filter unless the key is indexed; every graphctx traversal
// starts with an equality on tenant_id, so that key is indexed for vertices and edges.
graph.createIndex("tenant_id", Vertex.class)
graph.createIndex("tenant_id", Edge.class)
def globals = [:]
globals << [g : traversal().withEmbedded(graph)]
