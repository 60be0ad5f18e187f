"""The Evaluation page as named panels: the page's state and first steps (:mod:`.page`), the form and the run,
manual rankings, training, tuning, then the run's decision, figures, diagnosis, per-question table, sweep,
what-if and exports."""
