"""The base layer: errors, validation, names, the cache and the code fingerprint."""
