"""A Bloom filter inside a service: what sits in front of a slow store.

- :mod:`~bloomedu.services.blacklist`: article 2's blacklist cache,
  :class:`~bloomedu.services.blacklist.BlacklistCache`, a filter in front of a real SQLite table
  that answers exactly as the database does.
"""
