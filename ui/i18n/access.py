"""Who may see what: the access gate's lines on both pages (:mod:`ui.access`)."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
    "acc_invalid": {"en": "Not authorised: this workbench's access policy (RETRIEVAL_ACCESS_POLICY) is not valid; the "
                          "server log says why.",
                    "pt": "Acesso negado: a política de acesso desta bancada (RETRIEVAL_ACCESS_POLICY) é inválida; o "
                          "log do servidor diz por quê."},
    "acc_single_user": {"en": "**Single-user mode**: no access policy is set (`RETRIEVAL_ACCESS_POLICY`), so anyone who "
                              "can open this URL sees every tenant.",
                        "pt": "**Modo de usuário único**: nenhuma política de acesso definida "
                              "(`RETRIEVAL_ACCESS_POLICY`), então quem abrir este endereço vê todos os inquilinos."},
    "acc_sign_in": {"en": "Not authorised: sign in to use this workbench.",
                    "pt": "Acesso negado: entre com sua conta para usar esta bancada."},
    "acc_log_in": {"en": "Log in", "pt": "Entrar"},
    "acc_no_tenant": {"en": "Not authorised: {user} may open no tenant of this workbench.",
                      "pt": "Acesso negado: {user} não pode abrir nenhum inquilino desta bancada."},
    "acc_signed_in": {"en": "Signed in as {user}", "pt": "Conectado como {user}"},
    "acc_log_out": {"en": "Log out", "pt": "Sair"},
}
