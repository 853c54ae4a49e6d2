"""Code intelligence: index repositories into the code graph and answer code questions."""
