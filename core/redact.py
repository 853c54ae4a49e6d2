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
# key = value assignments whose key names a secret (`key: value` and `key is: value` too); the value is
# replaced, the key kept for context. In code, `key: Annotation = default` keeps its annotation and
# only the default is judged.
_ASSIGNMENT = re.compile(
    r"(?i)\b([A-Za-z0-9_.-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|account[_-]?key|credentials?)"
    r"[A-Za-z0-9_.-]*)((?:\s+(?:is|was|are|were))?\s*[:=]\s*)"
    r"(?:([A-Za-z_][\w.]*(?:\[[\w., |\[\]]*\])?)(\s*=\s*))?"
    r"((?:(?:[rbuf]{1,2})?(?:\"[^\"\n]*\"|'[^'\n]*')\s*\+\s*)+(?:[rbuf]{1,2})?(?:\"[^\"\n]*\"|'[^'\n]*')"
    r"|(?:[rbuf]{1,2})?(['\"])[^'\"\n]{4,}?\6"
    r"|\((?:\s*(?:[rbuf]{1,2})?(?:\"[^\"\n]*\"|'[^'\n]*'))+\s*\)"
    r"|[A-Za-z_][\w.]*\[[\w., |\[\]]*\](?![^'\"\s,;)\]}:])"
    r"|[A-Za-z_][\w.]*(?:\((?:[^()'\"\n]|'[^'\n]*'|\"[^\"\n]*\"|\([^()\n]*\))*\)"
    r"|\[(?:[^\[\]'\"\n]|'[^'\n]*'|\"[^\"\n]*\")*\])(?=[\s,;)\]}#]|$)"
    r"|[^'\"\s,;]{4,})"
)  # a string is redacted whole: quoted (spaces included), with a prefix (b"", f""), strings joined by `+`
# or in parentheses; a call or subscript (to one line) as _call says. Not a triple-quoted string: after
# `class TokenizerBase:` or `TOKEN_HELP =` it is documentation (a private key block has its pattern)
_STRING = re.compile(r"""(?i)\(?\s*[rbuf]{0,2}['"]""")
# a string literal added to a value just redacted (`"abc" + "def"`, `f("x") + "def"`) is part of it
_CONCATENATED = re.compile(r"""(\[REDACTED\]\)*\s*\+\s*)(?:[rbuf]{1,2})?(?:"[^"\n]*"|'[^'\n]*')""", re.I)


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


# Unquoted values that are code, not a secret: what a signature, a call or a config line says when
# the secret itself is elsewhere. A quoted value is always redacted.
_LITERALS = frozenset({"none", "null", "nil", "true", "false", "undefined"})
_TYPE_NAMES = frozenset(
    {"str", "bytes", "bytearray", "int", "float", "bool", "list", "dict", "tuple", "frozenset", "type", "any",
     "object", "secretstr", "secretbytes"}
)  # fmt: skip
_NUMBER_TYPES = frozenset({"int", "float"})
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_GENERIC = re.compile(
    r"(?:typing\.|t\.)?(?:Optional|Union|List|Dict|Tuple|Set|FrozenSet|Sequence|Mapping|MutableMapping"
    r"|Iterable|Iterator|Callable|Annotated|Literal|Type|ClassVar|Final|list|dict|tuple|set|frozenset|type)"
    r"\[[\w., |\[\]]*\]"
)
_REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_CLASS = re.compile(r"(?:[A-Za-z_]+\.)*_*[A-Z][A-Za-z]+(?:\[[\w., |\[\]]*\])?")
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_ANNOTATION_ENDS = re.compile(r"\s*[,)=|]")  # what follows an annotation in a parameter list
_PARAMETERS_REACH = 4000  # characters looked back for the `(` of a parameter list


def _trimmed(value: str) -> str:
    """The value without the punctuation of the code around it: closing brackets it did not open
    (`None)` in `f(password=None)`) and a trailing `:`."""
    while value and (
        value[-1] == ":"
        or (value[-1] in _CLOSERS and value.count(_CLOSERS[value[-1]]) < value.count(value[-1]))
    ):
        value = value[:-1]
    return value


def _last_name(dotted: str) -> str:
    return dotted.rsplit(".", 1)[-1].lstrip("_").replace("-", "_")


def _same_name(value: str, key: str) -> bool:
    """Whether the value names the key's own variable: `password=password`, `token=self._token`, an
    attribute in any case (`api_key=settings.API_KEY`); a bare word only as spelled, since
    `PASSWORD=Password` is a (weak) password."""
    name, own = _last_name(value), _last_name(key)
    return name == own or ("." in value and name.lower() == own.lower())


def _in_parameters(text: str, at: int) -> bool:
    """Whether `at` is inside the parentheses of a call or a definition (`name(` ... ): prose in
    parentheses, `(password: Sunshine)`, is not."""
    depth = 0
    for i in range(at - 1, max(-1, at - _PARAMETERS_REACH), -1):
        char = text[i]
        if char in ")]}":
            depth += 1
        elif char in "([{":
            if depth == 0:
                return char == "(" and i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")
            depth -= 1
    return False


def _is_code(m: re.Match[str], key: str, value: str, annotated: bool) -> bool:
    """Whether an unquoted value is code naming no secret: a literal (`None`), the same-named variable
    or attribute (`password=password`, `token=self._token`), or, after a `:`, a type annotation
    (`password: Optional[str]`; a class, `tokens: ParseResults`, only in a parameter list). A call is
    not: `password=getpass()` reads like the value `getpass()`."""
    trimmed = _trimmed(value)
    if trimmed.lower() in _LITERALS:
        return True
    if _REFERENCE.fullmatch(trimmed) and _same_name(trimmed, key):
        return True
    if not annotated:
        return False
    if trimmed.lower() in _TYPE_NAMES or _GENERIC.fullmatch(trimmed):
        return True
    return (
        _CLASS.fullmatch(trimmed) is not None
        and (trimmed != value or _ANNOTATION_ENDS.match(m.string, m.end()) is not None)
        and _in_parameters(m.string, m.start())
    )


def _plausible_annotation(key: str, annotation: str) -> bool:
    """An annotation before `= default`: a type name, a generic, a class name (letters, capitalised,
    maybe subscripted) or the same name; `password: Xy7pz = abc` is a value with spaces, redacted whole."""
    return (
        _GENERIC.fullmatch(annotation) is not None
        or annotation.lower() in _TYPE_NAMES
        or _CLASS.fullmatch(annotation) is not None
        or _same_name(annotation, key)
    )


_CALLED = re.compile(r"([A-Za-z_][\w.]*)([(\[])(.*)([)\]])", re.S)
_QUOTED = re.compile(r"""(['"])(.*)\1""", re.S)
_KEYWORD = re.compile(r"([A-Za-z_]\w*\s*=\s*)(.*)", re.S)
_ENV_NAME = re.compile(
    r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]*(?:PASSWORD|PASSWD|SECRET|TOKEN|KEY|CREDENTIALS?)"
)


def _arguments(inside: str) -> list[str]:
    """A call's arguments split at its top-level commas (quotes and brackets respected)."""
    parts, depth, quote, start = [], 0, "", 0
    for i, char in enumerate(inside):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(inside[start:i])
            start = i + 1
    return [*parts, inside[start:]] if inside.strip() else parts


def _argument(text: str) -> str:
    """One argument of a call that reads a secret from elsewhere: a quoted environment or setting
    name (`"DB_PASSWORD"`), a variable's name, None, True, False are kept; anything else (a quoted
    default, a number, a call) is the secret or may hold it."""
    lead = text[: len(text) - len(text.lstrip())]
    body = text.strip()
    keyword = _KEYWORD.fullmatch(body)
    if keyword and not body.startswith(("'", '"')):
        name, body = keyword.groups()
        return f"{lead}{name}{_argument(body).strip()}"
    quoted = _QUOTED.fullmatch(body)
    if quoted is not None:
        return lead + (body if _ENV_NAME.fullmatch(quoted.group(2)) else REDACTED)
    if body.lower() in _LITERALS or _REFERENCE.fullmatch(body):
        return lead + body
    return lead + REDACTED


def _call(value: str) -> str:
    """A value that calls or subscripts with a quoted argument, `os.getenv("DB_PASSWORD", "hunter2")`,
    is code reading the secret from elsewhere, perhaps with a default: the callee and the names it
    reads are kept, the default redacted. Any other value (`getpass()`, a word in prose) is
    redacted whole."""
    called = _CALLED.fullmatch(value)
    if called is None or ("'" not in value and '"' not in value):
        return REDACTED
    callee, opener, inside, closer = called.groups()
    return f"{callee}{opener}{','.join(map(_argument, _arguments(inside)))}{closer}"


def _assigned(m: re.Match[str]) -> str:
    key, separator, annotation, equals, value, quote = m.groups()
    quote = quote or ("'" if _STRING.match(value) else None)
    typed = ":" in separator
    if annotation is not None:  # `key: Annotation = default`
        if typed and _plausible_annotation(key, annotation):
            if quote is None and (
                _is_code(m, key, value, annotated=False)
                or (annotation.lower() in _NUMBER_TYPES and _NUMBER.fullmatch(_trimmed(value)))
            ):
                return m.group(0)  # `password: Optional[str] = None`, `token_limit: int = 1024`
            return f"{key}{separator}{annotation}{equals}{REDACTED if quote else _call(value)}"
        return f"{key}{separator}{REDACTED}"
    if quote is None and _is_code(m, key, value, annotated=typed):
        return m.group(0)
    return f"{key}{separator}{REDACTED if quote else _call(value)}"


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
        return _assignments(text)
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
        text = _assignments(text)
    return text


def _assignments(text: str) -> str:
    text = _ASSIGNMENT.sub(_assigned, text)
    if "+" in text and REDACTED in text:
        while (joined := _CONCATENATED.sub(rf"\1{REDACTED}", text)) != text:
            text = joined
    return text
