"""Exercises for lessons 17 and 18: article 1's deduplicator shared on Redis.

Lesson 17: how many bits ``BF.RESERVE`` gives the first sub-filter (half the error rate,
floor, whole 64-bit words), how many sub-filters a stream opens, and the false-positive rate
of the whole chain, measured.  Lesson 18: how many shards the day's filter needs on a cluster,
what a round trip costs a client that batches its keys, and the share of IDs a shard's slot
range receives, measured.  Posed in ``notebooks/17_redisbloom.ipynb`` and
``notebooks/18_many_consumers.ipynb``; tested in ``tests/test_exercises.py``.
"""

from __future__ import annotations

import math

from ...core import theory
from ...core.checks import MAX_NUM_BITS, whole_number
from ...i18n import N_, gettext as _
from ._feedback import Exercise, Mistake, checker, judge, judge_measured

__all__ = ["EXERCISES", "chain_loads"]

_SLOTS = 16384  # Redis Cluster's hash slots

_LN2_SQUARED = 0.480453013918201  # RedisBloom's (ln 2)^2


def _module_bits(entries: int, error: float, log=math.log, whole_words: bool = True) -> int:
    bits = max(1, int(entries * -log(error) / _LN2_SQUARED))
    return 64 * -(-bits // 64) if whole_words else bits


_MOST_LINKS = 10_000  # sub-filters chain_loads lists: with expansion 2 a chain of 2**63 has 63


def chain_loads(capacity: int, expansion: int, n: int) -> list[tuple[int, float, int]]:
    """(entries, error, items) of each sub-filter after n distinct items, none a false positive.

    >>> chain_loads(1000, 2, 5000)
    [(1000, 0.005, 1000), (2000, 0.0025, 2000), (4000, 0.00125, 2000)]
    """
    capacity = whole_number(capacity, "capacity", 1, MAX_NUM_BITS)
    expansion = whole_number(expansion, "expansion", 1, MAX_NUM_BITS)
    n = whole_number(n, "n", 0, MAX_NUM_BITS)
    if expansion == 1 and -(-n // capacity) > _MOST_LINKS:
        raise ValueError(f"n={n} items in sub-filters of capacity={capacity} make "
                         f"{-(-n // capacity):,} sub-filters, more than the {_MOST_LINKS:,} "
                         "this table lists")
    loads, entries, error = [], capacity, 0.01 / 2
    while n > 0:
        loads.append((entries, error, min(n, entries)))
        n -= entries
        entries, error = entries * expansion, error / 2
    return loads


@checker
def redisbloom_bits(answer, error: float = 0.001, capacity: int = 1_000_000):
    """Bits of the first sub-filter of ``BF.RESERVE key error capacity``.

    >>> redisbloom_bits(15_820_288, error=0.001, capacity=1_000_000)
    Correct: the first sub-filter's bits = 15,820,288.
    True
    """
    correct = _module_bits(capacity, error / 2)
    return judge(answer, correct, _("the first sub-filter's bits"), rel=0, abs_tol=0.5, unit="bits",
                 mistakes=[
        Mistake(_module_bits(capacity, error), _("a scaling filter sizes its first sub-filter for "
                "half the error rate (error/2); error itself is for NONSCALING")),
        Mistake(theory.num_bits_for(n=capacity, p=error), _("that is lesson 08's from_capacity; "
                "RedisBloom uses half the error rate and whole 64-bit words"), 64),
        Mistake(_module_bits(capacity, error / 2, whole_words=False), _("the module rounds the bits "
                "up to whole 64-bit words"), 0.5),
        Mistake(_module_bits(capacity, error / 2, math.log10), _("you used log10 instead of ln"), 64),
    ], hint=_("bits = floor(capacity * -ln(error/2) / (ln 2)^2), rounded up to a multiple of 64."))


@checker
def redisbloom_filters(answer, capacity: int = 1000, expansion: int = 2, n: int = 10_000):
    """Sub-filters (``Number of filters`` in BF.INFO) after n distinct items.

    >>> redisbloom_filters(4, capacity=1000, expansion=2, n=10_000)
    Correct: the number of sub-filters = 4.
    True
    """
    correct = len(chain_loads(capacity, expansion, n))
    return judge(answer, correct, _("the number of sub-filters"), rel=0, mistakes=[
        Mistake(math.ceil(n / capacity), _("each new sub-filter holds {expansion} times the last one's "
                                           "capacity, not the same").format(expansion=expansion), 0),
        Mistake(correct - 1, _("a new sub-filter opens when the newest is full and one more new "
                "item arrives: count the one that holds the last items"), 0),
        Mistake(correct + 1, _("the last sub-filter is not full, and no further one opens"), 0),
    ], hint=_("capacities c, c*e, c*e^2, ... add up until they hold n."))


def _chain_rate(capacity: int, expansion: int, n: int, trials: int) -> tuple[float, float]:
    """The chain's expected rate 1 - prod(1 - p_i) over its sub-filters, and its sd."""
    survive, variance = 1.0, 0.0
    for entries, error, items in chain_loads(capacity, expansion, n):
        bits, k = _module_bits(entries, error), math.ceil(0.693147180559945 * -math.log(error) / _LN2_SQUARED)
        rate = theory.exact_false_positive_rate(num_bits=bits, num_hashes=k, n=items)
        survive *= 1 - rate
        variance += theory.measured_rate_std(num_bits=bits, num_hashes=k, n=items,
                                             num_queries=trials) ** 2
    return 1 - survive, math.sqrt(variance)


@checker
def measured_chain_fpp(answer, capacity: int = 1000, expansion: int = 2, n: int = 10_000,
                       trials: int = 100_000):
    """A rate measured on ``trials`` IDs never added to RedisBloomFilter(0.01, capacity) holding n.

    >>> measured_chain_fpp(0.0085, capacity=1000, expansion=2, n=10_000, trials=100_000)
    Correct: 0.0085 is within 4 standard deviations (4 x 0.00037) of the expected 0.008639.
    True
    """
    expected, sd = _chain_rate(capacity, expansion, n, trials)
    return judge_measured(answer, expected, sd, _("the chain's measured false-positive rate"),
                          trials=trials)


@checker
def shards_for_day(answer, *, n: int = 864_000_000, p: float = 0.0001, nodes: int = 3):
    """Shards of ``day_layout(n, p, nodes)``: the fewest, a multiple of the nodes, each under 2^32 bits.

    >>> shards_for_day(6, n=864_000_000, p=0.0001, nodes=3)
    Correct: the number of shards = 6.
    True
    """
    from ...services.redis_sharded import day_layout  # a checker needs no Redis client

    n = whole_number(n, "n", 1, MAX_NUM_BITS)
    nodes = whole_number(nodes, "nodes", 1, 16)
    correct = day_layout(n=n, p=p, nodes=nodes).shards
    whole = theory.num_bits_for(n=n, p=p)
    fewest = -(-whole // 2 ** 32)
    return judge(answer, correct, _("the number of shards"), rel=0, mistakes=[
        Mistake(fewest, _("{fewest} shards would each fit in 2^32 bits, but every node "
                          "holds as many shards as the others: round up to a multiple of "
                          "the {nodes} nodes").format(fewest=fewest, nodes=nodes), 0),
        Mistake(day_layout(n=n, p=p * 10, nodes=nodes).shards, _("that is enough at p = {value}; at p = {p} each ID needs "
                                                                 "{value2} bits, so a third of the day no longer fits one string").format(value=format(p * 10, "g"), p=format(p, "g"), value2=format(-math.log(p) / theory.LN2 ** 2, ".1f")), 0),
        Mistake(1, _("one filter for the day needs {whole} bits, more than one Redis "
                     "string holds (2^32 bits)").format(whole=format(whole, ",")), 0),
        Mistake(whole / 2 ** 32, _("shards are whole: round up, then to a multiple of the nodes"),
                0.05),
    ], hint=_("m = -n ln p / (ln 2)^2 bits in all; each shard at most 2^32 bits; a multiple of the nodes."))


@checker
def batched_keys_per_s(answer, round_trip_us: float = 80.0, server_us_per_key: float = 1.0,
                       batch: int = 1000):
    """Keys per second of one client sending ``batch`` keys a command and waiting for each reply.

    >>> batched_keys_per_s(925_926, round_trip_us=80.0, server_us_per_key=1.0, batch=1000)
    Correct: the keys per second = 9.259e+05.
    True
    """
    trip, per_key = round_trip_us * 1e-6, server_us_per_key * 1e-6
    correct = batch / (trip + batch * per_key)
    return judge(answer, correct, _("the keys per second"), rel=5e-3, mistakes=[
        Mistake(batch / trip, _("the server's work is paid too: each command takes a round trip "
                "plus the server's time for its keys")),
        Mistake(1 / (trip + per_key), _("that is one key per round trip, as one BF.ADD per key would be; "
                                        "a command carries {batch} keys").format(batch=format(batch, ","))),
        Mistake(1 / per_key, _("that leaves out the round trip each command waits for")),
        Mistake(correct * 1e-6, _("you computed keys per microsecond; a second is 10^6 of them")),
    ], hint=_("a command of B keys takes round trip + B x (server time per key); keys/s = B / that."))


@checker
def measured_shard_share(answer, n: int = 9000, first_slot: int = 0, last_slot: int = 5460):
    """The fraction of n random IDs whose CRC16 slot falls in first_slot..last_slot.

    A binomial share: expected (last - first + 1) / 16384, within 4 standard deviations.

    >>> measured_shard_share(0.3352, n=9000, first_slot=0, last_slot=5460)
    Correct: 0.3352 is within 4 standard deviations (4 x 0.005) of the expected 0.3333.
    True
    """
    n = whole_number(n, "n", 1, MAX_NUM_BITS)
    first = whole_number(first_slot, "first_slot", 0, _SLOTS - 1)
    last = whole_number(last_slot, "last_slot", first, _SLOTS - 1)
    share = (last - first + 1) / _SLOTS
    sd = math.sqrt(share * (1 - share) / n)
    return judge_measured(answer, share, sd, _("the measured share of the shard"), trials=n,
                          mistakes=[
        Mistake(share * n / _SLOTS, _("you divided by the number of slots; divide the IDs that "
                "land in the range by the number of IDs"), 4 * sd * n / _SLOTS),
        Mistake(1 - share, _("that is the share of the other shards; count the IDs whose slot "
                             "is in {first}..{last}").format(first=first, last=last), 4 * sd),
        Mistake(1.0, _("that counts every ID; count only those whose slot is in "
                       "{first}..{last}").format(first=first, last=last),
                0.02),
    ])


EXERCISES = [
    Exercise("17", 1, "compute",
             N_("How many bits does BF.RESERVE key {error} {capacity:_} give its first "
                "sub-filter?"),
             "redisbloom_bits", {"error": 0.001, "capacity": 1_000_000}),
    Exercise("17", 2, "predict",
             N_("BF.RESERVE key 0.01 {capacity:_} (expansion {expansion}) receives {n:,} distinct "
                "IDs. How many sub-filters does BF.INFO report?"),
             "redisbloom_filters", {"capacity": 1000, "expansion": 2, "n": 10_000}),
    Exercise("17", 3, "measure",
             N_("Add {n:,} distinct IDs to RedisBloomFilter(0.01, {capacity:_}) and measure the "
                "fraction of {trials:,} other IDs it claims to hold."),
             "measured_chain_fpp",
             {"capacity": 1000, "expansion": 2, "n": 10_000, "trials": 100_000}),
    Exercise("18", 1, "compute",
             N_("How many shards does day_layout(n={n:_}, p={p}, nodes={nodes}) make: the fewest, "
                "a multiple of the nodes, whose filters each fit one Redis string of $2^{{32}}$ "
                "bits?"),
             "shards_for_day", {"n": 864_000_000, "p": 0.0001, "nodes": 3}),
    Exercise("18", 2, "predict",
             N_("One client sends BF.MADD commands of {batch:,} keys, one at a time, each waiting "
                "for its reply. A round trip costs {round_trip_us:g} µs and the server spends "
                "{server_us_per_key:g} µs per key. How many keys per second does it reach?"),
             "batched_keys_per_s",
             {"round_trip_us": 80.0, "server_us_per_key": 1.0, "batch": 1000}),
    Exercise("18", 3, "measure",
             N_("Draw {n:,} IDs with uuid4_strings and measure the fraction whose Redis Cluster "
                "slot (key_slot of the ID's UTF-8 bytes) is in {first_slot}..{last_slot}, shard "
                "0's range."),
             "measured_shard_share", {"n": 9000, "first_slot": 0, "last_slot": 5460}),
]
