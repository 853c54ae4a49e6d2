"""Redaction of secrets, tokens and keys from text before it is stored anywhere."""

from __future__ import annotations

import itertools
import re

REDACTED = "[REDACTED]"

_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),  # GitHub tokens
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}\b"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),  # Slack
    re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"),  # common API secret keys
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),  # Google API key
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"),  # JWT
    re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{16,}"),
    re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),  # credentials in URLs
    re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}\b"),  # Stripe secret and restricted keys
    re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"),  # GitLab personal access tokens
    re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"),  # npm access tokens
    re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),  # PyPI API tokens
    re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),  # Hugging Face tokens
    re.compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),  # SendGrid API keys
    re.compile(r"\bya29\.[A-Za-z0-9_-]{20,}"),  # Google OAuth access tokens
    re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),  # Shopify access tokens
    re.compile(r"\bdo[opr]_v1_[a-f0-9]{64}\b"),  # DigitalOcean tokens
    re.compile(r"\bhv[sb]\.[A-Za-z0-9_-]{24,}"),  # HashiCorp Vault tokens
    re.compile(r"hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),  # Slack incoming webhooks
    re.compile(r"\b\d{8,10}:AA[A-Za-z0-9_-]{30,}"),  # Telegram bot tokens
)
# key = value assignments whose key names a secret; the value is replaced, the key kept for context
_ASSIGNMENT = re.compile(
    r"(?i)\b([A-Za-z0-9_.-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|account[_-]?key|credentials?)"
    r"[A-Za-z0-9_.-]*)(\s*[:=]\s*)(?:(['\"])[^'\"\n]{4,}?\3|[^'\"\s,;]{4,})"
)  # a quoted value is redacted whole, spaces included


# Substrings without which a pattern cannot match (the same index as _PATTERNS, then _ASSIGNMENT),
# checked in the text as it stands before that pattern runs; the case-insensitive ones on the
# lower-cased text, which is exact only for ASCII text (re's case folding pairs `s` with `ſ`, `k`
# with the Kelvin sign, ...), so a text with any other character runs every pattern.
_NEEDS: tuple[tuple[str, ...], ...] = (
    ("-----BEGIN ",),
    ("AKIA", "ASIA"),
    ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ("github_pat_",),
    ("xox",),
    ("sk-",),
    ("AIza",),
    ("eyJ",),
    ("bearer", "basic"),  # case-insensitive
    ("://",),
    ("k_live_", "k_test_"),
    ("glpat-",),
    ("npm_",),
    ("pypi-",),
    ("hf_",),
    ("SG.",),
    ("ya29.",),
    ("shpat_", "shpca_", "shppa_", "shpss_"),
    ("_v1_",),
    ("hvs.", "hvb."),
    ("hooks.slack.com",),
    (":AA",),
)
_FOLDED = frozenset({8})
_ASSIGNMENT_NEEDS = ("passw", "secret", "token", "key", "credential")  # case-insensitive, and a ':' or '='


# Every literal any pattern needs: an ASCII text with none of them (most text) holds no secret and
# is returned as it is without running a pattern. `in` finds a literal several times faster than
# one regex alternation of all of them; the case-insensitive ones are looked for in the
# lower-cased text, which on ASCII text is exactly a case-insensitive search.
_ANY_NEED = tuple(s for n, needs in enumerate(_NEEDS) if n not in _FOLDED for s in needs)
_ANY_FOLDED_NEED = tuple(s for n in sorted(_FOLDED) for s in _NEEDS[n])

# Texts just found to hold nothing to redact, by identity: most stored texts are redacted twice
# (before they are cut to their bound, and by the model that stores them) and the second time is the
# same object. A string is immutable and held here, so the same object gives the same answer.
_RECENT = 8
_clean: list[str] = [""] * _RECENT
_turn = itertools.count()


def _assigned(m: re.Match[str]) -> str:
    return f"{m.group(1)}{m.group(2)}{REDACTED}"


def _holds_a_need(text: str, lower: str) -> bool:
    """Whether an ASCII text holds a literal some pattern needs (plain loops: a third faster than
    `any` over a generator on the short texts that are most of them)."""
    for s in _ANY_NEED:
        if s in text:
            return True
    for s in _ANY_FOLDED_NEED:
        if s in lower:
            return True
    if "=" in text or ":" in text:
        for s in _ASSIGNMENT_NEEDS:
            if s in lower:
                return True
    return False


def redact(text: str) -> str:
    """Return `text` with every recognised secret replaced by [REDACTED]."""
    if not text.isascii():
        for pattern in _PATTERNS:
            text = pattern.sub(REDACTED, text)
        return _ASSIGNMENT.sub(_assigned, text)
    for seen in _clean:
        if seen is text:
            return text
    lower = text.lower()
    if not _holds_a_need(text, lower):
        _clean[next(_turn) % _RECENT] = text
        return text  # no pattern can match: none of their literals is there
    # a pattern runs only where the text as it stands holds its literal part (most text holds no
    # secret): the same result as running every pattern
    for n, (pattern, needs) in enumerate(zip(_PATTERNS, _NEEDS, strict=True)):
        where = lower if n in _FOLDED else text
        if any(s in where for s in needs):
            text = pattern.sub(REDACTED, text)
            lower = text.lower()
    if ("=" in text or ":" in text) and any(s in lower for s in _ASSIGNMENT_NEEDS):
        text = _ASSIGNMENT.sub(_assigned, text)
    return text
