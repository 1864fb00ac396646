"""Seeded, realistic URL strings: a blacklist of malicious links and safe traffic.

Article 2 ("Bloom Filter: come memorizzare 1 Milione di stringhe in meno di
2MB?") stores one million malicious URLs in a Bloom filter and checks visited
links against it.  This module makes such URLs, fast enough for a million:

- :func:`malicious_urls` looks like phishing and malware links
  (``http://paypal-verify.xyz/wp-admin/login.php?id=123...``);
- :func:`safe_urls` looks like news, docs and shop pages
  (``https://www.corriere.it/sport/meteo-domani-123....html``);
- :func:`traffic_mix` draws a stream of visits, mostly safe.

Guarantees, by construction:

- *unique*: URL number i carries the number ``(i * 2654435761 + offset) mod 2**32``,
  a one-to-one map of i, as its last run of digits, so the n URLs of one call differ;
- *disjoint*: malicious hosts end in :data:`MALICIOUS_TLDS`, safe hosts in
  :data:`SAFE_TLDS`, and the two sets share no top-level domain, so no safe URL
  (of any seed) is ever a malicious one.  The false-positive rate of a filter of
  malicious URLs can be measured on safe URLs: none of them was inserted.

Taught in ``notebooks/09_one_million_urls.ipynb``; tested in
``tests/test_urls.py``.
"""

from __future__ import annotations

from itertools import product

import numpy as np

from ..core.checks import is_int, is_number

__all__ = ["MALICIOUS_TLDS", "SAFE_TLDS", "malicious_urls", "safe_urls", "traffic_mix"]

MALICIOUS_TLDS = ("xyz", "top", "club", "online", "site", "icu", "buzz", "live", "ru", "tk",
                  "work", "click", "link", "shop", "info")
SAFE_TLDS = ("com", "org", "it", "net", "edu", "gov", "io", "de", "fr", "uk", "eu", "ch")

_BRANDS = ("paypal", "apple", "amazon", "netflix", "microsoft", "office365", "poste", "intesa",
           "unicredit", "dhl", "fedex", "wallet", "steam", "instagram", "facebook", "whatsapp")
_BAIT = ("login", "secure", "verify", "account", "update", "support", "signin", "auth",
         "billing", "confirm", "recovery", "alert")
_SITES = ("corriere", "repubblica", "ansa", "ilpost", "wikipedia", "github", "python", "mozilla",
          "bbc", "reuters", "nytimes", "theguardian", "unibo", "polimi", "unipi", "spotify",
          "booking", "trenitalia", "arxiv", "openstreetmap", "stackexchange", "comune-milano")
_SECTIONS = ("news", "sport", "tech", "cultura", "economia", "wiki", "blog", "docs", "articles",
             "products", "video", "eventi", "2024/05", "en/latest")
_SLUG_WORDS = ("bloom", "filter", "come-funziona", "guida", "ricette", "meteo-domani",
               "election-results", "python-tips", "orari-treni", "mostra", "concerto",
               "recensione", "hash-tables", "open-data", "mercato", "champions-league")

_MULTIPLIER = 2654435761  # odd, so i -> i * _MULTIPLIER mod 2**32 is one-to-one
_MAX_URLS = 2 ** 32


def _malicious_parts() -> tuple[list[str], list[tuple[str, str]]]:
    hosts = [f"{scheme}://{host}.{tld}" for scheme, tld in product(("http", "https"), MALICIOUS_TLDS)
             for host in [*(f"{b}-{w}" for b, w in product(_BRANDS, _BAIT)),
                          *(f"{w}.{b}-{w2}" for b, w, w2 in product(_BRANDS, _BAIT[:4], _BAIT[4:8]))]]
    paths = [(f"/{top}/{page}?id=", "") for top, page in
             product(("wp-admin", "wp-content/uploads", "includes", "secure", "auth", "session"),
                     ("login.php", "index.php", "verify.html", "update.php"))]
    paths += [("/download/invoice_", ".zip"), ("/bin/update-", ".exe"), ("/doc/scan", ".pdf.js"),
              ("/s/", "/"), ("/", "/signin/"), ("/r/?u=", "")]
    return hosts, paths


def _safe_parts() -> tuple[list[str], list[tuple[str, str]]]:
    hosts = [f"https://{sub}{site}.{tld}" for sub, site, tld in
             product(("www.", "", "blog.", "docs.", "en."), _SITES, SAFE_TLDS)]
    paths = [(f"/{section}/{slug}-", suffix) for section, slug, suffix in
             product(_SECTIONS, _SLUG_WORDS, (".html", "/", ""))]
    paths += [(f"/{section}/?p=", "") for section in _SECTIONS]
    paths += [("/search?q=bloom+filter&page=", ""), ("/watch?v=", ""), ("/item/", "/reviews")]
    return hosts, paths


_MALICIOUS = _malicious_parts()
_SAFE = _safe_parts()


def _check_n(n) -> int:
    if not is_int(n) or not 0 <= n <= _MAX_URLS:
        raise ValueError(f"n must be an int in 0..2**32, got {n!r}")
    return int(n)


def _check_seed(seed) -> int:
    if not is_int(seed) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return int(seed)


def _generate(n, seed, parts, stream: int) -> list[str]:
    n, seed = _check_n(n), _check_seed(seed)
    hosts, paths = parts
    rng = np.random.default_rng([seed, stream])
    offset = np.uint64(rng.integers(0, _MAX_URLS))
    with np.errstate(over="ignore"):
        numbers = (np.arange(n, dtype=np.uint64) * np.uint64(_MULTIPLIER) + offset) \
            % np.uint64(_MAX_URLS)
    shape = rng.integers(0, len(hosts) * len(paths), size=n)  # one draw per URL: n-prefix stable
    host_of, path_of = (shape // len(paths)).tolist(), (shape % len(paths)).tolist()
    # prefix + digits + suffix: the prefixes end in a non-digit and no suffix holds a
    # digit, so the number is the URL's last run of digits and tells URLs apart.
    return [f"{hosts[h]}{paths[p][0]}{number}{paths[p][1]}"
            for h, p, number in zip(host_of, path_of, numbers.tolist())]


def malicious_urls(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct phishing/malware-looking URLs; the same seed gives the same URLs.

    The first k URLs do not depend on n, so a short list is a prefix of a long one.

    >>> malicious_urls(2, seed=1)
    ['http://account.facebook-update.tk/includes/verify.html?id=2228177951', 'http://login.steam-auth.work/session/index.php?id=587646416']
    >>> malicious_urls(3, seed=1)[:2] == malicious_urls(2, seed=1)
    True
    """
    return _generate(n, seed, _MALICIOUS, stream=1)


def safe_urls(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct ordinary-looking URLs, never equal to any :func:`malicious_urls` URL.

    >>> safe_urls(2, seed=1)
    ['https://blog.github.net/en/latest/bloom-2762783682/', 'https://en.spotify.it/video/bloom-1122252147']
    """
    return _generate(n, seed, _SAFE, stream=2)


def traffic_mix(num_requests: int, malicious: list[str], safe: list[str],
                malicious_share: float = 0.01, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """A stream of visited URLs: each is malicious with probability ``malicious_share``.

    Returns (urls, is_malicious).  Each visit draws uniformly, with repeats, from
    ``malicious`` or from ``safe``: popular pages are visited more than once.

    >>> urls, bad = traffic_mix(5, ["http://evil.xyz/1"], ["https://ok.org/2"], 0.4, seed=3)
    >>> urls, bad.tolist()
    (['http://evil.xyz/1', 'http://evil.xyz/1', 'https://ok.org/2', 'https://ok.org/2', 'http://evil.xyz/1'], [True, True, False, False, True])
    """
    num_requests, seed = _check_n(num_requests), _check_seed(seed)
    if not is_number(malicious_share) \
            or not 0.0 <= malicious_share <= 1.0:
        raise ValueError(f"malicious_share must be a number in [0, 1], got {malicious_share!r}")
    rng = np.random.default_rng(seed)
    is_malicious = rng.random(num_requests) < malicious_share
    for name, pool, needed in (("malicious", malicious, is_malicious.any()),
                               ("safe", safe, not is_malicious.all())):
        if needed and not len(pool):
            raise ValueError(f"{name} must hold at least one URL for this mix")
    pick_bad = rng.integers(0, max(1, len(malicious)), size=num_requests).tolist()
    pick_good = rng.integers(0, max(1, len(safe)), size=num_requests).tolist()
    urls = [malicious[b] if flag else safe[g]
            for flag, b, g in zip(is_malicious.tolist(), pick_bad, pick_good)]
    return urls, is_malicious
