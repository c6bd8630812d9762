"""What the pages show: numbers handed to the prose and tables (:mod:`.pages`, whose
:func:`~.pages.glue` and :func:`~.pages.table` are also here, as a page calls them), the figure
style (:mod:`.plots`), the drawings of the mechanisms (:mod:`.diagrams`), every figure drawn again
for a phone (:mod:`.phone_figures`), widgets and their static twins (:mod:`.widgets`), and the
explorers of each family of pages (the ``*_explorers`` modules)."""

from .pages import WIDTH, at_least, at_most, glue, glue_all, table

__all__ = ["WIDTH", "at_least", "at_most", "glue", "glue_all", "table"]
