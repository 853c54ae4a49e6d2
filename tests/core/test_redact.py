"""Secrets are redacted before anything is stored: the common token formats, `key = value` pairs whose
key names a secret, credentials in URLs; ordinary text is left alone; and the shortcut that runs a
pattern only where its literal occurs changes nothing."""

from __future__ import annotations

import random
import re

import pytest

from graphctx import redact as redaction
from graphctx.model import Entity, Fact
from graphctx.redact import REDACTED, redact

SECRETS = {
    "AWS access key id": "AKIAABCDEFGHIJKLMNOP",
    "GitHub token": "ghp_" + "a1B2" * 9,
    "GitHub fine-grained token": "github_pat_" + "x" * 40,
    "Slack token": "xoxb-1234567890-abcdefghij",
    "OpenAI-style key": "sk-proj-" + "Ab3" * 10,
    "Google API key": "AIza" + "B" * 35,
    "JWT": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "Stripe secret key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "Stripe restricted key": "rk_test_" + "51Hx" * 6,
    "GitLab token": "glpat-" + "x1Y2z3" * 4,
    "npm token": "npm_" + "a" * 36,
    "PyPI token": "pypi-AgEIcHlwaS5vcmc" + "Q" * 60,
    "Hugging Face token": "hf_" + "AbCd" * 9,
    "SendGrid key": "SG." + "a" * 22 + "." + "b" * 43,
    "Google OAuth token": "ya29.a0AfH6SMB" + "x" * 30,
    "Shopify token": "shpat_" + "0f" * 16,
    "DigitalOcean token": "dop_v1_" + "ab" * 32,
    "Vault token": "hvs." + "CAESI" * 6,
    "Telegram bot token": "123456789:AA" + "h" * 33,
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_token_format_is_redacted_in_prose(kind: str) -> None:
    secret = SECRETS[kind]
    text = f"Deploy with {secret} then restart."
    out = redact(text)
    assert secret not in out and REDACTED in out
    assert out.startswith("Deploy with ") and out.endswith(" then restart.")


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("password=hunter2!", "password="),
        ("DB_PASSWORD: 'correct horse'", None),
        ("api_key = abcd1234", "api_key = "),
        ("AccountName=x;AccountKey=abcdEFGH1234==;", "AccountKey="),
        ("credentials: s3cr3tvalue", "credentials: "),
        ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key="),
        ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz", "Authorization: "),
        ("postgres://user:s3cret@db/x", "postgres://"),
        ("https://hooks.slack.com/services/T000/B000/XXXXXXXX", "https://"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", None),
    ],
)
def test_assignments_urls_and_blocks_keep_their_context(text: str, kept: str | None) -> None:
    out = redact(text)
    assert REDACTED in out
    for secret in (
        "hunter2",
        "correct horse",
        "abcd1234",
        "abcdEFGH",
        "s3cr3t",
        "wJalrX",
        "abcdefghijkl",
        "XXXXXXXX",
        "MIIE",
    ):
        assert secret not in out
    if kept is not None:
        assert kept in out


@pytest.mark.parametrize(
    "text",
    [
        "The payments API retries a declined card twice.",
        "keys are rotated monthly; tokens expire after an hour",
        "see https://example.com/docs and sk_live_ short",
        "a hash: 3f2a9c0e1b7d4a6f8e2c1b0a9d8e7f6a",
        "task_test_runner and desk_live_updates",
        "version 1.2.3: fixed the SG. prefix parser",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_summaries_and_fact_values_are_stored_redacted() -> None:
    secret = SECRETS["Stripe secret key"]
    assert secret not in Entity(id="e", name="pay", summary=f"key {secret}").summary
    assert secret not in (Fact(subject_id="a", predicate="note", value=f"use {secret}").value or "")


def _every_pattern(text: str) -> str:
    for pattern in redaction._PATTERNS:
        text = pattern.sub(REDACTED, text)
    return redaction._assignments(text)


def test_the_literal_gate_gives_what_every_pattern_gives() -> None:
    """Fragments of secrets, separators and prose shuffled together: the shortcut (a pattern runs only
    where its literal occurs) must redact exactly what running every pattern redacts."""
    assert len(redaction._NEEDS) == len(redaction._PATTERNS)
    rng = random.Random(5)
    pieces = [
        *SECRETS.values(),
        *(s[: len(s) // 2] for s in SECRETS.values()),
        "password", "token", "key", "=", ": ", "://", "@", "bearer ", "Basic ", " ", "\n", "é", "ſ",
        "abc", "123", "_", "-", ".", "AA", "sk_", "live_", "hooks.slack.com/services/", "SG.", "hf_",
    ]  # fmt: skip
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
        assert redact(text) == _every_pattern(text), text
    assert all(isinstance(p, re.Pattern) for p in redaction._PATTERNS)


def test_a_text_redacted_again_gets_the_same_answer():
    """Texts found clean are remembered by identity (most are redacted twice); a secret never is."""
    clean = "def parse(url):\n    return split(url, scheme='https')\n" * 20
    secret = 'api_key = "abcdefghijklmnop"'
    assert redact(clean) is clean and redact(clean) is clean
    assert redact(secret) == redact(secret) == "api_key = [REDACTED]"
    for n in range(20):  # the remembered texts turn over
        assert redact(f"filler text {n}") == f"filler text {n}"
    assert redact(clean) is clean
    assert redact(secret + " ") == "api_key = [REDACTED] "


@pytest.mark.parametrize(
    "code",
    [
        "def create(drivername, password: Optional[str] = None, token: str = None):",
        "def __init__(self, tokens: ParseResults):",
        "def f(\n    tokenizer: GenericTokenizer | None = None,\n"
        "    api_key: Mapped[Optional[str]] = None,\n):",
        "def render(template_data: dict[str, Any], tokenizer: GenericTokenizer\n    ):",
        "    password: Optional[str]",
        "    secret_key: SecretStr",
        "connect(user=user, password=password, token=self._token)",
        "api_key=settings.API_KEY,",
        "next_token_length_limit: int = 1024,",
        "token: dict[str, Any] = {}",
        "password: null",
    ],
)
def test_code_that_names_a_secret_is_left_alone(code: str) -> None:
    """A signature, an annotation or a variable passed on names a secret without holding one."""
    assert redact(code) == code


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ('password: str = "hunter2!"', "password: str = [REDACTED]"),
        ("password: Optional[str] = hunter2x", "password: Optional[str] = [REDACTED]"),
        ("f(password=hunter2x)", "f(password=[REDACTED]"),
        ("password=getpass()", "password=[REDACTED]"),
        ("password=config.db_password", "password=[REDACTED]"),
        ("password: Xy7pz = abcd", "password: [REDACTED]"),
        ("wifi (password: BlueFalcon) ask Sam", "wifi (password: [REDACTED] ask Sam"),
        ("wifi password: BlueFalcon, ask Sam", "wifi password: [REDACTED], ask Sam"),
        ("password = 12345678", "password = [REDACTED]"),
        ("password: Nonesuch", "password: [REDACTED]"),
        ("PASSWORD=Password", "PASSWORD=[REDACTED]"),
        ("the wifi password is: BlueFalcon7", "the wifi password is: [REDACTED]"),
        ("The staging token was = abcd1234efgh", "The staging token was = [REDACTED]"),
    ],
)
def test_a_secret_beside_code_is_still_redacted(text: str, redacted: str) -> None:
    """A quoted default, a value that is not the same-named variable, a call, a capitalised word in
    prose (even in parentheses, or before a comma): redacted as before the code exceptions."""
    assert redact(text) == redacted


@pytest.mark.parametrize(
    ("code", "redacted"),
    [
        (
            'password = os.getenv("DB_PASSWORD", "hunter2hunter")',
            'password = os.getenv("DB_PASSWORD", [REDACTED])',
        ),
        (
            "token = os.environ.get('TOKEN', 'abc123secretvalue')",
            "token = os.environ.get('TOKEN', [REDACTED])",
        ),
        (
            'SECRET_KEY = config("SECRET_KEY", default="django-insecure-x1")',
            'SECRET_KEY = config("SECRET_KEY", default=[REDACTED])',
        ),
        (
            'password: str = os.getenv("PG_PASS", "pa(ss)w,rd")  # dev',
            'password: str = os.getenv("PG_PASS", [REDACTED])  # dev',
        ),
        (
            'api_key = load("svc", timeout=30, retry=None)',
            "api_key = load([REDACTED], timeout=[REDACTED], retry=None)",
        ),
        ('password = b64decode("c2VjcmV0Cg==")', "password = b64decode([REDACTED])"),
        (
            'pin_password = os.getenv("PIN_PASSWORD", 48213)',
            'pin_password = os.getenv("PIN_PASSWORD", [REDACTED])',
        ),
        ('token = vault["prod/token"]', "token = vault[[REDACTED]]"),
        (
            'f(password=os.getenv("DB_PASSWORD", "x1y2z3w4"))',
            'f(password=os.getenv("DB_PASSWORD", [REDACTED]))',
        ),
    ],
)
def test_a_call_that_reads_a_secret_keeps_the_names_it_reads(code: str, redacted: str) -> None:
    """`os.getenv("DB_PASSWORD", "hunter2")`: the default is the secret (it used to survive behind a
    redacted `os.getenv(`); the callee and the environment or setting names it reads are kept."""
    assert redact(code) == redacted


@pytest.mark.parametrize(
    ("code", "redacted"),
    [
        ('SECRET_KEY = b"hunter2hunter"', "SECRET_KEY = [REDACTED]"),
        ('password = f"hunter2{suffix}"', "password = [REDACTED]"),
        ("token: bytes = rb'abcdefgh'", "token: bytes = [REDACTED]"),
        ('password = "abc1" + "def2" + "ghi3"', "password = [REDACTED]"),
        ('password = ("abc1"\n    "def2")\nx = 1', "password = [REDACTED]\nx = 1"),
        ('password = read("a.txt") + "zzsecretzz"', "password = read([REDACTED]) + [REDACTED]"),
    ],
)
def test_every_shape_of_a_string_literal_is_redacted(code: str, redacted: str) -> None:
    """A prefixed, parenthesised or concatenated string is stored as a whole secret: before, a
    `b"..."` or `f"..."` value, a string in parentheses, and every literal after the first `+` were
    stored as written."""
    assert redact(code) == redacted


def test_a_triple_quoted_string_after_a_secret_name_is_documentation() -> None:
    code = 'class TokenTransformer:\n    """Base class for transformations which examine tokens."""\n'
    help_text = 'STARTING_TOKEN_HELP = """\n<p>A token to specify where to start paginating.</p>\n"""'
    assert redact(code) == code and redact(help_text) == help_text


def test_a_subscript_of_the_environment_is_left_alone() -> None:
    code = 'db_password = os.environ["DB_PASSWORD"]'
    assert redact(code) == code


def test_no_generated_secret_survives_any_assignment_shape() -> None:
    """Secrets with a digit and a symbol (so never a literal, a name or a type) after every key shape,
    in prose, config, annotated and call positions: none survives. A capitalised word of letters
    alone in an annotation's place (`def f(password: Sunshine)`) is read as a class; that is the
    price of leaving signatures readable."""
    rng = random.Random(11)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!@#$%^&*()[]{}.:/+-_=<>?~|"
    keys = [
        "password",
        "DB_PASSWORD",
        "api_key",
        "self.token",
        "secret",
        "aws_secret_access_key",
        "credentials",
    ]
    shapes = [
        "{k}={v}", "{k}: {v}", "{k} = {v}", "{k}:{v}", "{k}={v}\n", "{k} = {v};", "{k}: {v}, other",
        "{k}: str = {v}", "{k}: Optional[str] = {v}", "{k}: SecretStr = {v}", '{k}: str = "{v}"',
        "{k}: Token = {v}", "{k}: {v} = None", "f({k}={v})", "def f({k}: {v}):", "g(x, {k}: {v})",
        "wifi ({k}: {v}) ask", "note: {k}: {v}, rotate", "the {k} is: {v}.", "our {k} was = {v}",
        '{k} = os.getenv("DB_PASSWORD", "{v}")', "{k}: str = env('{v}')", '{k} = cfg.get("X", default="{v}")',
        'f({k}=os.environ.get("API_KEY", "{v}"))', '{k} = vault["{v}"]', '{k} = b"{v}"', "{k} = f'{v}'",
        '{k} = ("{v}"\n    "more")', '{k} = "pre" + "{v}"', '{k} = ("x"\n    "{v}")',
    ]  # fmt: skip
    tried = 0
    while tried < 3000:
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(6, 18)))
        if value.isalnum() or not any(c.isdigit() for c in value) or re.fullmatch(r"[A-Z0-9_]+", value):
            continue  # (a quoted A_B1 in a call reads as an environment variable's name)
        tried += 1
        text = rng.choice(shapes).format(k=rng.choice(keys), v=value)
        assert value not in redact(text), text
