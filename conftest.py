"""pytest set-up shared by doctests, unit tests and nbval: draw off-screen."""
import matplotlib

matplotlib.use("Agg")
