"""pytest set-up shared by doctests, unit tests and nbval."""
import matplotlib

matplotlib.use("Agg")  # draw off-screen

# The lessons' .py twins are notebooks in plain text: nbval runs the .ipynb, so
# --doctest-modules must not import (and so execute) the twins.
collect_ignore_glob = ["notebooks/*.py", "notebooks/*/*.py"]
