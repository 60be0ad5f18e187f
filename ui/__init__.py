"""Streamlit-side helpers: cached factories (:mod:`ui.resources`) and trace layout (:mod:`ui.layout`)."""
