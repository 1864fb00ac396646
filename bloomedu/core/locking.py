"""An empty mixin that ``core/filter.py`` still lists among ``BloomFilter``'s bases.

The lock every filter holds around its writes is :class:`~bloomedu.core.contract.Filter`'s own
(made in its ``__new__``, never pickled or shared with a copy; :func:`~bloomedu.core.contract.locked`
runs a method under it).  This class adds nothing, and goes once ``BloomFilter`` takes
``Filter`` alone as its base.
"""

__all__ = ["LockedWrites"]


class LockedWrites:
    """Nothing: the lock is :class:`~bloomedu.core.contract.Filter`'s.

    >>> from bloomedu import BloomFilter
    >>> BloomFilter(64, 2)._lock is not BloomFilter(64, 2)._lock
    True
    """

    __slots__ = ()
