"""The Streamlit side: both pages' panels (:mod:`ui.ask`, :mod:`ui.evaluation`), the cached factories
(:mod:`ui.resources`), the access gate, the interface texts (:mod:`ui.i18n`) and what every panel draws with."""
