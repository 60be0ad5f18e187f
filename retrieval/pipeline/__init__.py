"""One request end to end: :mod:`.workbench` (``Workbench``, ``open_workbench``) loads models and a corpus and
chains the stages; :mod:`.trace` is what a request returns, and :mod:`.view` its typed view, read back from the
trace's dict. The index, the tier plan and the query expansions are the workbench's own."""

__all__ = ["trace", "view", "workbench"]
