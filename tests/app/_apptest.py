"""Moved to tests/helpers/apptest.py: this name stays for the files that still import it by its old name."""

from helpers.apptest import APP, assert_ok, open_tab, page, plain, rendered, walk  # noqa: F401
