"""Operators that embody the curriculum's misconceptions, lesson by lesson.

Each names the misconception IDs it stands for (``--operators`` lists them): dropping
``retain_grad()`` or ``.detach()``, swapping ``no_grad``/``enable_grad``/
``inference_mode``, ``eval()``/``train()``, dropping a mode restore, a
``handle.remove()``, a synchronisation, ``save_for_backward``, flipping
``use_reentrant``, misusing a GradScaler, and so on.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator

from .registry import (
    at,
    constant,
    flip,
    flip_first_argument,
    flip_keyword,
    keyword_is,
    one,
    receiver,
    whole,
)
from .sites import (
    Cell,
    Edit,
    Site,
    Variant,
    call_statement,
    delete,
    dotted,
    in_nested_function,
    method_call,
    parameters,
    parse_expr,
    positional,
    put,
    remove_item,
    replace,
    sites,
    snippet,
    splice,
    unparse,
    unwrap,
)

# Lesson 01: requires_grad and the graph ----------------------------------------------------

at(
    "drop-retain-grad",
    ("RG-1",),
    "a non-leaf's .grad is None unless retain_grad() was called before backward",
    lambda s: call_statement(s.node, {"retain_grad"}),
    one(delete),
)


def _requires_grad_flip(site: Site) -> list[Edit]:
    node = site.node
    if isinstance(node, ast.keyword):
        return [flip_keyword]

    def make(s: Site) -> ast.expr:
        flipped = flip(s.node.args[0]) if s.node.args else ast.Constant(False)
        return ast.Call(s.node.func, [flipped], [])

    return [replace(make)]


at(
    "flip-requires-grad",
    ("RG-2", "RG-6"),
    "freezing the wrong tensors, or a leaf that does not require grad",
    lambda s: (
        method_call(s.node, {"requires_grad_"})
        or (keyword_is(s, "requires_grad") and constant(s.node.value))
    ),
    _requires_grad_flip,
)
at(
    "drop-grad-reset",
    ("RG-4", "DT-6"),
    "gradients accumulate across backward() calls unless reset",
    lambda s: (
        call_statement(s.node, {"zero_grad"})
        or (
            isinstance(s.node, ast.Assign)
            and len(s.node.targets) == 1
            and isinstance(s.node.targets[0], ast.Attribute)
            and s.node.targets[0].attr == "grad"
            and constant(s.node.value, (type(None),))
        )
    ),
    one(delete),
)
at(
    "seed-shape",
    ("RG-5",),
    "a one-element seed is not the 0-d seed that backward() uses",
    lambda s: isinstance(s.node, ast.Call) and dotted(s.node.func) == "torch.ones_like",
    one(replace(lambda s: parse_expr("torch.tensor([1.0])"))),
)


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _reassigns_itself(site: Site) -> bool:
    node = site.node
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return False
    target, root = node.targets[0], _root(node.value)
    return (
        isinstance(target, ast.Name)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and isinstance(root, ast.Name)
        and root.id == target.id
    )


at(
    "drop-assignment",
    ("RG-7",),
    "x.to(...) and friends return a new tensor; the result must be kept",
    _reassigns_itself,
    one(replace(lambda s: ast.Expr(s.node.value))),
)

# Lesson 02: no_grad, inference_mode --------------------------------------------------------

_GRAD_MODES = ("torch.no_grad", "torch.enable_grad", "torch.inference_mode")


def _grad_mode_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and dotted(node.func) in (
        *_GRAD_MODES,
        "torch.set_grad_enabled",
    )


def _grad_mode_swaps(site: Site) -> list[Edit]:
    name = dotted(site.node.func)
    if name == "torch.set_grad_enabled":
        return [replace(flip_first_argument)]
    others = [other for other in _GRAD_MODES if other != name]
    edits = [replace(lambda s, o=other: parse_expr(f"{o}()")) for other in others]
    if site.node.args or site.node.keywords:  # inference_mode(False): the mode switched on
        edits.append(replace(lambda s: parse_expr(f"{name}()")))
    return edits


at(
    "grad-mode-swap",
    ("NG-2", "NG-4", "NG-5", "EV-2"),
    "no_grad, enable_grad and inference_mode each do something else",
    lambda s: _grad_mode_call(s.node),
    _grad_mode_swaps,
)


def _managed(match: Callable[[ast.AST], bool]) -> Callable[[Site], bool]:
    """A ``with`` that enters, or a function decorated by, a manager ``match`` accepts."""

    def found(site: Site) -> bool:
        node = site.node
        if isinstance(node, ast.With):
            return any(match(item.context_expr) for item in node.items)
        return isinstance(node, ast.FunctionDef) and any(map(match, node.decorator_list))

    return found


def _drop_managers(match: Callable[[ast.AST], bool]) -> Callable[[Site], list[Edit]]:
    def alternatives(site: Site) -> list[Edit]:
        node = site.node
        items = node.items if isinstance(node, ast.With) else node.decorator_list
        positions = [
            i for i, item in enumerate(items) if match(getattr(item, "context_expr", item))
        ]
        return [_drop_manager(i) for i in positions]

    return alternatives


def _drop_manager(position: int) -> Edit:
    def edit(site: Site) -> str:
        node = site.node
        if isinstance(node, ast.FunctionDef):
            before = snippet(node.decorator_list[position])
            del node.decorator_list[position]
            return f"drop @{before}"
        if len(node.items) == 1:
            return unwrap(site)
        before = snippet(node.items[position].context_expr)
        del node.items[position]
        return f"drop {before} from the with"

    return edit


at(
    "drop-grad-mode",
    ("NG-3", "EV-6"),
    "without the grad-mode manager a graph is recorded (or not) where it should not be",
    _managed(_grad_mode_call),
    _drop_managers(_grad_mode_call),
)
at(
    "drop-item",
    ("NG-3",),
    "a loss kept as a tensor keeps its graph alive",
    lambda s: method_call(s.node, {"item"}) and not s.node.args,
    one(replace(receiver)),
)

# Lesson 03: eval() vs no_grad ---------------------------------------------------------------


def _mode_swap(site: Site) -> list[Edit]:
    call = site.node
    if call.func.attr == "eval":
        return [replace(lambda s: ast.Call(ast.Attribute(receiver(s), "train"), [], []))]
    if not call.args:
        return [replace(lambda s: ast.Call(ast.Attribute(receiver(s), "eval"), [], []))]
    return [replace(flip_first_argument)]


at(
    "eval-train-swap",
    ("EV-1", "EV-2"),
    "train() and eval() switch Dropout and BatchNorm the other way",
    lambda s: method_call(s.node, {"eval", "train"}) and len(s.node.args) <= 1,
    _mode_swap,
)
at(
    "drop-mode-restore",
    ("EV-4",),
    "the caller's mode must be put back after evaluation",
    lambda s: (
        (call_statement(s.node, {"train"}) and bool(s.node.value.args))
        or (
            isinstance(s.node, ast.Assign)
            and any(isinstance(t, ast.Attribute) and t.attr == "training" for t in s.node.targets)
        )
    ),
    one(delete),
)


def _no_finally(site: Site) -> list[Edit]:
    def dropped(s: Site) -> str:
        node = s.node
        if node.handlers:
            node.finalbody = []
        else:
            splice(s, [*node.body, *node.orelse])
        return "try/finally → the finally block left out"

    def sequential(s: Site) -> str:
        node = s.node
        after = node.finalbody
        if node.handlers:
            node.finalbody = []
            splice(s, [node, *after])
        else:
            splice(s, [*node.body, *node.orelse, *after])
        return "try/finally → the finally block run only when nothing raised"

    return [dropped, sequential]


at(
    "no-finally",
    ("EV-4", "HK-3"),
    "a restore or a handle.remove() skipped when the model raises",
    lambda s: isinstance(s.node, ast.Try) and bool(s.node.finalbody),
    _no_finally,
)


def _late_eval(site: Site) -> bool:
    place = site.statement_list()
    return (
        call_statement(site.node, {"eval"}) and place is not None and place[1] + 1 < len(place[0])
    )


def _move_down(site: Site) -> str:
    body, index = site.statement_list()
    body[index], body[index + 1] = body[index + 1], body[index]
    return f"{snippet(site.node)} moved after {snippet(body[index])}"


at(
    "late-eval",
    ("EV-5",),
    "eval() called after the work it should have switched",
    _late_eval,
    one(_move_down),
)
at(
    "one-minus",
    ("EV-3",),
    "p read as the keep probability: 1 - p becomes p",
    lambda s: (
        isinstance(s.node, ast.BinOp)
        and isinstance(s.node.op, ast.Sub)
        and constant(s.node.left, (int, float))
        and s.node.left.value == 1
    ),
    one(replace(lambda s: s.node.right)),
)

# Lesson 04: detach ------------------------------------------------------------------------------

at(
    "drop-detach",
    ("DT-4", "HK-1"),
    "without detach the graph (and the generator) stays attached",
    lambda s: method_call(s.node, {"detach", "detach_"}) and not s.node.args,
    one(replace(receiver)),
)
at(
    "detach-to-data",
    ("DT-2",),
    ".data hides in-place changes from autograd",
    lambda s: method_call(s.node, {"detach"}) and not s.node.args,
    one(replace(lambda s: ast.Attribute(receiver(s), "data"))),
)


def _calls_a_parameter(site: Site) -> bool:
    node = site.node
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return False
    parent = site.parent()[0]
    if isinstance(parent, ast.Attribute) and parent.attr in ("detach", "detach_"):
        return False
    return any(node.func.id in parameters(f) for f in site.functions())


at(
    "insert-detach",
    ("DT-5",),
    "a detach where the gradient must flow (the generator step)",
    _calls_a_parameter,
    one(replace(lambda s: ast.Call(ast.Attribute(s.node, "detach"), [], []))),
)


def _copies(site: Site) -> bool:
    if method_call(site.node, {"clone"}) and not site.node.args:
        return True
    return keyword_is(site, "copy") and constant(site.node.value) and site.node.value.value


def _drop_copy(site: Site) -> list[Edit]:
    if isinstance(site.node, ast.keyword):
        return [remove_item]
    return [replace(receiver)]


at(
    "drop-clone",
    ("DT-1", "HK-2"),
    "detach() and .cpu() share storage: without a copy, later changes show through",
    _copies,
    _drop_copy,
)

# Lesson 05: hooks ---------------------------------------------------------------------------

_HOOKS = frozenset(
    {
        "register_forward_hook",
        "register_forward_pre_hook",
        "register_full_backward_hook",
        "register_full_backward_pre_hook",
    }
)
at(
    "drop-handle-remove",
    ("HK-3",),
    "hooks stay until removed",
    lambda s: call_statement(s.node, {"remove"}) and not s.node.value.args,
    one(delete),
)


def _wrong_module(site: Site) -> ast.expr:
    outer = site.functions()[-1]
    first = positional(outer)[0] if positional(outer) else None
    hooked = receiver(site)
    if isinstance(hooked, ast.Name) and hooked.id == first:
        return parse_expr(f"list({first}.modules())[-1]")
    return ast.Name(first, ast.Load())


def _hooks_a_module(site: Site) -> bool:
    return method_call(site.node, _HOOKS) and bool(positional(site.functions()[-1]))


def _rehook(site: Site) -> str:
    before = snippet(site.node.func.value)
    site.node.func.value = _wrong_module(site)
    return f"hook on {before} → on {snippet(site.node.func.value)}"


at(
    "hook-wrong-module",
    ("HK-1", "HK-5"),
    "the hook registered on the whole model (or its last leaf) instead of the layer",
    _hooks_a_module,
    one(_rehook),
)

_INPLACE = {ast.Mult: "mul_", ast.Add: "add_", ast.Sub: "sub_", ast.Div: "div_"}


def _returns_changed_argument(site: Site) -> bool:
    function, node = in_nested_function(site), site.node
    return (
        function is not None
        and isinstance(node, ast.Return)
        and isinstance(node.value, ast.BinOp)
        and type(node.value.op) in _INPLACE
        and isinstance(node.value.left, ast.Name)
        and node.value.left.id in parameters(function)
    )


def _in_place_return(site: Site) -> ast.stmt:
    value = site.node.value
    method = ast.Attribute(value.left, _INPLACE[type(value.op)])
    return ast.Return(ast.Call(method, [value.right], []))


at(
    "hook-arg-inplace",
    ("HK-5",),
    "a hook that changes its argument in place instead of returning a new value",
    _returns_changed_argument,
    one(replace(_in_place_return)),
)
at(
    "drop-hook-return",
    ("HK-4", "HK-5"),
    "a hook's return value replaces the gradient or output; without it nothing changes",
    lambda s: (
        in_nested_function(s) is not None
        and isinstance(s.node, ast.Return)
        and s.node.value is not None
    ),
    one(replace(lambda s: ast.Expr(s.node.value))),
)

# Lesson 06: CUDA is asynchronous --------------------------------------------------------------

at(
    "drop-sync",
    ("CS-1", "CS-2", "CS-3", "CS-7"),
    "queued work is not finished (or not ordered) without the synchronisation",
    lambda s: call_statement(s.node, {"synchronize", "wait_stream", "record_stream", "wait_event"}),
    one(delete),
)
at(
    "flip-non-blocking",
    ("CS-3", "CS-6"),
    "a non-blocking copy must be waited for; a blocking one costs the overlap",
    lambda s: keyword_is(s, "non_blocking") and constant(s.node.value),
    one(flip_keyword),
)

at(
    "drop-warmup",
    ("CS-4",),
    "the first (cold) call timed as if it were representative",
    lambda s: isinstance(s.node, ast.For) and getattr(s.node.target, "id", None) == "_",
    one(delete),
)

# Lesson 07: custom autograd Functions --------------------------------------------------------


def _input_grad_index(site: Site) -> bool:
    node = site.node
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "needs_input_grad"
        and constant(node.slice, (int,))
    )


def _other_index(site: Site) -> ast.expr:
    index = site.node.slice.value
    other = 1 - index if index in (0, 1) else index - 1
    return ast.Subscript(site.node.value, ast.Constant(other), ast.Load())


at(
    "needs-input-grad-index",
    ("CF-2",),
    "needs_input_grad has one flag per input of forward, in order",
    _input_grad_index,
    one(replace(_other_index)),
)
at(
    "drop-save-for-backward",
    ("CF-4",),
    "backward needs what forward saved",
    lambda s: call_statement(s.node, {"save_for_backward"}),
    one(delete),
)


@whole("save-as-attribute", ("CF-4",), "tensors kept on ctx escape autograd's checks")
def _save_as_attribute(tree: ast.Module, cell: Cell) -> Iterator[Variant]:
    copied = copy.deepcopy(tree)
    saves = sites(copied, lambda s: call_statement(s.node, {"save_for_backward"}))
    if not saves:
        return
    for site in saves:
        call = site.node.value
        target = ast.Attribute(call.func.value, "_saved", ast.Store())
        put(site, ast.Assign([target], ast.Tuple(call.args, ast.Load())))
    for node in ast.walk(copied):
        if isinstance(node, ast.Attribute) and node.attr == "saved_tensors":
            node.attr = "_saved"
    change = "ctx.save_for_backward(...) → ctx._saved = (...)"
    yield Variant("save-as-attribute", change, unparse(copied), saves[0].node.lineno)


def _in_backward(site: Site) -> bool:
    functions = site.functions()
    return (
        bool(functions)
        and functions[0].name == "backward"
        and isinstance(site.node, ast.Return)
        and site.node.value is not None
    )


def _arity(site: Site) -> ast.stmt:
    value = site.node.value
    if isinstance(value, ast.Tuple) and len(value.elts) >= 2:
        kept = value.elts[:-1]
        return ast.Return(kept[0] if len(kept) == 1 else ast.Tuple(kept, ast.Load()))
    return ast.Return(ast.Tuple([value, ast.Constant(None)], ast.Load()))


at(
    "backward-arity",
    ("CF-2",),
    "backward returns one gradient per input of forward, not per output",
    _in_backward,
    one(replace(_arity)),
)
at(
    "drop-staticmethod",
    ("CF-1",),
    "the legacy, non-static Function style",
    lambda s: (
        isinstance(s.node, ast.Name)
        and s.node.id == "staticmethod"
        and isinstance(s.parent()[0], ast.FunctionDef)
        and s.parent()[1] == "decorator_list"
    ),
    one(remove_item),
)
at(
    "drop-vmap-rule",
    ("CF-5",),
    "torch.func transforms need the Function's vmap rule",
    lambda s: (
        isinstance(s.node, ast.Assign)
        and any(getattr(t, "id", None) == "generate_vmap_rule" for t in s.node.targets)
    ),
    one(delete),
)

_DTYPES = {
    "torch.float64": "torch.float32",
    "torch.float32": "torch.int64",
    "torch.bfloat16": "torch.float16",
    "torch.float16": "torch.bfloat16",
}
_CASTS = {"double": "float", "float": "double"}


def _dtype_site(site: Site) -> bool:
    if isinstance(site.node, ast.Attribute) and dotted(site.node) in _DTYPES:
        return True
    return method_call(site.node, set(_CASTS)) and not site.node.args


def _other_dtype(site: Site) -> ast.expr:
    if isinstance(site.node, ast.Attribute):
        return parse_expr(_DTYPES[dotted(site.node)])
    return ast.Call(ast.Attribute(receiver(site), _CASTS[site.node.func.attr]), [], [])


at(
    "dtype-swap",
    ("CF-3", "RG-3", "SC-2", "SC-3"),
    "the wrong precision: gradcheck in float32, an integer leaf, float16 for bfloat16",
    _dtype_site,
    one(replace(_other_dtype)),
)

# Lesson 09: autograd at scale -----------------------------------------------------------------


def _reentrant(site: Site) -> list[Edit]:
    return [flip_keyword, remove_item]


at(
    "flip-use-reentrant",
    ("SC-1",),
    "the reentrant checkpoint (or the default, which warns) behaves differently",
    lambda s: keyword_is(s, "use_reentrant"),
    _reentrant,
)


def _checkpoint_call(site: Site) -> bool:
    node = site.node
    name = dotted(node.func) if isinstance(node, ast.Call) else None
    return bool(name) and name.split(".")[-1] == "checkpoint" and bool(node.args)


at(
    "drop-checkpoint",
    ("SC-1",),
    "the block run without checkpointing keeps its activations",
    _checkpoint_call,
    one(replace(lambda s: ast.Call(s.node.args[0], s.node.args[1:], []))),
)


def _autocast_call(node: ast.AST) -> bool:
    name = dotted(node.func) if isinstance(node, ast.Call) else None
    return bool(name) and name.split(".")[-1] == "autocast"


at(
    "drop-autocast",
    ("SC-2",),
    "the forward run outside autocast keeps full precision",
    _managed(_autocast_call),
    _drop_managers(_autocast_call),
)


def _scaler_site(site: Site) -> bool:
    return call_statement(site.node, {"unscale_", "update"}) or (
        method_call(site.node, {"scale"}) and len(site.node.args) == 1
    )


at(
    "drop-scaler",
    ("SC-3",),
    "GradScaler misuse: gradients clipped while scaled, or the scale never updated",
    _scaler_site,
    lambda s: [delete] if isinstance(s.node, ast.Expr) else [replace(lambda t: t.node.args[0])],
)
