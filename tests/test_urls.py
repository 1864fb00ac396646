"""The URL generator behind lesson 09: seeded, unique, disjoint, URL-shaped."""

import re
from urllib.parse import urlsplit

import numpy as np
import pytest

from bloomedu.workloads.urls import MALICIOUS_TLDS, SAFE_TLDS, malicious_urls, safe_urls, traffic_mix

GENERATORS = {"malicious": (malicious_urls, MALICIOUS_TLDS), "safe": (safe_urls, SAFE_TLDS)}


@pytest.fixture(scope="module", params=sorted(GENERATORS))
def kind(request):
    return request.param


@pytest.fixture(scope="module")
def many(kind):
    generate, _ = GENERATORS[kind]
    return generate(100_000, seed=11)


def test_same_seed_same_urls_other_seed_other_urls(kind):
    generate, _ = GENERATORS[kind]
    assert generate(500, seed=4) == generate(500, seed=4)
    other = generate(500, seed=5)
    assert len(set(generate(500, seed=4)) & set(other)) < 5


def test_a_short_list_is_a_prefix_of_a_long_one(kind):
    generate, _ = GENERATORS[kind]
    assert generate(1000, seed=2)[:37] == generate(37, seed=2)


def test_urls_of_one_call_are_distinct(many):
    assert len(set(many)) == len(many) == 100_000


def test_the_last_run_of_digits_tells_urls_apart(many):
    numbers = [re.findall(r"\d+", url)[-1] for url in many]
    assert len(set(numbers)) == len(many)
    assert all(int(number) < 2 ** 32 for number in numbers)


def test_hosts_end_in_their_own_top_level_domains(kind, many):
    _, tlds = GENERATORS[kind]
    assert not set(MALICIOUS_TLDS) & set(SAFE_TLDS)
    assert {urlsplit(url).hostname.rsplit(".", 1)[1] for url in many} == set(tlds)


@pytest.mark.parametrize("malicious_seed, safe_seed", [(0, 0), (1, 2), (7, 7)])
def test_malicious_and_safe_never_meet(malicious_seed, safe_seed):
    bad = set(malicious_urls(50_000, seed=malicious_seed))
    good = safe_urls(50_000, seed=safe_seed)
    assert not bad.intersection(good)


def test_urls_look_like_urls(kind, many):
    shape = re.compile(r"^https?://[a-z0-9-]+(\.[a-z0-9-]+)+/[\x21-\x7e]*$")
    assert all(shape.match(url) for url in many)
    parts = [urlsplit(url) for url in many[:5000]]
    assert {p.scheme for p in parts} <= {"http", "https"}
    assert len({p.hostname for p in parts}) > 200  # many different sites
    assert len({p.path.split("/")[1] for p in parts}) > 5  # several kinds of path
    lengths = np.array([len(url) for url in many])
    assert 20 <= lengths.min() and lengths.max() <= 120
    assert 40 <= lengths.mean() <= 80


def test_malicious_urls_use_plain_http_and_tls_safe_ones_tls():
    schemes = [urlsplit(url).scheme for url in malicious_urls(10_000, seed=3)]
    assert 0 < schemes.count("http") < len(schemes)
    assert {urlsplit(url).scheme for url in safe_urls(10_000, seed=3)} == {"https"}


def test_zero_urls():
    assert malicious_urls(0) == [] and safe_urls(0, seed=9) == []


@pytest.mark.parametrize("n", [-1, 1.5, True, "3", 2 ** 32 + 1])
def test_bad_count_is_a_value_error_naming_n(kind, n):
    generate, _ = GENERATORS[kind]
    with pytest.raises(ValueError, match="n must be an int in 0..2"):
        generate(n)


@pytest.mark.parametrize("seed", [-1, 0.5, None, False])
def test_bad_seed_is_a_value_error_naming_seed(seed):
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        safe_urls(3, seed=seed)


# --- traffic_mix ------------------------------------------------------------------
def test_traffic_mix_labels_each_visit_and_draws_from_the_right_pool():
    bad, good = malicious_urls(300, seed=1), safe_urls(3000, seed=1)
    urls, is_malicious = traffic_mix(20_000, bad, good, malicious_share=0.2, seed=5)
    assert len(urls) == is_malicious.size == 20_000
    bad_set = set(bad)
    assert [url in bad_set for url in urls] == is_malicious.tolist()
    assert set(urls) - bad_set <= set(good)
    assert len(set(urls) & bad_set) > 250  # draws spread over the whole pool


def test_traffic_mix_malicious_share_is_binomial():
    n, share = 200_000, 0.01
    _, is_malicious = traffic_mix(n, ["http://x.xyz/1"], ["https://y.org/2"], share, seed=8)
    sd = (n * share * (1 - share)) ** 0.5
    assert abs(int(is_malicious.sum()) - n * share) < 5 * sd


def test_traffic_mix_is_seeded():
    bad, good = malicious_urls(50, seed=1), safe_urls(50, seed=1)
    first = traffic_mix(1000, bad, good, 0.3, seed=2)
    assert first[0] == traffic_mix(1000, bad, good, 0.3, seed=2)[0]
    assert first[0] != traffic_mix(1000, bad, good, 0.3, seed=3)[0]


def test_traffic_mix_extremes_need_only_one_pool():
    urls, flags = traffic_mix(10, [], ["https://y.org/2"], 0.0, seed=1)
    assert urls == ["https://y.org/2"] * 10 and not flags.any()
    urls, flags = traffic_mix(10, ["http://x.xyz/1"], [], 1.0, seed=1)
    assert urls == ["http://x.xyz/1"] * 10 and flags.all()


@pytest.mark.parametrize("share", [-0.1, 1.5, float("nan"), "0.1", True])
def test_traffic_mix_bad_share(share):
    with pytest.raises(ValueError, match=r"malicious_share must be a number in \[0, 1\]"):
        traffic_mix(10, ["a"], ["b"], share)


def test_traffic_mix_empty_pool_that_is_needed():
    with pytest.raises(ValueError, match="malicious must hold at least one URL"):
        traffic_mix(1000, [], ["https://y.org/2"], 0.5, seed=1)
    with pytest.raises(ValueError, match="safe must hold at least one URL"):
        traffic_mix(1000, ["http://x.xyz/1"], [], 0.5, seed=1)
