"""pytest set-up shared by doctests, unit tests and nbval."""
import matplotlib

matplotlib.use("Agg")  # draw off-screen

# The lessons' .py twins are notebooks in plain text: nbval runs the .ipynb, so
# --doctest-modules must not import (and so execute) the twins.
collect_ignore_glob = ["notebooks/*.py", "notebooks/*/*.py"]


def pytest_collection_modifyitems(config, items):
    """Doctests of the Redis services start real servers: without one (and outside `make test`,
    which sets BLOOMEDU_REQUIRE_REDIS=1 and so fails instead) they skip, saying what is missing."""
    redis_doctests = [item for item in items if type(item).__name__ == "DoctestItem"
                      and item.path.name.startswith("redis_") and item.path.parent.name == "services"]
    if not redis_doctests:
        return
    import pytest
    from bloomedu.services.redis_parts import required, unavailable_reason

    reason = unavailable_reason()
    if reason and not required():
        for item in redis_doctests:
            item.add_marker(pytest.mark.skip(reason=reason))
