"""Chinese and Japanese memories are found by plain questions: text without spaces is read
as characters and character pairs by the keyword arm and the built-in embedder."""

from __future__ import annotations

from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.text.tokenize import keyword_tokens
from tests.conftest import Api

CHINESE = {
    "zh.1": "用户住在上海，每天骑自行车上班",
    "zh.2": "用户养了一只叫小白的猫",
    "zh.3": "用户对花生过敏，不能吃含花生的食物",
    "zh.4": "用户的妹妹在北京当医生",
    "zh.5": "用户最喜欢的运动是打羽毛球",
    "zh.6": "用户下个月要去日本旅行",
}
QUESTIONS = [
    ("用户住在哪个城市", "zh.1"),
    ("猫叫什么名字", "zh.2"),
    ("用户对什么过敏", "zh.3"),
    ("用户的妹妹做什么工作", "zh.4"),
    ("用户喜欢什么运动", "zh.5"),
    ("用户下个月去哪里旅行", "zh.6"),
]


def test_chinese_questions_find_their_memory_first_with_a_keyword_match(api: Api) -> None:
    api.observe(*({"key": k, "value": v} for k, v in CHINESE.items()))
    for question, key in QUESTIONS:
        results = api.recall(question, k=3)["results"]
        assert results, question
        assert results[0]["key"] == key, (question, [r["key"] for r in results])
        assert results[0]["components"]["keyword"] > 0, question


def test_japanese_question_finds_its_memory(api: Api) -> None:
    api.observe(
        {"key": "ja.1", "value": "ユーザーは東京に住んでいて、毎朝コーヒーを飲む"},
        {"key": "ja.2", "value": "ユーザーの犬の名前はポチです"},
        {"key": "ja.3", "value": "ユーザーは来週大阪へ出張する"},
    )
    for question, key in [
        ("犬の名前は何ですか", "ja.2"),
        ("ユーザーはどこに住んでいますか", "ja.1"),
    ]:
        top = api.recall(question, k=3)["results"][0]
        assert top["key"] == key and top["components"]["keyword"] > 0, question


def test_cjk_runs_become_characters_and_pairs() -> None:
    assert keyword_tokens("用户住在上海") == [
        "用",
        "用户",
        "户",
        "户住",
        "住",
        "住在",
        "在上",
        "上",
        "上海",
        "海",
    ]
    # grammar alone is not a term; mixed scripts split at the boundary
    assert "的" not in keyword_tokens("我的猫") and "猫" in keyword_tokens("我的猫")
    assert keyword_tokens("iPhone手机") == ["iphone", "手", "手机", "机"]


def test_builtin_embedder_relates_chinese_texts_that_share_words() -> None:
    e = BuiltinEmbedder(384)
    question = e.embed_one("猫叫什么名字")
    about = float(question @ e.embed_one("用户养了一只叫小白的猫"))
    unrelated = float(question @ e.embed_one("用户住在上海，每天骑自行车上班"))
    assert about > 0.1
    assert about > unrelated + 0.1
