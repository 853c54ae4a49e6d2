"""tantivy adapter."""
