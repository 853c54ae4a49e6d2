"""Redaction of secrets, tokens and keys from text before it is stored anywhere."""

from __future__ import annotations

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
)
# key = value assignments whose key names a secret; the value is replaced, the key kept for context
_ASSIGNMENT = re.compile(
    r"(?i)\b([A-Za-z0-9_.-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key)"
    r"[A-Za-z0-9_.-]*)(\s*[:=]\s*)(['\"]?)([^'\"\s,;]{4,})\3"
)


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
)
_FOLDED = frozenset({8})
_ASSIGNMENT_NEEDS = ("passw", "secret", "token", "key")  # case-insensitive, and a ':' or '='


# Any literal any pattern needs, in one search: an ASCII text with none of them (most text) holds
# no secret and is returned as it is without running a pattern. The case-insensitive literals are
# searched case-insensitively, which on ASCII text is exactly lower-casing it first.
_ANY_NEED = re.compile(
    "|".join(re.escape(s) for n, needs in enumerate(_NEEDS) if n not in _FOLDED for s in needs)
    + "|(?i:"
    + "|".join(re.escape(s) for n in sorted(_FOLDED) for s in _NEEDS[n])
    + ")"
)
_ANY_ASSIGNMENT_NEED = re.compile("(?i:" + "|".join(map(re.escape, _ASSIGNMENT_NEEDS)) + ")")


def _assigned(m: re.Match[str]) -> str:
    return f"{m.group(1)}{m.group(2)}{REDACTED}"


def redact(text: str) -> str:
    """Return `text` with every recognised secret replaced by [REDACTED]."""
    if not text.isascii():
        for pattern in _PATTERNS:
            text = pattern.sub(REDACTED, text)
        return _ASSIGNMENT.sub(_assigned, text)
    if _ANY_NEED.search(text) is None and (
        ("=" not in text and ":" not in text) or _ANY_ASSIGNMENT_NEED.search(text) is None
    ):
        return text  # no pattern can match: none of their literals is there
    # a pattern runs only where the text as it stands holds its literal part (most text holds no
    # secret): the same result as running every pattern
    lower = text.lower()
    for n, (pattern, needs) in enumerate(zip(_PATTERNS, _NEEDS, strict=True)):
        where = lower if n in _FOLDED else text
        if any(s in where for s in needs):
            text = pattern.sub(REDACTED, text)
            lower = text.lower()
    if ("=" in text or ":" in text) and any(s in lower for s in _ASSIGNMENT_NEEDS):
        text = _ASSIGNMENT.sub(_assigned, text)
    return text
