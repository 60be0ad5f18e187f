"""Work over question sets: evaluation (configurations, runner, metrics, comparison, diagnosis, sweep), training
of the learned judge, tuning and adoption, the learned ranker from labels, judgments and raters, reports."""

__all__ = ["evaluation", "judgments", "learn", "raters", "release", "report", "report_html", "runs", "summaries",
           "training", "tune", "tuned"]
