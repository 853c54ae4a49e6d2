// Registers the traversal source `g` for bytecode and script requests.
def globals = [:]
globals << [g : traversal().withEmbedded(graph)]
