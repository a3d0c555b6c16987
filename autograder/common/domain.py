"""What each check draws, said under its exercise's prompt: the declared input domain.

A Spec draws its cases from axes (``oracle.draw``) and builds the caller's world from each.
What a right answer must handle is read from both, for every check of every lesson: the
dtypes of the inputs; whether the caller is inside ``torch.no_grad()`` or
``torch.inference_mode()``; tensors that are 0-d, empty or views of a larger tensor; the
same tensor passed twice; the layers the drawn models are built from; the loss functions
and optimizers passed in; the calls in one world that follow the first.
``make build`` writes them to ``autograder/lessons/expected/domain.json`` (``write``), and
``autograder.course`` says them under every exercise prompt of the learner notebooks, in
both languages (``said``). Whatever a check draws, the prompt says.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from autograder.common.i18n import Text

DTYPES = ("float16", "bfloat16", "float32", "float64", "int64", "complex64")  # in the order said
SEEDS = range(16)  # the hidden tests' and salted seeds are drawn in this range or alike
WORLD_SEEDS = range(8)  # the worlds built for what the cases' keys do not say (see facts)
SHAPES = ("0-d", "empty", "view")  # in the order said
_OUTER = {"no_grad": "torch.no_grad()", "inference_mode": "torch.inference_mode()"}
_AUTOCAST_DEFAULT = "autocast_default_float16"  # a case's "outer": a setting, not a context
# An exercise's heading (lesson 08 has parts: "第 1 部分"), never a lesson's title ("第 01 课").
HEADING = re.compile(r"#+ (?:Exercise |练习 |Part |第 (?=\d+ 部分))(\d+)\b")
FILE = Path(__file__).resolve().parent.parent / "lessons" / "expected" / "domain.json"
# said by what they hold (a course's own Module subclass too)
_CONTAINERS = ("Module", "Sequential", "ModuleList", "ModuleDict")


def specs(lesson: int) -> dict[int, type]:
    """The lesson's checks by exercise number (torch is imported here, when a build needs
    it, not when the course's commands start)."""
    from autograder.common.oracle import Spec

    module = importlib.import_module(f"autograder.lessons.lesson{lesson:02d}")
    found = {}
    for value in vars(module).values():
        number = getattr(value, "number", None)
        if isinstance(value, type) and issubclass(value, Spec) and isinstance(number, int):
            if value.__module__ == module.__name__ and number > 0:
                found[number] = value
    return found


def drawn(spec_type: type, seeds: Iterable[int] = SEEDS) -> dict[str, Any]:
    """Everything the check's cases draw: from the cases' keys over ``seeds``, and from the
    worlds the first ``WORLD_SEEDS`` build (on the CPU)."""
    import torch

    dtypes, outer, raises = set(), set(), False
    for seed in seeds:
        for case in spec_type(seed=seed).cases():
            raises |= bool(case.get("raises"))
            for key, value in case.items():
                if key.endswith("dtype") and key != "default_dtype" and value in DTYPES:
                    dtypes.add(value)
            mode = case.get("outer")
            if mode is True or case.get("grad_mode") is False:
                mode = "no_grad"
            if mode in _OUTER or mode == _AUTOCAST_DEFAULT:
                outer.add(mode)
            if case.get("default_dtype"):
                outer.add("default_dtype")
    seen = {"shapes": set(), "modules": set(), "losses": set(), "optimizers": set()}
    seen["aliased"] = seen["groups"] = seen["empty_list"] = False
    for seed in WORLD_SEEDS:
        spec = spec_type(seed=seed)
        for case in spec.cases():
            world = spec.build(case, torch.device("cpu"))
            _observe(world.args, seen, dtypes)
    return {
        "dtypes": [d for d in DTYPES if d in dtypes],
        "outer": [m for m in _OUTER if m in outer],
        "autocast_default": _AUTOCAST_DEFAULT in outer,
        "default_dtype": "default_dtype" in outer,  # oracle._callers_context
        "shapes": [s for s in SHAPES if s in seen["shapes"]],
        "aliased": seen["aliased"],
        "empty_list": seen["empty_list"],  # a list the caller passes may be empty ([[], []])
        "modules": sorted(seen["modules"]),
        "losses": sorted(seen["losses"]),
        "optimizers": sorted(seen["optimizers"]),
        "param_groups": seen["groups"],  # some optimizer holds several param_groups
        "raises": raises,  # some call raises partway (caller_states.RAISES)
        # the sequence in one world the contract adds (oracle.Spec._call_again)
        "again": bool(spec_type(seed=0).again_cases()),
        # what the caller does before the third call (Spec.between), in both languages
        "between": None if spec_type.between is None else vars(spec_type.between),
        "before_second": (
            None if spec_type.before_second is None else vars(spec_type.before_second)
        ),
    }


def _observe(args: tuple, seen: dict, dtypes: set) -> None:
    """What one world's arguments hold: tensors (shape, dtype, aliasing), layers, optimizers."""
    import torch

    storages = set()
    for value in _walk(args):
        if isinstance(value, torch.Tensor):
            dtype = str(value.dtype).removeprefix("torch.")
            if dtype in DTYPES and not isinstance(value, torch.nn.Parameter):
                dtypes.add(dtype)
            if value.dim() == 0:
                seen["shapes"].add("0-d")
            if value.numel() == 0:
                seen["shapes"].add("empty")
            if value._is_view() or not value.is_contiguous():
                seen["shapes"].add("view")
            if value.numel() and not isinstance(value, torch.nn.Parameter):
                storage = value.untyped_storage().data_ptr()
                seen["aliased"] |= storage in storages
                storages.add(storage)
        elif isinstance(value, torch.nn.Module):
            for module in value.modules():
                name = _torch_class(type(module), "torch.nn")
                if isinstance(module, torch.nn.modules.loss._Loss):
                    seen["losses"].add(name)
                elif name not in _CONTAINERS:
                    seen["modules"].add(name)
        elif isinstance(value, list) and not value:
            seen["empty_list"] = True
        elif isinstance(value, torch.optim.Optimizer):
            seen["optimizers"].add(_torch_class(type(value), "torch.optim"))
            seen["groups"] |= len(value.param_groups) > 1


def _walk(value: Any, depth: int = 0) -> Iterator[Any]:
    """The value and what its lists, tuples and dicts hold (a few levels deep)."""
    yield value
    if depth < 3 and isinstance(value, list | tuple):
        for item in value:
            yield from _walk(item, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for item in value.values():
            yield from _walk(item, depth + 1)


def _torch_class(cls: type, package: str) -> str | None:
    """The PyTorch class a course class stands for (a BatchNorm1d subclass is a BatchNorm1d)."""
    return next((c.__name__ for c in cls.__mro__ if c.__module__.startswith(package)), None)


def facts() -> dict[str, dict[str, Any]]:
    """{"lesson.exercise": what its check draws} for every lesson's checks."""
    found = {}
    for lesson in range(1, 100):
        try:
            checks = specs(lesson)
        except ModuleNotFoundError:
            break
        for number, spec_type in sorted(checks.items()):
            found[f"{lesson:02d}.{number}"] = drawn(spec_type)
    return found


def write(path: Path = FILE) -> Path:
    """Ship what every check draws (part of ``make build``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(facts(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    declared.cache_clear()
    return path


@functools.cache
def declared(path: Path = FILE) -> dict[str, dict[str, Any]]:
    """The shipped facts (empty before the first build)."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def of(spec_type: type) -> dict[str, Any]:
    """What the check draws, as shipped."""
    return shipped(int(spec_type.__module__.rpartition("lesson")[2]), spec_type.number)


def shipped(lesson: int, exercise: int) -> dict[str, Any]:
    """What exercise ``exercise`` of lesson ``lesson`` draws, as shipped ({} if nothing)."""
    return declared().get(f"{lesson:02d}.{exercise}", {})


def _listed(items: list[str], lang: str, word: str = "or", code: bool = True) -> str:
    """``items`` joined as a sentence says them: names as code, or plain words (``code``
    False, no spaces around the Chinese conjunction)."""
    names = [f"`{item}`" if code else item for item in items]
    if len(names) < 2:
        return "".join(names)
    if lang == "zh":
        gap = " " if code else ""
        return f"{'、'.join(names[:-1])}{gap}{'或' if word == 'or' else '和'}{gap}{names[-1]}"
    return f"{', '.join(names[:-1])} {word} {names[-1]}"


_SHAPE_WORDS = {
    "0-d": Text("0-d", "0 维的"),
    "empty": Text("empty", "空的"),
    "view": Text("views of a larger tensor", "更大张量的视图"),
}


def sentence(spec_type: type, lang: str) -> str | None:
    """The line under the prompt, in ``lang``; None where the check draws nothing it says."""
    return _sentence(of(spec_type), lang)


def _sentence(found: dict[str, Any], lang: str) -> str | None:
    """The line for what a check draws as shipped (``declared``)."""
    parts = []
    if found.get("dtypes"):
        what = Text("inputs of dtype {d}", "输入的 dtype 为 {d}")
        parts.append(what(lang).format(d=_listed(found["dtypes"], lang)))
    if found.get("shapes"):
        words = [_SHAPE_WORDS[s](lang) for s in found["shapes"]]
        what = Text("tensors that may be {s}", "张量可能是{s}")
        said_shapes = _listed(words, lang, code=False)
        if lang == "zh" and said_shapes[0].isascii():  # a space between 是 and a digit
            said_shapes = f" {said_shapes}"
        parts.append(what(lang).format(s=said_shapes))
    if found.get("empty_list"):
        parts.append(Text("lists that may be empty", "可能为空的列表")(lang))
    if found.get("aliased"):
        parts.append(Text("the same tensor passed twice", "同一个张量被传入两次")(lang))
    if found.get("modules"):
        what = Text("models built from {m}", "由 {m} 组成的模型")
        parts.append(what(lang).format(m=_listed(found["modules"], lang, "and")))
    if found.get("losses"):
        what = Text("loss functions {f}", "损失函数 {f}")
        parts.append(what(lang).format(f=_listed(found["losses"], lang)))
    if found.get("optimizers"):
        what = Text("optimizers {o}", "优化器 {o}")
        if found.get("param_groups"):
            what = Text(
                "optimizers {o}, some with their parameters in two `param_groups`",
                "优化器 {o}（有些把参数分成两个 `param_groups`）",
            )
        parts.append(what(lang).format(o=_listed(found["optimizers"], lang)))
    if found.get("outer"):
        where = [_OUTER[m] for m in found["outer"]]
        what = Text("some calls made from inside {m}", "部分调用在 {m} 之内进行")
        parts.append(what(lang).format(m=_listed(where, lang)))
    if found.get("default_dtype"):
        what = Text(
            "some calls made with the caller's default dtype set to float64 "
            "(`torch.set_default_dtype`)",
            "部分调用时调用者的默认 dtype 被设为 float64（`torch.set_default_dtype`）",
        )
        parts.append(what(lang))
    if found.get("autocast_default"):
        what = Text(
            "some calls made with autocast's default dtype for the device set to float16 "
            "(`torch.set_autocast_dtype`, as on a GPU)",
            "部分调用时该设备上 autocast 的默认 dtype 被设为 float16"
            "（`torch.set_autocast_dtype`，与 GPU 上一样）",
        )
        parts.append(what(lang))
    if found.get("raises"):
        what = Text(
            "some calls where the caller's model or function raises partway (that exception "
            "itself must reach the caller, not another one raised in its place, and whatever "
            "the function switched, such as modes, grad mode or hooks, be back as it was)",
            "部分调用中，调用者的模型或函数会在中途抛出异常（必须让这个异常本身传到调用者，"
            "而不是换成另一个异常；函数切换过的东西，如模式、梯度模式或钩子，也必须恢复原样）",
        )
        parts.append(what(lang))
    if found.get("again"):
        between, before = found.get("between"), found.get("before_second")
        parts.append(_again(between and Text(**between), before and Text(**before))(lang))
    if not parts:
        return None
    line = Text("*What the checks draw: {p}.*", "*检查会抽取：{p}。*")
    return line(lang).format(p=("; " if lang == "en" else "；").join(parts))


# What the caller does with the first result before calling again (oracle._used_by_caller),
# said in the prompt's line and in feedback.
USED_FIRST_RESULT = Text(
    "scaled it in place, or turned on its `requires_grad` if it came from `detach()`",
    "原地放大它，或在它是用 `detach()` 分离出的张量时打开它的 `requires_grad`",
)


def before_second_clause(before_second: Text | None) -> Text | str:
    """What the caller also does before the second call (``Spec.before_second``), as a
    clause of the sentences on the calls in one world: here and in feedback."""
    if before_second is None:
        return ""
    return Text(f", {before_second.en}", f"、{before_second.zh}")


def _again(between: Text | None, before_second: Text | None = None) -> Text:
    """The calls in one world a check makes after the first (``oracle.Spec._call_again``)."""
    also = before_second_clause(before_second)
    if between is None:
        return Text(
            "a second call with the same objects after the caller changed them in place, gave "
            "them back the `.grad` they arrived with{s} and used the first result ({used}), "
            "made with anomaly detection on and Python's garbage collector off",
            "调用者原地修改了自己的对象、把它们的 `.grad` 恢复成传入时的样子{s}、并使用了第一次"
            "调用的结果（{used}）之后，在异常检测开启、Python 垃圾回收关闭的状态下"
            "用同样的对象再调用一次",
        ).format(s=also, used=USED_FIRST_RESULT)
    return Text(
        "two more calls in one world: with the very same objects after the caller changed "
        "them in place, gave them back the `.grad` they arrived with{s} and used the first "
        "result ({used}), then after it also {b}, with anomaly detection on and Python's "
        "garbage collector off",
        "在同一环境中再调用两次：先在调用者原地修改对象、把它们的 `.grad` 恢复成传入时的样子{s}、"
        "并使用了第一次调用的结果（{used}）之后传入完全相同的对象，再在它又{b}之后、"
        "在异常检测开启、Python 垃圾回收关闭的状态下调用",
    ).format(s=also, used=USED_FIRST_RESULT, b=between)


def said(nb, lesson: int, lang: str):
    """The learner notebook with each exercise prompt followed by what its check draws.

    Read from the shipped facts alone: making a course (``course-grade create``,
    ``course-classroom setup``) imports neither torch nor the checks."""
    for cell in nb.cells:
        match = HEADING.match(cell.source) if cell.cell_type == "markdown" else None
        found = shipped(lesson, int(match.group(1))) if match else None
        line = _sentence(found, lang) if found else None
        if line and line not in cell.source:
            prompt, hint, rest = cell.source.partition("<details>")  # said before the hint
            cell.source = f"{prompt.rstrip()}\n\n{line}\n\n{hint}{rest}".rstrip()
    return nb


if __name__ == "__main__":
    print(f"wrote {write()}")
