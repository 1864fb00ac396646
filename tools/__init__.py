"""The project's own tools: test vectors from real systems, and the instructor's kit built from
the lessons (slide marks, slide decks and handouts, the nbgrader course)."""
