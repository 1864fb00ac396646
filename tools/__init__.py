"""Project tools that are not part of the library: ``python -m tools.build_site`` writes the lessons as a website."""
