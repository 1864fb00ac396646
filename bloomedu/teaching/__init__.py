"""Teaching aids: what the lessons draw, measure and ask with.

- :mod:`~bloomedu.teaching.plots`: the lessons' figures, one helper a figure.
- :mod:`~bloomedu.teaching.experiments`: measured false-positive rates and sweeps over m, k, n.
- :mod:`~bloomedu.teaching.classroom`: live demos (a collision, a false positive and the keys
  behind its bits).
- :mod:`~bloomedu.teaching.explorer`: sliders for m, k and n (ipywidgets).
- :mod:`~bloomedu.teaching.toy`: one key at a time on a drawn bit array (ipywidgets).
- :mod:`~bloomedu.teaching.clickday`: the genuine clicks a filter drops over a day.
- :mod:`~bloomedu.teaching.latency`: the blacklist database behind a simulated network.
- :mod:`~bloomedu.teaching.memory`: bytes a Python object really costs (tracemalloc).
- :mod:`~bloomedu.teaching.vectors`: outputs of real systems the lessons check against.
- :mod:`~bloomedu.teaching.lessons`: copies of the lessons for a class (``bloomedu lessons``).
- :mod:`~bloomedu.teaching.exercises`: each lesson's exercises, with feedback.
- :mod:`~bloomedu.teaching.predict`: predictions the student commits to before a cell reveals the answer.
- :mod:`~bloomedu.teaching.space_curves`: bits a key against the rate for every filter (lesson 20).

Nothing is imported here, so ``import bloomedu`` never loads matplotlib.
"""
