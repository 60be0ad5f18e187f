"""The main page, "Ask and inspect", as named panels: the page's state and steps (:mod:`.page`), the sidebar, the
answer with its tier, and one module per tab under it (the rank grid, the lists, movement, Compare, Judge,
"Where is my document?", the timings)."""
