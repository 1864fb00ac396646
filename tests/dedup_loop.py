"""The loop every bulk dedup (``add_many_new``) is compared with."""


def sequential_new(f, keys) -> list[bool]:
    """What ``add_many_new`` must answer: the loop it stands for, ``k not in f`` then ``f.add(k)``."""
    answers = []
    for key in keys:
        answers.append(key not in f)
        f.add(key)
    return answers
