"""Core layer: schema, encoding, hierarchies, frequency sets, I/O.

Knows nothing of algorithms."""
