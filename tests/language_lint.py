"""Find English that a Chinese learner would read in a code cell: comments and printed labels.

Identifiers stay in English in both languages (``net.eval()  # 将模型设置为评估模式``), so a
word counts as English prose only when it is not code: not a name used in the notebook's
code, not an API-looking token (dots, underscores, brackets, digits), not a single letter,
and not on the short allow-list of names and units the Chinese text keeps in English.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize

CJK = re.compile(r"[\u4e00-\u9fff]")
ALLOWED = {
    *keyword.kwlist,
    "copy",  # the keyword argument of .to()
    "offset",  # matplotlib's textcoords="offset points"
    "points",
    "File",  # a traceback line's start, File "<string>", matched in lesson 06
    "True",
    "False",
    "None",
    "PyTorch",
    "CPU",
    "GPU",
    "CUDA",
    "MLP",
    "SGD",
    "Adam",
    "Dropout",
    "BatchNorm",
    "RuntimeError",
    "ValueError",
    "Tensor",
    "B",
    "KB",
    "MB",
    "GB",
    "µs",
    "ms",
}
# Calls whose string arguments a learner reads: printing and figure text.
LABEL_CALLS = {"print", "set_xlabel", "set_ylabel", "set_title", "suptitle", "text", "annotate"}
# A run of characters between spaces, CJK text and full-width punctuation.
_TOKEN = re.compile(r"[^\s\u3000-\u303f\u4e00-\u9fff\uff00-\uffef“”‘’—…·]+")
_CODE_CHARS = re.compile(r"[._()\[\]{}=/*+<>0-9@`]")
_STRIP = ".,:;!?\"'|-~"
_ABBREVIATIONS = {"e.g", "i.e", "etc", "vs"}
_QUOTED = re.compile(r"`[^`]*`|\"[^\"]*\"|'[^']*'")


def english_words(text: str, identifiers: set[str], quoted_is_code: bool = False) -> list[str]:
    """The words of ``text`` that are English prose rather than code, names or units."""
    if quoted_is_code:
        text = _QUOTED.sub(" ", text)
    found = []
    for raw in _TOKEN.findall(text):
        word = raw.strip(_STRIP)
        if word.startswith("(") and word.endswith(")"):  # "(leaky)" is a word, "f()" is code
            word = word[1:-1].strip(_STRIP)
        if word.lower() in _ABBREVIATIONS:
            found.append(word)
            continue
        if len(word) < 2 or not re.search("[A-Za-z]", word) or _CODE_CHARS.search(word):
            continue
        if word in ALLOWED or word in identifiers:
            continue
        found.append(word)
    return found


def _strings(node: ast.AST) -> list[str]:
    """String constants inside an expression, f-string literal parts included."""
    return [
        n.value
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.strip()
    ]


def _call_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def readable_strings(tree: ast.AST) -> list[str]:
    """Strings a learner reads: arguments of print and figure text, ``label=``, and any
    string with a space in it (a sentence, whatever it is later used for)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if _call_name(node) in LABEL_CALLS:
                for arg in node.args:
                    found += _strings(arg)
            for kw in node.keywords:
                if kw.arg == "label":
                    found += _strings(kw.value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and " " in node.value:
            found.append(node.value)
    return list(dict.fromkeys(found))


def comments(source: str) -> list[str]:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [t.string.lstrip("#").strip() for t in tokens if t.type == tokenize.COMMENT]


def identifiers(sources: list[str]) -> set[str]:
    """Every name and attribute used in the code, which Chinese text may cite as is."""
    names = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.FunctionDef | ast.ClassDef):
                names.add(node.name)
    return names


def english_in_code(source: str, known: set[str]) -> list[str]:
    """Describe each comment or readable string of a code cell that holds English prose.

    A comment without any Chinese must not hold a non-code word at all (identifiers included:
    ``# full batch`` is English even where ``full`` and ``batch`` are variables).
    """
    problems = []
    for comment in comments(source):
        cited = set() if not CJK.search(comment) else known
        words = english_words(comment, cited, quoted_is_code=True)
        if words:
            problems.append(f"comment {comment!r}: {words}")
    for text in readable_strings(ast.parse(source)):
        words = english_words(text, known)
        if words:
            problems.append(f"string {text!r}: {words}")
    return problems
