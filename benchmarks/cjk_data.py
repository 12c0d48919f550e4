"""Chinese and Japanese smoke sets: what a user's assistant remembers about the user and
the people around them, written as a Chinese- or Japanese-speaking team would write it,
and plain questions about one person's one fact. Everyone has the same kinds of facts
(where they live, their pet, their job ...), so a question must find the right person's
memory, not just the right kind. Keys are neutral (`m17`): only the text can match.
Generated from a seed; no network."""

from __future__ import annotations

import random

from benchmarks.eval_set import Dataset, Question

# (memory template, question template); {p} is the person
ZH_FACTS = [
    ("{p}住在{city}，每天坐地铁上班", "{p}住在哪个城市"),
    ("{p}养了一只叫{pet}的{animal}", "{p}的{animal}叫什么名字"),
    ("{p}在{company}当{job}", "{p}做什么工作"),
    ("{p}最喜欢的运动是{sport}", "{p}喜欢什么运动"),
    ("{p}对{food}过敏，不能吃", "{p}对什么过敏"),
    ("{p}下个月要去{place}旅行", "{p}下个月去哪里旅行"),
    ("{p}的生日是{month}月{day}日", "{p}的生日是哪天"),
    ("{p}周末喜欢{hobby}", "{p}周末一般做什么"),
]
ZH = {
    "p": "用户 用户的妹妹 用户的哥哥 用户的妈妈 同事小李 同事王芳 朋友张伟 朋友刘洋 邻居陈阿姨 "
    "老板赵总 表弟小明 大学同学周杰 室友孙丽 教练马强".split(),
    "city": "上海 北京 广州 深圳 成都 杭州 南京 武汉 西安 重庆 苏州 厦门".split(),
    "pet": "小白 旺财 咪咪 豆豆 球球 花花 黑子 毛毛".split(),
    "animal": "猫 狗 兔子 仓鼠 鹦鹉 乌龟".split(),
    "company": "腾讯 阿里巴巴 华为 字节跳动 百度 小米 京东 美团".split(),
    "job": "医生 老师 工程师 律师 设计师 会计 护士 厨师 记者".split(),
    "sport": "羽毛球 乒乓球 篮球 足球 游泳 跑步 网球 瑜伽".split(),
    "food": "花生 海鲜 牛奶 鸡蛋 芒果 小麦".split(),
    "place": "日本 泰国 云南 西藏 新疆 法国 意大利 海南".split(),
    "hobby": "爬山 钓鱼 看电影 做饭 画画 弹钢琴 逛街 读书".split(),
}
JA_FACTS = [
    ("{p}は{city}に住んでいて、毎朝電車で通勤している", "{p}はどこに住んでいますか"),
    ("{p}は{animal}を飼っていて、名前は{pet}だ", "{p}の{animal}の名前は何ですか"),
    ("{p}は{company}で{job}として働いている", "{p}の仕事は何ですか"),
    ("{p}の好きなスポーツは{sport}だ", "{p}はどんなスポーツが好きですか"),
    ("{p}は{food}アレルギーがある", "{p}は何のアレルギーがありますか"),
    ("{p}は来月{place}へ旅行する予定だ", "{p}は来月どこへ旅行しますか"),
]
JA = {
    "p": "ユーザー ユーザーの妹 ユーザーの父 同僚の田中さん 同僚の佐藤さん 友人の鈴木さん "
    "友人の高橋さん 隣人の伊藤さん 上司の渡辺さん 先輩の山本さん".split(),
    "city": "東京 大阪 京都 名古屋 福岡 札幌 横浜 神戸 仙台 広島".split(),
    "pet": "ポチ タマ モモ ハナ クロ シロ コタロウ".split(),
    "animal": "犬 猫 ウサギ ハムスター インコ".split(),
    "company": "トヨタ ソニー 任天堂 楽天 パナソニック ユニクロ".split(),
    "job": "エンジニア 看護師 教師 弁護士 デザイナー 会計士".split(),
    "sport": "野球 サッカー テニス 水泳 卓球 剣道 バスケットボール".split(),
    "food": "卵 そば 小麦 えび 牛乳 ピーナッツ".split(),
    "place": "沖縄 北海道 台湾 ハワイ パリ ソウル".split(),
}


def _build(
    name: str,
    facts: list[tuple[str, str]],
    values: dict[str, list[str]],
    seed: int,
    namespaces: int,
    questions_per_ns: int,
) -> Dataset:
    rng = random.Random(seed)
    data = Dataset(name)
    for n in range(namespaces):
        ns = f"{name}-{n}"
        asked: list[Question] = []
        number = 0
        for person in values["p"]:
            for memory, question in facts:
                slots = {k: rng.choice(v) for k, v in values.items() if k != "p"}
                slots["month"], slots["day"] = str(rng.randint(1, 12)), str(rng.randint(1, 28))
                number += 1
                key = f"m{number}"
                data.observations.append((ns, key, memory.format(p=person, **slots), "fact"))
                asked.append(Question(ns, question.format(p=person, **slots), "single_hop", [key]))
        data.questions += rng.sample(asked, min(questions_per_ns, len(asked)))
    return data


def chinese() -> Dataset:
    return _build("zh", ZH_FACTS, ZH, seed=5, namespaces=3, questions_per_ns=50)


def japanese() -> Dataset:
    return _build("ja", JA_FACTS, JA, seed=6, namespaces=3, questions_per_ns=30)
