"""Who is asking, and what they may open: the identity of a request and the access gate of both pages.

The identity is read from one of two sources (README, "Deploying for several users"):

* ``RETRIEVAL_USER_HEADER`` set: the header a trusted reverse proxy puts on every request (``st.context.headers``);
  the app must then be reachable only through that proxy, which sets the header and strips a client's own;
* otherwise Streamlit's built-in login (``st.user``, OIDC configured in ``.streamlit/secrets.toml``): the
  ``email`` claim of a logged-in user (refused when the provider says it is not verified).

The decision is :mod:`retrieval.serving.access`'s; this module only reads the request and lays out the refusal.
Tests replace :func:`request_headers` (AppTest cannot send headers) or set ``AppTest.user``.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Mapping

import streamlit as st

from retrieval.core.errors import InvalidPolicy
from retrieval.serving import access
from retrieval.settings import Settings

from .escape import md
from .i18n import t

log = logging.getLogger(__name__)

SINGLE_USER_NOTICE = ("**Single-user mode**: no access policy is set (`RETRIEVAL_ACCESS_POLICY`), so anyone who "
                      "can open this URL sees every tenant.")


@dataclass(frozen=True)
class Identity:
    """The user of this request, as the configured source names them.

    Attributes:
        user: the name as given (``None``: nobody is signed in, or the source gave nothing usable).
        source: ``"header X-Forwarded-User"``, ``"login"`` or ``"none"``.
        can_log_in: Streamlit's login is configured and this user is not logged in (offer the button).
    """

    user: str | None
    source: str
    can_log_in: bool = False


@dataclass(frozen=True)
class Access:
    """What this run may show: ``allowed`` tenants (``None``: single-user mode, every tenant) and the user."""

    allowed: frozenset[str] | None
    user: str | None = None

    @property
    def restricted(self) -> bool:
        return self.allowed is not None


def request_headers() -> Mapping[str, str]:
    """The request's headers (case-insensitive): ``st.context.headers``."""
    return st.context.headers


def request_user(settings: Settings) -> Identity:
    """The identity of this request, from ``settings.user_header`` when set, else from ``st.user``."""
    if settings.user_header:
        headers = request_headers()
        name = settings.user_header
        pairs = [(k, v) for k in headers for v in headers.get_all(k)] if hasattr(headers, "get_all") else \
            list(headers.items())
        # Exactly one copy in any spelling: two mean a client's own header reached the app beside the proxy's.
        return Identity(access.user_from_headers(pairs, name), f"header {name}")
    info = st.user
    if "is_logged_in" not in info:  # Streamlit's login is not configured
        return Identity(None, "none")
    if info.get("is_logged_in") is not True:
        return Identity(None, "login", can_log_in=True)
    email = info.get("email")
    if info.get("email_verified") is False or access.normalize_user(email) is None:
        return Identity(None, "login")
    return Identity(str(email), "login")


@st.cache_resource(show_spinner=False, max_entries=4)
def _policy(path: str, mtime_ns: int, size: int) -> access.AccessPolicy:
    """The policy of ``path``, read again when its modification time or size changes."""
    return access.load_policy(path)


def load_policy(settings: Settings) -> access.AccessPolicy | None:
    """The access policy ``settings`` names (``None``: single-user mode).

    Raises:
        InvalidPolicy: the file cannot be read or is not valid.
    """
    path = access.policy_path(settings)
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return access.load_policy(path)  # raises the one-line refusal
    return _policy(str(path), info.st_mtime_ns, info.st_size)


def gate(settings: Settings, lang: str = "en") -> Access:
    """Decide what this run may show, or end it with a one-line "not authorised" page.

    Without a policy the sidebar says once, at its top, that the app is in single-user mode. With one, a
    request with no identity, or whose user may open no tenant, sees one line (and a login button when
    Streamlit's login is configured) and the script stops; a policy that cannot be read opens nothing (its
    reason goes to the server log, not to the page).
    """
    try:
        policy = load_policy(settings)
    except InvalidPolicy as exc:
        log.error("%s", exc)
        st.error(t("acc_invalid", lang))
        st.stop()
    if policy is None:
        st.sidebar.info(SINGLE_USER_NOTICE if lang == "en" else t("acc_single_user", lang))
        return Access(None)
    identity = request_user(settings)
    allowed = policy.allowed_tenants(identity.user)
    if not allowed:
        if identity.user is None:
            st.error(t("acc_sign_in", lang))
            if identity.can_log_in:
                st.button(t("acc_log_in", lang), on_click=st.login, key="access_login")
        else:
            st.error(t("acc_no_tenant", lang, user=md(identity.user)))
        st.stop()
    st.sidebar.caption(t("acc_signed_in", lang, user=md(identity.user)))
    if identity.source == "login":
        st.sidebar.button(t("acc_log_out", lang), on_click=st.logout, key="access_logout")
    return Access(allowed, identity.user)

