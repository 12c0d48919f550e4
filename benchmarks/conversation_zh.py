"""The conversation set in Chinese (`zh-conversations`): the same shape as
benchmarks/conversation_data.py — two friends over 24 sessions, every turn one memory
(`D<session>:<turn>` -> `[2023年5月3日] 小明：<text>`), the evidence said in passing among
near-identical small talk and chatter on the same topic — written as Chinese speakers chat,
with questions in Chinese: single-hop in other words, multi-hop over sessions, temporal
("小明什么时候去的京都？", "小明在2023年5月做了什么？") and open-domain.

Nothing in it is split by spaces, so keyword search has to segment the text (Hindsight and
the BM25 baseline both index character pairs) and the month questions need the Chinese
time expressions (hindsight.text.timeexpr_cjk). Generated from a seed; no network.
"""

from __future__ import annotations

from benchmarks.conversation_data import Event, Language, build, show
from benchmarks.conversation_time import build_time
from benchmarks.eval_set import Dataset

PEOPLE = """小明 王芳 李娜 张伟 刘洋 陈静 杨帆 赵磊 黄婷 周杰 吴敏 徐浩 孙丽 马强 朱琳 胡军
郭涛 何欢 林峰 罗佳 高翔 梁雪 宋雨 郑凯""".split()

EVENTS = [
    Event(
        "pet",
        "对了差点忘了，我们周六领养了一只{species}！孩子们给它起名叫{pet}",
        "{who}新养的{species}叫什么名字？",
        "{who}是什么时候把{species}带回家的？",
        "{who}家里有宠物吗？",
        "{who}的宠物都叫什么名字？",
        did="领养了{species}",
    ),
    Event(
        "trip",
        "周日刚从{city}回来，{sight}真的太美了",
        "{who}去哪座城市看了{sight}？",
        "{who}是什么时候去的{city}？",
        None,
        "{who}去过哪些城市旅行？",
        did="去了{city}",
    ),
    Event(
        "instrument",
        "我终于开始每周二上{instrument}课了，手指疼死了哈哈",
        "{who}在学哪种乐器？",
        "{who}是什么时候开始上{instrument}课的？",
        "{who}会喜欢去听{genre}音乐会吗？",
        did="开始学{instrument}",
    ),
    Event(
        "race",
        "上周末跑了{race}，成绩是{time}，超自豪",
        "{who}跑完{race}用了多长时间？",
        "{who}是什么时候跑的{race}？",
        "{who}喜欢耐力运动吗？",
        "{who}参加过哪些比赛？",
        did="跑了{race}",
    ),
    Event(
        "book",
        "我正在看{book}，已经看了一半了，是{friend}借给我的，根本停不下来",
        "{friend}借给{who}的是哪本小说？",
        "{who}是什么时候在读{book}的？",
        None,
        "{who}读过哪些书？",
        did="在读{book}",
    ),
    Event(
        "job",
        "好消息，我拿到{company}的offer了！下个月开始当{role}",
        "{who}在新单位接受了什么职位？",
        "{who}是什么时候拿到{company}的offer的？",
        "{who}最近换工作了吗？",
        did="拿到了{company}的offer",
    ),
    Event(
        "class",
        "在社区中心报了一个{hobby}班，{teacher}老师特别搞笑",
        "{who}的{hobby}课老师姓什么？",
        "{who}是什么时候开始上{hobby}班的？",
        "{who}有什么创作类的爱好吗？",
        "{who}上过哪些兴趣班？",
        did="报了{hobby}班",
    ),
    Event(
        "family",
        "我{relative}{relname}下周从{city2}飞过来，好久没见了",
        "{who}的{relative}住在哪里？",
        "{who}的{relative}{relname}什么时候来看望？",
        did="听说{relname}要从{city2}过来",
    ),
    Event(
        "cooking",
        "今晚照着外婆的菜谱做了{dish}，满屋子都是香味",
        "{who}照外婆的方子做了什么菜？",
        "{who}是什么时候做的{dish}？",
        "{who}喜欢下厨吗？",
        did="做了{dish}",
    ),
    Event(
        "injury",
        "昨天打{sport}把脚踝扭了，只能躺在沙发上",
        "{who}是怎么受伤的？",
        "{who}是什么时候扭伤脚踝的？",
        did="打{sport}扭伤了脚踝",
    ),
    Event(
        "volunteer",
        "上午在{place}做志愿者，和{friend}一起整理捐赠的物资",
        "谁在{place}给{who}帮忙？",
        "{who}是什么时候在{place}做的志愿者？",
        "{who}参加公益活动吗？",
        "{who}在哪些地方做过志愿者？",
        did="在{place}做了志愿者",
    ),
    Event(
        "concert",
        "周五在{venue}看了{band}的现场，喊到嗓子都哑了",
        "{who}在{venue}看了哪个乐队的演出？",
        "{who}是什么时候去看的{band}演出？",
        None,
        "{who}看过哪些乐队的现场？",
        did="看了{band}的现场",
    ),
    Event(
        "gift",
        "{friend}送了我一台{gift}当生日礼物，我差点哭了",
        "{friend}送了{who}什么生日礼物？",
        "{who}的生日是什么时候？",
        did="收到了{friend}送的{gift}",
    ),
    Event(
        "move",
        "我们在{hood}签了租房合同，月底就搬",
        "{who}要搬去哪个小区？",
        "{who}是什么时候签的新租约？",
        "{who}最近要搬家吗？",
        did="在{hood}签了租约",
    ),
]

SLOTS: dict[str, list[str]] = {
    "species": "比格犬 虎斑猫 柯基 鹦鹉 兔子 金毛 乌龟 哈士奇 仓鼠 腊肠犬".split(),
    "pet": "豆豆 团子 可乐 布丁 旺财 雪球 花卷 年糕 芝麻 汤圆 奶茶 土豆 球球 毛毛 小黑 "
    "元宝".split(),
    "city": "里斯本 京都 雷克雅未克 马拉喀什 温哥华 布拉格 库斯科 河内 爱丁堡 塞维利亚 第比利斯 "
    "瓦哈卡 卑尔根 哈瓦那 伊斯坦布尔 杜布罗夫尼克".split(),
    "sight": "老教堂 夜市 日落时的港口 山顶缆车 山上的城堡 街头小吃 植物园 温泉 夜游船 "
    "瓷砖宫殿".split(),
    "instrument": "大提琴 小提琴 尤克里里 萨克斯 架子鼓 钢琴 班卓琴 小号 长笛 竖琴".split(),
    "race": "城市半程马拉松 越野十公里 慈善五公里 江边马拉松 海港欢乐跑 山地越野赛 "
    "冬至长跑 彩色跑".split(),
    "time": "1小时52分 48分钟 27分钟 4小时05分 2小时10分 55分钟 3小时38分 31分钟".split(),
    "book": "《三体》 《活着》 《围城》 《平凡的世界》 《白鹿原》 《红楼梦》 《百年孤独》 "
    "《解忧杂货店》 《人类简史》 《追风筝的人》 《小王子》 《挪威的森林》".split(),
    "company": "明远科技 北风实验室 康泰健康 环宇集团 松果工作室 太阳能源 青鸟银行 "
    "轨道物流".split(),
    "role": "产品设计师 执业护士 数据分析师 副厨 项目经理 心理咨询师 销售主管 用户研究员".split(),
    "hobby": "陶艺 水彩 木工 萨尔萨舞 摄影 书法 即兴喜剧 彩色玻璃".split(),
    "relative": "姐姐 哥哥 表妹 姑姑 爷爷 侄女".split(),
    "relname": "玉兰 建国 秀英 志强 丽华 国庆 美玲 海涛 春梅 德明".split(),
    "city2": "哈尔滨 昆明 乌鲁木齐 大连 青岛 拉萨 桂林 长沙 郑州 兰州".split(),
    "dish": "红烧肉 饺子 麻婆豆腐 宫保鸡丁 酸菜鱼 糖醋排骨 回锅肉 东坡肉 水煮鱼 狮子头".split(),
    "sport": "排球 足球 篮球 网球 羽毛球 匹克球 飞盘".split(),
    "place": "食物银行 流浪动物救助站 救助站 儿童医院 图书馆义卖 社区菜园 养老院".split(),
    "friend": "小雨 阿杰 莉娜 大伟 佳佳 老凯 晓静 维维".split(),
    "band": "五月天 苏打绿 草东没有派对 万能青年旅店 新裤子 痛仰乐队 告五人 逃跑计划".split(),
    "gift": "复古唱片机 手工被子 天文望远镜 咖啡机 银项链 拍立得相机 登山靴".split(),
    "teacher": "周 林 梅 刘 孙 吴 宝 郑".split(),
    "venue": "工人体育场 鸟巢 梅赛德斯奔驰文化中心 糖果现场 星海音乐厅 东方体育中心 "
    "保利剧院 爵士俱乐部".split(),
    "hood": "枫林小区 老城区 河畔花园 雪松公园 西溪 海景湾 榆树苑".split(),
}
GENRE = {
    "大提琴": "古典",
    "小提琴": "古典",
    "尤克里里": "民谣",
    "萨克斯": "爵士",
    "架子鼓": "摇滚",
    "钢琴": "古典",
    "班卓琴": "蓝草",
    "小号": "爵士",
    "长笛": "古典",
    "竖琴": "古典",
}

SMALL_TALK = [
    "嘿{other}！最近怎么样？",
    "{other}，好久不见啊！",
    "哈哈，太对了！",
    "天哪太棒了，真替你高兴！",
    "哇，听起来好累，坚持住",
    "对对对，我也这么觉得",
    "{other}你也太酷了吧！",
    "哈哈我也是",
    "哇好暖心",
    "谢谢{other}，你真好",
    "我懂！这周太疯狂了",
    "真替你开心，说真的",
    "嗯，我之前没这么想过",
    "好啦不说我了，你最近有什么新鲜事？",
    "没什么，就是平常的工作那些事",
    "我这边挺平静的",
    "哈，可以想象！",
    "你值得！",
    "唉，周一综合症，懂的都懂",
    "好主意！",
    "保重{other}，回头聊！",
    "拜拜{other}！下次再聊",
    "周末愉快！",
    "想你了，改天再聊",
    "我挺好的，谢谢关心！",
    "老样子，老样子哈哈",
    "太离谱了，快多说点",
    "哦不错，结果怎么样？",
    "好激动！！",
    "真为你高兴",
]
TOPIC_CHATTER = {
    "pet": ["有小动物在身边什么都变好了", "我一直想养一只自己的宠物"],
    "trip": ["我也好需要一个假期", "旅行总能让我满血复活"],
    "instrument": ["音乐真的很解压", "我小时候学过一点后来放弃了"],
    "race": ["跑步对我来说太难了，佩服", "我总说要开始慢跑"],
    "book": ["求推荐一本好书", "我好几个月没看书了哈哈"],
    "job": ["最近工作压力好大", "新工作又吓人又让人兴奋"],
    "class": ["我超喜欢尝试新爱好", "上课是认识新朋友的好办法"],
    "family": ["家人来看望最开心了", "我应该多给家里打电话"],
    "cooking": ["我做饭超难吃哈哈", "家里做的饭就是不一样"],
    "injury": ["天哪，希望你快点好起来！", "好好休息，别逞强"],
    "volunteer": ["你人真好", "我一直想找个地方做志愿者"],
    "concert": ["现场音乐的感觉最棒了", "我好久没去看演出了"],
    "gift": ["迟到的生日快乐！！", "这礼物太用心了"],
    "move": ["搬家真的好累", "新小区，新生活！"],
}
REACTIONS = ["真的吗？快跟我说说", "不会吧，太厉害了", "哇，怎么样？", "这可是大事！"]
FOLLOW_UPS = [
    "说真的这是我这个月最开心的事",
    "到现在还不敢相信",
    "晚点发照片给你",
    "挺折腾的但是很值",
]
OPENERS = ["唉，这周好累。", "那个，", "", "随便说个近况：", "哦嘿！"]
CLOSERS = ["", "。对了你最近怎么样？", "。你最近在忙什么？", "。生活真美好哈哈"]

CHINESE = Language(
    "zh-conversations",
    PEOPLE,
    EVENTS,
    SLOTS,
    GENRE,
    SMALL_TALK,
    TOPIC_CHATTER,
    REACTIONS,
    FOLLOW_UPS,
    OPENERS,
    CLOSERS,
    lambda day, who, text: f"[{day.year}年{day.month}月{day.day}日] {who}：{text}",
    lambda who, day: f"{who}在{day.year}年{day.month}月做了什么？",
    lambda who, day: f"{who}在{day.month}月做了什么？",
    lambda who: f"{who}上个月做了什么？",
    lambda who, did: f"{who}{did}之后的一个月里做了什么？",
)


def build_zh(seed: int = 13, conversations: int = 10, sessions: int = 24) -> Dataset:
    return build(seed, conversations, sessions, lang=CHINESE)


def build_zh_time(seed: int = 13, conversations: int = 10, sessions: int = 24) -> Dataset:
    """The same dialogues' month questions asked three ways, and the anchored ones
    (benchmarks/conversation_time.py)."""
    return build_time(seed, conversations, sessions, lang=CHINESE)


if __name__ == "__main__":
    show(build_zh())
