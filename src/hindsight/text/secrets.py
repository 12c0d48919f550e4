"""Find secrets and personal data in text, and replace them with `[REDACTED:kind]`.

Pure and fast: a handful of anchored regular expressions, each run only when one scan of
the text found a substring its matches must contain. Provider tokens are recognised by
their documented prefixes and shapes (as in gitleaks and detect-secrets), not by entropy:
entropy detectors flag names, ids and hashes in ordinary notes, and a memory store is
mostly ordinary notes. Card numbers must
pass the Luhn check and start like a card; e-mail addresses and phone numbers only when
asked for.

Why not detect-secrets itself: it reports which secret a line holds but not where, its
GitHub plugin reports only the token's prefix, and with its regex plugins alone it cost
about 200 µs per short text here (this module: under 10 µs of CPU per text). Checked again
for the configuration forms (`DB_PASSWORD=…`, `export PGPASSWORD=…`, `{"db_password": …}`):
its KeywordDetector finds those lines, but still not the span, and it reads no Chinese cue
words, so the patterns below stayed hand-written.

Text is read folded (`hindsight.text.normalize`: NFKC, invisible characters dropped) so a
zero-width space inside `ghp_…` or a full-width `ＡＫＩＡ…` does not hide a token; the
replacement is made on the original string, invisible characters inside a finding included.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from hindsight.text import normalize

MARKER = "[REDACTED:{kind}]"
_MARKER = re.compile(r"\[REDACTED:([a-z_]+)\]")


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class _Rule:
    kind: str
    # lower-case substrings one of which any match contains: a rule whose hints are all
    # absent is skipped without running its pattern (most text holds none)
    hints: tuple[str, ...]
    pattern: re.Pattern[str]
    # the part to redact (e.g. only the password of a URL); with several, the first that
    # took part in the match (a quoted or a bare value)
    group: int | str | tuple[str, ...] = 0
    check: Callable[[str], bool] | None = None
    # a check that needs the whole match (which separator, which keyword)
    accept: Callable[[re.Match[str]], bool] | None = None


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _card(text: str) -> bool:
    if "." in text:
        # dotted digits are usually decimals or versions: a card written with dots comes in
        # groups (4-4-4-4, 4-6-5)
        groups = text.split(".")
        if len(groups) < 3 or not all(3 <= len(g) <= 6 and g.isdigit() for g in groups):
            return False
    digits = re.sub(r"[ .-]", "", text)
    # issuer prefixes: Amex/Diners 3, Visa 4, Mastercard 2/5, Discover/UnionPay 6
    return 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn(digits)


def _phone(text: str) -> bool:
    return 8 <= sum(c.isdigit() for c in text) <= 15


def _looks_like_password(value: str) -> bool:
    """For `password is X` in prose: X must not be a plain word ("is wrong")."""
    return any(not c.isalpha() for c in value)


_PLACEHOLDER = re.compile(
    r"(?i)^(?:\$|<|%|\{|\[REDACTED|\*+$|x+$|\.+$|true$|false$|null$|none$|nil$|yes$|no$"
    r"|required$|optional$|empty$|hidden$|redacted$|masked$|undefined$|.*(?:\.\.\.|…)$)"
)
# a value that is code, not a secret: an attribute, a call, an index, a variable with an
# underscore (`token = token.strip()`, `api_key=settings.api_key`, `password=auth[1]`)
_CODE = re.compile(r"^[A-Za-z_]+(?:[._][A-Za-z_]\w*|[\w.]*[(\[)])")


def _zh_value(value: str) -> bool:
    return any(c.isalnum() for c in value) and _looks_like_password(value)


def _assigned(m: re.Match[str]) -> bool:
    """`name = value` forms: a value that is a placeholder or a flag is not a secret; after
    a colon (prose writes "Password: see the vault") a bare value must look like one."""
    value = m.group("dq") or m.group("sq") or m.group("bare")
    if _PLACEHOLDER.match(value):
        return False
    if m.group("kw").lower() == "token" and value.isdigit():
        return False  # a token count (`max_token=512`), not a token
    if m.group("kw").lower() == "pwd" and value[0] in "/~":
        return False  # the shell's working directory (`PWD=/home/ada`)
    if m.group("bare") is not None and _CODE.match(value):
        return False
    if m.group("bare") is None or m.group("sep") != ":":
        return True
    return _looks_like_password(value) or len(value) >= 16


def _basic_auth(value: str) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and all(32 <= b < 127 for b in decoded)


_KEYWORD_HINTS = (
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "key",
    "token",
    "credential",
)
# Chinese cue words: password, passphrase, secret key (two spellings), token, verification code
_ZH_HINTS = ("密码", "口令", "密钥", "秘钥", "令牌", "验证码")
_DIGITS = tuple("0123456789")
_KEYWORD = (
    r"(?:password|passwd|passphrase|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token"
    r"|client[_-]?secret|private[_-]?key)"
)
# a configuration name holding a keyword: DB_PASSWORD, PGPASSWORD, SECRET_KEY, GITHUB_TOKEN,
# "db_password"; the name must end at the keyword or a short suffix, so `tokens`,
# `max_tokens`, `passwordless` and `token_type` are not names of secrets
_NAME = (
    r"(?<![A-Za-z0-9])[A-Za-z0-9_.-]{0,40}?"
    r"(?P<kw>password|passwd|passphrase|pwd|secret|token|api[_-]?key|private[_-]?key"
    r"|access[_-]?key|credentials?)"
    r"(?:[_-](?:key|token|value|b64|base64|hash))?(?![A-Za-z0-9])"
)

SECRET_RULES: tuple[_Rule, ...] = (
    _Rule(
        "private_key",
        ("-----begin",),
        re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]*?-----END[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----|[\s\S]*\Z)"
        ),
    ),
    _Rule(
        "jwt", ("eyj",), re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")
    ),
    _Rule("anthropic_key", ("sk-ant-",), re.compile(r"sk-ant-[A-Za-z0-9_-]{20,}")),
    _Rule("openai_key", ("sk-",), re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    _Rule(
        "stripe_key",
        ("_live_", "_test_"),
        re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}"),
    ),
    _Rule(
        "aws_access_key",
        ("akia", "asia", "abia", "acca"),
        # glued to lower-case letters (`myAKIA…`) still counts; not inside an upper-case run
        re.compile(r"(?<![0-9A-Z])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![0-9A-Z])"),
    ),
    _Rule(
        "aws_secret_key",
        ("secret",),
        re.compile(
            r"(?i)\baws_?secret_?(?:access_?)?key\b[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})\b"
        ),
        group=1,
    ),
    _Rule(
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"),
    ),
    _Rule("gitlab_token", ("glpat-",), re.compile(r"glpat-[A-Za-z0-9_-]{20,}")),
    _Rule("slack_token", ("xox",), re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}")),
    _Rule(
        "slack_webhook",
        ("hooks.slack.com",),
        re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9_/]{20,}"),
    ),
    _Rule("google_api_key", ("aiza",), re.compile(r"AIza[0-9A-Za-z_-]{35}")),
    _Rule("huggingface_token", ("hf_",), re.compile(r"\bhf_[A-Za-z]{34,}\b")),
    _Rule("npm_token", ("npm_",), re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    _Rule("sendgrid_key", ("sg.",), re.compile(r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}")),
    _Rule("hindsight_key", ("hs_",), re.compile(r"\bhs_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])")),
    _Rule(
        "bearer_token",
        ("bearer",),
        re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{20,}=*)"),
        group=1,
    ),
    _Rule(
        "basic_auth",
        ("basic",),
        re.compile(r"(?i)\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"),
        group=1,
        check=_basic_auth,
    ),
    _Rule(
        "password",
        ("mysql",),
        # the MySQL clients take the password glued to -p (`mysql -u root -pS3cret`); a
        # bare -p prompts for it, and -P is the port
        re.compile(
            r"(?i:\bmysql(?:dump|admin|sh)?)\b[^\n|;&]{0,200}?\s-p(?=\S)"
            r"(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"']+)"
        ),
        group=1,
    ),
    _Rule(
        "url_password",
        ("://",),
        re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@]{1,100}:([^\s@/]{1,200})@"),
        group=1,
    ),
    _Rule(
        "password",
        _KEYWORD_HINTS,
        re.compile(
            rf"(?i){_NAME}[\"']?\s*(?P<sep>=>|:=|[:=])\s*"
            r"(?:\"(?P<dq>[^\"\n]{1,200})\"|'(?P<sq>[^'\n]{1,200})'|(?P<bare>[^\s\"',;]{3,}))"
        ),
        group=("dq", "sq", "bare"),
        accept=_assigned,
    ),
    _Rule(
        "password",
        _KEYWORD_HINTS,
        re.compile(
            rf"(?i)\b(?:{_KEYWORD}|token)\s+(?:is|was)\s+[\"']?([^\s\"',;]{{4,}}?)[\"']?(?=[\s,;.!?]|\Z)"
        ),
        group=1,
        check=_looks_like_password,
    ),
    _Rule(
        "password",
        _ZH_HINTS,
        # "我的密码是 Hunter2!", "数据库密码 P@ssw0rd123": the cue word, an optional "is",
        # then an ASCII value that is not a plain word; a trailing , . ; : is punctuation
        re.compile(
            r"(?:密码|口令|密钥|秘钥|令牌|验证码)\s*(?:是|为|就是|:|=)?\s*[\"'“]?"
            r"([!-~]{3,63}?[^\s,.;:\"'\u0080-\U0010ffff])(?=[,.;:\"'”]*(?:[^!-~]|\Z))"
        ),
        group=1,
        check=_zh_value,
    ),
    _Rule(
        "password",
        ("password",),
        # a .netrc entry (curl, git, ftp): `machine HOST login USER password SECRET`; the
        # login is required, so prose ("a default password policy") is not one
        re.compile(
            r"(?i)\b(?:machine\s+\S+|default)(?:\s+(?:login|account)\s+\S+)+"
            r"\s+password\s+(\S+)"
        ),
        group=1,
    ),
    _Rule(
        "password",
        (":",),
        # a .pgpass line: host:port:database:user:password (* for any); the fields between
        # must hold letters, so a time such as 10:30:45:12:00 is not one
        re.compile(
            r"(?m)^(?:[A-Za-z0-9.-]*[A-Za-z][A-Za-z0-9.-]*|\*|[\d.]+):(?:\d{2,5}|\*)"
            r":(?=[^:\s]*[A-Za-z*])[^:\s]+:(?=[^:\s]*[A-Za-z*])[^:\s]+:(\S+)$"
        ),
        group=1,
    ),
    _Rule(
        "password",
        ("pass",),
        # a bare `pass: VALUE` line (YAML and notes); a value must look like a password
        re.compile(r"(?im)^[ \t]*pass[ \t]*[:=][ \t]*[\"']?([^\s\"']{4,})[\"']?[ \t]*$"),
        group=1,
        check=_looks_like_password,
    ),
    _Rule(
        "azure_key",
        ("accountkey", "sharedaccess", "sig="),
        # an Azure storage or Service Bus connection string's key, and a SAS URL's signature
        re.compile(
            r"(?i)(?:\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)=|[?&]sig=)"
            r"([A-Za-z0-9+/%_-]{16,}={0,2})"
        ),
        group=1,
    ),
    _Rule(
        "telegram_token",
        (":aa",),
        re.compile(r"(?<![\w:])\d{8,10}:AA[0-9A-Za-z_-]{33}(?![\w-])"),
    ),
    _Rule(
        "pin",
        ("pin",),
        # "my PIN is 4821", "PIN: 0000", "pin code = 123456": 4 to 8 digits after the cue
        re.compile(r"(?i)\bpin(?:[ \t]+(?:code|number))?[ \t]*(?:is|was|:|=)[ \t]*(\d{4,8})(?!\d)"),
        group=1,
    ),
    _Rule(
        "card_number",
        _DIGITS,
        re.compile(r"(?<![\d.-])\d(?:[ .-]?\d){12,18}(?![\d])"),
        check=_card,
    ),
)

EMAIL_RULE = _Rule(
    "email",
    ("@",),
    re.compile(r"\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+\b"),
)
PHONE_RULE = _Rule(
    "phone",
    _DIGITS,
    re.compile(r"(?<![\w+])(?:\+|\b)\d[\d ().-]{6,18}\d\b"),
    check=_phone,
)

SECRET_KINDS = tuple(sorted({r.kind for r in SECRET_RULES}))


class Redactor:
    def __init__(self, rules: Iterable[_Rule]) -> None:
        self._rules = tuple(rules)
        # one scan finds which hints the text holds (digits through \d), instead of a
        # substring test per hint per rule
        words = sorted(
            {h for r in self._rules for h in r.hints if not h.isdigit()}, key=len, reverse=True
        )
        self._hints = re.compile("|".join([r"\d", *map(re.escape, words)]))

    def find(self, text: str) -> list[Finding]:
        """Non-overlapping findings in text order (an earlier rule wins a tie), as spans of
        `text` itself; detection reads the folded text (see `hindsight.text.normalize`)."""
        if normalize.plain(text):
            return self._find(text)
        # most non-ASCII text (any Chinese with full-width punctuation) is not NFKC-stable
        # but holds no secret: a yes/no on the whole folded text first, the per-character
        # map only when something is there
        if not self._find(normalize.quick(text)):
            return []
        folded, origin = normalize.fold(text)
        return [Finding(f.kind, origin[f.start], origin[f.end - 1] + 1) for f in self._find(folded)]

    def _find(self, text: str) -> list[Finding]:
        found: list[Finding] = []
        present = set(self._hints.findall(text.lower()))
        if not present:
            return found
        for rule in self._rules:
            if present.isdisjoint(rule.hints):
                continue
            for m in rule.pattern.finditer(text):
                group = rule.group
                if isinstance(group, tuple):
                    group = next(g for g in group if m.group(g) is not None)
                part = m.group(group)
                if not part or (rule.check is not None and not rule.check(part)):
                    continue
                if rule.accept is not None and not rule.accept(m):
                    continue
                found.append(Finding(rule.kind, m.start(group), m.end(group)))
        if len(found) < 2:
            return found
        found.sort(key=lambda f: (f.start, -(f.end - f.start)))
        kept: list[Finding] = []
        for f in found:
            if kept and f.start < kept[-1].end:
                continue
            kept.append(f)
        return kept

    def redact(self, text: str) -> tuple[str, Counter[str]]:
        """The text with each finding replaced by its marker, and the count per kind."""
        findings = self.find(text)
        counts: Counter[str] = Counter()
        if not findings:
            return text, counts
        parts: list[str] = []
        at = 0
        for f in findings:
            parts.append(text[at : f.start])
            parts.append(MARKER.format(kind=f.kind))
            counts[f.kind] += 1
            at = f.end
        parts.append(text[at:])
        return "".join(parts), counts


@lru_cache(maxsize=4)
def redactor(*, email: bool = False, phone: bool = False) -> Redactor:
    rules = list(SECRET_RULES)
    if email:
        rules.append(EMAIL_RULE)
    if phone:
        rules.append(PHONE_RULE)
    return Redactor(rules)


def marker_counts(*texts: str | None) -> dict[str, int]:
    """Redactions recorded in stored text, per kind (the markers are the record)."""
    counts: Counter[str] = Counter()
    for text in texts:
        if text and "[REDACTED:" in text:
            counts.update(_MARKER.findall(text))
    return dict(counts)
