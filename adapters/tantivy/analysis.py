"""Text analysis shared by indexing and querying, so both sides always produce the same terms.

Identifier analysis runs in Python and reaches tantivy as pre-tokenized text; the English analyser is
a tantivy `TextAnalyzer` registered under `EN_ANALYSER` (tantivy does not persist custom analysers, so
the index registers it on every open) and the same object analyses query text.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from itertools import chain

from tantivy import Filter, TextAnalyzer, TextAnalyzerBuilder, Tokenizer

EN_ANALYSER = "graphctx_en"

# An identifier: letters and digits joined by _ and the connectors code uses (a.b, a::b, a/b, a-b ...),
# starting and ending with a letter or digit.
_CHUNK = re.compile(r"[^\W_](?:[\w.:/\\@#$-]*[^\W_])?")
_NON_WORD = re.compile(r"[\W_]+")


def english_analyser() -> TextAnalyzer:
    """Tantivy's "default" chain plus ASCII folding, English stop words (Lucene's list: a, the, of,
    ...) and English stemming. Prose fields only: identifiers keep every part in the identifier fields."""
    return (
        TextAnalyzerBuilder(Tokenizer.simple())
        .filter(Filter.remove_long(40))
        .filter(Filter.lowercase())
        .filter(Filter.ascii_fold())
        .filter(Filter.stopword("english"))
        .filter(Filter.stemmer("english"))
        .build()
    )


def clean(text: str) -> str:
    """Valid UTF-8 for tantivy: lone surrogates (which it rejects) become "?"."""
    if text.isascii():
        return text
    return text.encode("utf-8", "replace").decode("utf-8") if _has_surrogate(text) else text


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def fold(text: str) -> str:
    """Lower case without accents (naïveÉtat -> naiveetat), the same on both sides."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", clean(text))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


# ASCII fast path of _split_case: an acronym stops before the capital that starts the next word.
_ASCII_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _split_case(segment: str) -> list[str]:
    """getUserName -> get User Name; HTTPServer -> HTTP Server; utf8Decode -> utf 8 Decode."""
    if segment.isascii():
        return _ASCII_WORD.findall(segment)
    parts: list[str] = []
    current = ""
    for char in segment:
        if current:
            prev = current[-1]
            if prev.isdigit() != char.isdigit() or (prev.islower() and char.isupper()):
                parts.append(current)
                current = ""
            elif prev.isupper() and char.islower() and len(current) > 1 and current[-2].isupper():
                parts.append(current[:-1])  # the last capital starts the next word
                current = current[-1]
        current += char
    if current:
        parts.append(current)
    return parts


def _chunks(text: str) -> list[str]:
    return _CHUNK.findall(clean(text))


@lru_cache(maxsize=65536)
def _segment_parts(segment: str) -> tuple[str, ...]:
    """The folded case/digit parts of one run of letters and digits (segments repeat far more often
    than whole identifiers do: `_header_value_parser` and `header_value` share two)."""
    return tuple(p for p in (fold(x) for x in _split_case(segment)) if p)


@lru_cache(maxsize=65536)
def _parts(chunk: str) -> tuple[str, ...]:
    segments = [s for s in _NON_WORD.split(chunk) if s]
    if len(segments) == 1:
        return _segment_parts(segments[0])
    return tuple(p for seg in segments for p in _segment_parts(seg))


@lru_cache(maxsize=65536)
def _chunk_tokens(chunk: str) -> tuple[str, ...]:
    parts = _parts(chunk)
    whole = fold(chunk)
    return (*parts, whole) if whole and parts != (whole,) else parts


def analysis_caches() -> list[tuple[str, int, int]]:
    """(name, entries, max entries) of the identifier analysis memo."""
    return [
        (name, info.currsize, info.maxsize or 0)
        for name, info in (
            ("identifier_parts", _parts.cache_info()),
            ("identifier_tokens", _chunk_tokens.cache_info()),
            ("identifier_segments", _segment_parts.cache_info()),
        )
    ]


def identifier_tokens(text: str) -> list[str]:
    """Parts of every identifier in `text`, each followed by the whole identifier (lower case) when it
    has more than one part: `os.path.join` -> os, path, join, os.path.join."""
    return list(chain.from_iterable(map(_chunk_tokens, _chunks(text))))


def exact_terms(value: str) -> list[str]:
    """Terms of the exact-identifier field for one name, alias or qualified name: the whole value in
    lower case and its parts run together, so get_user_name, getUserName and GetUserName meet."""
    whole = " ".join(fold(value).split())
    joined = "".join(p for chunk in _chunks(value) for p in _parts(chunk))
    return list(dict.fromkeys(t for t in (whole, joined) if t))


def query_exact_terms(text: str) -> list[str]:
    """The exact terms a query can hit: the whole query and each identifier in it."""
    terms = exact_terms(text)
    for chunk in _chunks(text):
        terms.extend(exact_terms(chunk))
    return list(dict.fromkeys(terms))
