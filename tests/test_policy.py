"""The learner-code policy is an allow-list: every way out is refused with its line, every
answer the course knows to be right is accepted, and reading a notebook is linear and bounded.

Fast unit tests on ``autograder.grader.pipeline.policy`` and ``verdicts.read_notebook``; the same
routes are graded end to end through `course-grade` in test_red_team.py.
"""

from __future__ import annotations

import builtins
import functools
import glob
import importlib
import re
import time
from pathlib import Path

import nbformat
import pytest
import torch

from autograder.grader.pipeline import policy, submission, verdicts

REPO = Path(__file__).resolve().parents[1]

# The instructor's setup cell as a learner notebook has it: the course's own code is bound
# to names here (autograder, graph, saved_bytes, the lesson's checks).
SETUP = (
    "import torch\n\nimport autograder\nfrom autograder.kernel import graph\n"
    "from autograder.kernel.measure import saved_bytes\nfrom autograder.lessons import lesson01\n"
    "from autograder.kernel.datasets import Digits\nimport matplotlib.pyplot as plt\n\n"
    'DEVICE = autograder.setup("en")\ndigits = Digits()\nfig = plt.figure()\nchecks = lesson01'
)

# name -> (learner cell, the line the violation must name, fragment of its description).
# Issue 23's nine definition-time routes first, then the rules of the list, then more.
ROUTES = {
    "a_module_the_checkpoint_module_holds": (
        "import torch.utils.checkpoint as cp\n\nw = cp.warnings",
        3,
        "torch.utils.checkpoint.warnings is not on the list",
    ),
    "getattr_constant_dunder": (
        'def f(x, s=getattr(print, "__self__")):\n    return x',
        1,
        "getattr",
    ),
    "alias_of_the_instructors_import": (
        "def f(x, a=autograder):\n    return x",
        1,
        "autograder",
    ),
    "operator_attrgetter": (
        'import operator\n\ndef f(x, s=operator.attrgetter("__self__")(print)):\n    return x',
        3,
        "attribute names other than public names",
    ),
    "string_formatter_get_field": (
        'import string\n\nF = string.Formatter().get_field("0.__self__", [print], {})',
        1,
        "import string",
    ),
    "functools_reduce_getattr": (
        "import functools\n\n"
        'def f(x, b=functools.reduce(getattr, ["__self__"], print)):\n    return x',
        3,
        "getattr",
    ),
    "match_keyword_pattern": (
        "match print:\n    case object(__self__=b):\n        pass",
        2,
        "__self__",
    ),
    "numpy_ctypeslib": (
        "import numpy as np\n\ndef f(x, c=np.ctypeslib.ctypes):\n    return x",
        3,
        "ctypes",
    ),
    "type_alias_three_arguments": (
        'T = type\nX = T("X", (), {"f": print})',
        1,
        "type",
    ),
    "map_getattr": (
        'found = list(map(getattr, [print], ["__self__"]))',
        1,
        "getattr",
    ),
    # rules of the list
    "import_outside_the_list": ("import sys", 1, "import sys"),
    "from_import_outside_the_list": ("from torch.serialization import load", 1, "torch."),
    "torch_private_module": ("from torch import _C", 1, "_C"),
    "restricted_module_member": ("import copy\n\nt = copy.types", 3, "copy.types"),
    "module_reached_through_a_module": ("import statistics\n\ns = statistics.sys", 3, "sys"),
    "torch_holds_os": ("x = torch.os.getcwd()", 1, "os"),
    "dunder_attribute": ("x = print.__self__", 1, "__self__"),
    "private_attribute": ("def f(m):\n    return m._modules", 2, "_modules"),
    "dunder_string": ('key = "__self__"', 1, "__self__"),
    "dunder_bytes": ('key = b"__globals__"', 1, "__globals__"),
    "format_field": ('s = "{0.__class__}".format(1)', 1, "__class__"),
    "format_field_private": ('s = "{0._modules}".format(1)', 1, "_modules"),
    "hasattr": ('ok = hasattr(print, "__self__")', 1, "hasattr"),
    "setattr": ('setattr(torch, "x", 1)', 1, "changes torch.x"),
    "delattr": ('delattr(torch, "x")', 1, "delattr"),
    "vars": ("v = vars(torch)", 1, "vars"),
    "globals": ('g = globals()["autograder"]', 1, "globals"),
    "exec": ("exec('1')", 1, "exec"),
    "eval": ("x = eval('1')", 1, "eval"),
    "compile": ("c = compile('1', 'x', 'eval')", 1, "compile"),
    "open": ("f = open('/etc/passwd')", 1, "open"),
    "dunder_import": ("os = __import__('os')", 1, "__import__"),
    "builtins_dunder": ("b = __builtins__", 1, "__builtins__"),
    "ipython_history": ("print(In)", 1, "In"),
    "ipython_history_private": ("print(_ih)", 1, "_ih"),
    "ipython_numbered_input": ("print(_i3)", 1, "_i3"),
    "ipython_shell": ("ip = get_ipython()", 1, "get_ipython"),
    "magic": ("%time x = 1", 1, "get_ipython"),
    "course_module_name": ("def f(x):\n    return lesson01", 2, "lesson01"),
    "course_function_name": ("n = saved_bytes", 1, "saved_bytes"),
    "course_name_rebound": ("lesson01 = None", 1, "lesson01"),
    "alias_of_a_course_module": ("c = checks", 1, "checks"),
    "what_unlisted_code_returned": ("c = fig.canvas", 1, "fig"),
    "global_course_name": ("def f():\n    global lesson01\n    lesson01 = 1", 3, "lesson01"),
    "lambda_default": ("def f(x, g=(lambda: print)()):\n    return x", 1, "default value"),
    "call_default": ("def f(x, y=print(1)):\n    return x", 1, "default value"),
    "walrus_default": ("def f(x, y=(z := 1)):\n    return x", 1, "default value"),
    "walrus_decorator": ("@(d := staticmethod)\ndef f(x):\n    return x", 1, "decorator"),
    "any_decorator": ("@print\ndef f(x):\n    return x", 1, "decorator"),
    "decorator_call_with_a_call": (
        "@torch.set_grad_enabled(print(1))\ndef f(x):\n    return x",
        1,
        "decorator",
    ),
    "unlisted_decorator": (
        "import functools\n\n@functools.singledispatch\ndef f(x):\n    return x",
        3,
        "singledispatch",
    ),
    "annotation_call": ("def f(x: print(1)):\n    return x", 1, "annotation"),
    "return_annotation_call": ("def f(x) -> print(1):\n    return x", 1, "annotation"),
    "class_body_call": ("class A:\n    x = print(1)", 2, "class body"),
    "class_body_loop": ("class A:\n    for i in range(3):\n        pass", 2, "class body"),
    "class_keyword": ("class A(metaclass=print):\n    pass", 1, "metaclass"),
    "class_body_builtin": ("class A:\n    getattr = getattr", 2, "getattr"),
    "class_decorator": ("@staticmethod\nclass A:\n    pass", 1, "class decorator"),
    "base_from_a_call": ("class A(print(object)):\n    pass", 1, "base class"),
    "dunder_method": ("class A:\n    def __getattr__(self, n):\n        return n", 2, "__getattr"),
    "torch_function": (
        "class A(torch.Tensor):\n    def __torch_function__(self, *a):\n        return True",
        2,
        "__torch_function__",
    ),
    "patch_torch": ("torch.allclose = lambda *a, **k: True", 1, "changes torch.allclose"),
    "class_as_value": ("T = torch.Tensor\nT.clone = print", 1, "torch.Tensor used as a value"),
    "class_as_argument": ("def f(c):\n    c.x = 1\n\nf(torch.Tensor)", 4, "torch.Tensor"),
    "module_class_as_value": ("M = torch.nn.Module", 1, "torch.nn.Module used as a value"),
    "parameter_class_as_value": ("P = [torch.nn.Parameter]", 1, "Parameter used as a value"),
    "module_as_value": ("m = [torch][0]", 1, "module torch used as a value"),
    "module_in_lambda": ("g = lambda: torch", 1, "module torch used as a value"),
    "class_mro": ("bases = torch.Tensor.mro()", 1, "mro"),
    "generator_frame": (
        "def g():\n    yield 1\n\nf = g().gi_frame.f_globals",
        4,
        "gi_frame",
    ),
    "torch_ops": ("x = torch.ops.aten.add", 1, "ops"),
    "torch_classes": ("x = torch.classes", 1, "classes"),
    "torch_load": ("x = torch.load('w.pt')", 1, "load"),
    "numpy_load": ("import numpy as np\n\nx = np.load('w.npy')", 3, "load"),
    "tensor_from_file": ("x = torch.from_file('f')", 1, "from_file"),
    "array_ctypes": ("import numpy as np\n\np = np.zeros(1).ctypes", 3, "ctypes"),
    "torch_hub": ("x = torch.hub", 1, "hub"),
    "torch_compile": ("f = torch.compile(print)", 1, "compile"),
    "cuda_allocator": ("torch.cuda.caching_allocator_delete(0)", 1, "caching_allocator"),
    "file_writer": ("w = torch.PyTorchFileWriter('x')", 1, "PyTorchFileWriter"),
    "dispatch_mode_reexport": (
        "class M(torch.autograd.graph.TorchDispatchMode):\n    pass",
        1,
        "TorchDispatchMode",
    ),
    "torch_library": ("import torch.library", 1, "torch.library"),
    "multiprocessing": ("import torch.multiprocessing", 1, "torch.multiprocessing"),
    "keyword_dunder": ("d = dict(__class__=1)", 1, "__class__"),
    "isinstance_rebound": (
        "def isinstance(a, b):\n    b.clone = print\n\nisinstance(1, torch.Tensor)",
        1,
        "rebinds isinstance",
    ),
    "isinstance_parameter": (
        "def f(isinstance):\n    return isinstance(1, torch.Tensor)",
        1,
        "rebinds isinstance",
    ),
    "imported_name_rebound": (
        "from contextlib import contextmanager\n\ncontextmanager = print",
        3,
        "rebinds the imported contextmanager",
    ),
    "relative_import": ("from . import x", 1, "from ."),
    "star_import": ("from torch import *", 1, "import *"),
    "dunder_name_bound": ("__x__ = 1", 1, "__x__"),
    "private_global_not_defined": ("y = _secret", 1, "_secret"),
    "staticmethod_as_value": ("s = staticmethod(print)", 1, "staticmethod"),
    "breakpoint": ("breakpoint()", 1, "breakpoint"),
    "traceback_of_an_error": (
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    t = e.__traceback__",
        4,
        "__traceback__",
    ),
    # issue 34: a walk that cannot look a step up is refused, and what it reaches is judged
    "cudnn_walk_to_collections_abc": (
        "abcs = torch.backends.cudnn.torch.nn.modules.container.container_abcs",
        1,
        "module collections.abc",
    ),
    "cudnn_attrgetter_sys_modules": (
        "op = torch.backends.cudnn.torch.nn.modules.container.operator\n"
        'modules = op.attrgetter("sys.modules")(torch.backends.cudnn)',
        1,
        "container.operator used as a value",
    ),
    "attrgetter_sys_modules_called": (
        "g = torch.nn.modules.container.operator.attrgetter\n"
        'modules = torch.nn.modules.container.operator.attrgetter("sys.modules")(torch)',
        2,
        "attribute names other than public names",
    ),
    "cudnn_alias_walk": (
        "import torch.backends.cudnn as cudnn\n\n"
        "abcs = cudnn.torch.nn.modules.container.container_abcs",
        3,
        "module collections.abc",
    ),
    "cudnn_holds_sys": ("from torch.backends import cudnn\n\ns = cudnn.sys", 3, ".sys"),
    "cudnn_wrapped_module": ("from torch.backends import cudnn\n\nm = cudnn.m", 3, "module"),
    "cudnn_torch_as_value": (
        "T = torch.backends.cudnn.torch\nT.equal = print",
        1,
        "module torch.backends.cudnn.torch used as a value",
    ),
    "equal_patched_through_cudnn": (
        "torch.backends.cudnn.torch.equal = lambda *a, **k: True",
        1,
        "changes torch.backends.cudnn.torch.equal",
    ),
    "tensor_patched_through_cudnn": (
        "torch.backends.cudnn.torch.Tensor.clone = print",
        1,
        "changes torch.backends.cudnn.torch.Tensor.clone",
    ),
    "step_past_a_property": ("b = torch.backends.cudnn.benchmark.real", 1, "cannot look it up"),
    "name_made_on_the_fly": (
        "t = torch.backends.cuda.matmul.allow_tf32",
        1,
        "cannot look it up",
    ),
    "name_that_does_not_exist": ("x = torch.no_such_name", 1, "cannot look it up"),
    "serialization_pickle": ("f = torch.serialization.pickle.loads", 1, "serialization"),
    "pickle_module_reexported": ("import numpy as np\n\np = np.lib.format.pickle", 3, "numpy.lib"),
    "copyreg_module": ("c = torch.utils.copyreg", 1, "module copyreg"),
    "fractions_class_reexported": (
        "import statistics\n\nF = statistics.Fraction",
        3,
        "from `fractions",
    ),
    "typing_function_reexported": ("c = torch.autograd.cast", 1, "from `typing"),
    "logger_reexported": ("log = torch.autograd.graph.log", 1, "from `logging"),
    "jit_internal_reexported": (
        "d = torch.nn.functional.boolean_dispatch",
        1,
        "from `torch._jit_internal",
    ),
    "op_packet": ("f = torch.quantized_lstm", 1, "from `torch._ops"),
    "data_pipes_decode_pickle": (
        "class D(torch.utils.data.IterDataPipe):\n    pass",
        1,
        "torch.utils.data.datapipes",
    ),
    "equal_as_value": ("eq = torch.equal", 1, "function torch.equal used as a value"),
    "allclose_passed": (
        "def f(g):\n    g.x = 1\n\nf(torch.allclose)",
        4,
        "function torch.allclose used as a value",
    ),
    "optimizer_class_as_value": (
        "S = torch.optim.SGD\nS.step = print",
        1,
        "class torch.optim.SGD used as a value",
    ),
    "optimizer_imported_as_value": (
        "from torch.optim import Adam\n\nA = [Adam]",
        3,
        "class torch.optim.Adam used as a value",
    ),
    "optimizer_class_as_default": (
        "def make(opt=torch.optim.SGD):\n    return opt",
        1,
        "class torch.optim.SGD used as a value",
    ),
    "optimizer_class_patched": (
        "from torch.optim import SGD\n\nSGD.step = print",
        3,
        "changes SGD.step",
    ),
    "wraps_copies_attributes_named_by_strings": (
        "import functools\n\ndef g():\n    pass\n\n"
        'h = functools.wraps(print, assigned=("_x",), updated=())(g)',
        6,
        "names of attributes to copy",
    ),
    "wraps_decorator_with_names": (
        'from functools import wraps\n\nNAMES = ("_x",)\n\ndef outer(f):\n'
        "    @wraps(f, NAMES)\n    def inner():\n        return f()\n    return inner",
        6,
        "names of attributes to copy",
    ),
    "wraps_as_value": (
        "import functools\n\nw = functools.wraps",
        3,
        "function functools.wraps used as a value",
    ),
    # bad input costs the cell, not the notebook
    "forty_thousand_terms": ("x = " + "1 + " * 40_000 + "1", 1, "nested too deeply"),
    "deep_nesting": ("x = " + "-" * 150 + "1", 1, "nested too deeply"),
    "overlong_cell": ("x = 1\n" * 50_000, 1, "too long to read"),
}

# Forms a learner writes that must pass: module-level objects and aliases (issue 22),
# locals that shadow builtins, the decorators and dunders the lessons use.
ACCEPTED = {
    "custom_function_alias": (
        "class SiLU(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        ctx.save_for_backward(x)\n        return x * torch.sigmoid(x)\n\n"
        "silu = SiLU.apply"
    ),
    "module_level_objects": (
        'import torch.nn as nn\n\ncriterion = nn.CrossEntropyLoss()\nCPU = torch.device("cpu")\n'
        "ONE = 2 - 1.0\nproduct_grads = print"
    ),
    "instructor_device": "def f(n):\n    return torch.zeros(n, device=DEVICE)",
    # issue 33: global module hooks and torch.nn.modules' members are torch's own code
    "global_module_hook": (
        "def f(model, x):\n"
        "    handle = torch.nn.modules.module.register_module_forward_hook(print)\n"
        "    try:\n        return model(x)\n    finally:\n        handle.remove()"
    ),
    "nn_modules_members": (
        "from torch.nn.modules import Linear\nfrom torch.nn.modules.linear import Identity\n\n"
        "layer = torch.nn.modules.linear.Linear(2, 3)"
    ),
    "what_the_course_helpers_return": "def f():\n    return digits",
    "names_the_course_uses_as_locals": "def f(fig, plt, graph):\n    return fig, plt, graph",
    "local_input": "def forward(self, input, type=None):\n    return input",
    "grad_mode_decorators": (
        "@torch.no_grad()\ndef f(x):\n    return x\n\n@torch.inference_mode(False)\n"
        "def g(x):\n    return x\n\nfrom contextlib import contextmanager\n\n"
        "@contextmanager\ndef h():\n    yield"
    ),
    "grad_mode_class_as_value": "mode = torch.no_grad if True else torch.enable_grad",
    "layer_class_as_default": "def make(act=torch.nn.ReLU):\n    return act()",
    "hooks_alias": "hooks = torch.autograd.graph.saved_tensors_hooks",
    "super_init": (
        "class M(torch.nn.Module):\n    scale = 2.0\n\n    def __init__(self):\n"
        "        super().__init__()\n        self.w = torch.nn.Parameter(torch.ones(1))"
    ),
    "context_manager_dunders": (
        "class C:\n    def __enter__(self):\n        return self\n\n"
        "    def __exit__(self, *exc):\n        return False\n\n"
        "c = torch.no_grad()\nc.__enter__()\nc.__exit__(None, None, None)"
    ),
    "version_and_base": "def f(t):\n    return t._version, t._base",
    "private_helper": (
        "def _helper(x):\n    return x\n\ny = _helper(1)\nfor _ in range(2):\n    pass"
    ),
    "isinstance_and_except": (
        "def f(x):\n    try:\n        return isinstance(x, (torch.Tensor, torch.nn.Module))\n"
        "    except (RuntimeError, ValueError):\n        return False"
    ),
    "defaults_and_annotations": (
        "def f(x: torch.Tensor, dtype: torch.dtype = torch.float32, n: int = -1,\n"
        "      sizes: tuple = (1, 2), device=DEVICE) -> torch.Tensor | None:\n    return x"
    ),
    "format_strings": 'def f(x):\n    return f"{x!r:>10}" + "{0:.3f} {1}".format(1.0, x)',
    "docstring_naming_a_dunder": 'def f():\n    """Calls __init__ of nothing."""\n    return 1',
    "utils_data": (
        "loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.ones(2)))"
    ),
    "stop_with_ctrl_c": "try:\n    pass\nexcept KeyboardInterrupt:\n    pass",
    "checkpoint_and_amp": (
        "from torch.utils.checkpoint import checkpoint\n\ndef f(block, x):\n"
        "    with torch.amp.autocast(x.device.type, dtype=torch.bfloat16):\n"
        "        return checkpoint(block, x, use_reentrant=False)"
    ),
    "match_on_attributes": "match 1:\n    case int(real=r):\n        pass",
    # issue 34: what the step-by-step lookup still accepts
    "backend_switches": (
        "on = torch.backends.cudnn.is_available() and torch.backends.cudnn.benchmark\n"
        "cuda = torch.backends.cuda.is_built()"
    ),
    "methods_through_classes": (
        "zero_grad = torch.optim.Optimizer.zero_grad\nadd = torch.Tensor.add\n"
        "forward = torch.nn.Linear.forward"
    ),
    "optimizers_made_subclassed_tested": (
        "class Mine(torch.optim.SGD):\n    pass\n\n"
        "opt = torch.optim.SGD([torch.ones(1)], lr=0.1)\n"
        "ok = isinstance(opt, (torch.optim.Optimizer, Mine))"
    ),
    "comparisons_called": (
        "def same(a, b):\n    return torch.equal(a, b) or torch.allclose(a, b, atol=1e-6)"
    ),
    "numpy_and_generators": (
        "import numpy as np\n\nrows = np.s_[1:3]\nrng = np.random.default_rng(0)\n"
        "g = torch.Generator().manual_seed(0)\nbits = torch.finfo(torch.float32).eps"
    ),
    "dtype_attributes": "size = torch.float32.itemsize\nfloating = torch.float32.is_floating_point",
    "ninety_terms": "x = " + "1 + " * 90 + "1",
    # issue 33: right answers learners wrote that the policy refused without need
    "container_dunders_in_a_lambda": (
        "store = {}\nsave = lambda name, t: store.__setitem__(name, t)\n"
        "read = store.__getitem__\nknown = store.__contains__"
    ),
    "gradcheck_error_caught": (
        "from torch.autograd.gradcheck import GradcheckError\n"
        "import torch.autograd.gradcheck as numeric\n\n"
        "def f(fn, x):\n    try:\n        return numeric.gradcheck(fn, (x,))\n"
        "    except GradcheckError:\n        return False"
    ),
    "contextlib_suppress": (
        "import contextlib\n\ndef f(t):\n    with contextlib.suppress(RuntimeError):\n"
        "        t.detach_()\n    return t"
    ),
    # the fourth held-back set: a heap of losses, autocast as a decorator, a view test
    "heapq_top_losses": (
        "import heapq\n\ndef worst(losses, k):\n    heap = []\n"
        "    for loss in losses:\n        heapq.heappush(heap, loss)\n"
        "    return heapq.nlargest(k, heap)"
    ),
    "autocast_as_a_decorator": (
        "def step(model, x):\n"
        "    @torch.autocast(device_type=x.device.type, dtype=torch.bfloat16)\n"
        "    def forward():\n        return model(x)\n\n"
        '    @torch.amp.autocast("cpu")\n    def other():\n        return model(x)\n\n'
        "    return forward(), other()"
    ),
    "is_view_asked": "def f(t):\n    return t._is_view() or t._base is not None",
    # the held-back sets: operators as functions, attributes named by strings written out
    "operator_reduce": (
        "import functools\nimport operator\n\ndef any_grad(flags):\n"
        "    return functools.reduce(operator.or_, flags, False)"
    ),
    "operator_attrgetter_written_out": (
        "from operator import attrgetter, methodcaller\n\ndef f(inputs, t):\n"
        '    flags = map(attrgetter("requires_grad", "grad.shape"), inputs)\n'
        '    return list(flags), methodcaller("to", "cpu", non_blocking=True)(t)'
    ),
    "attributes_named_in_strings_written_out": (
        "def modes(model, flags):\n"
        '    bias = getattr(model, "bias", None)\n'
        "    for m, flag in flags:\n"
        '        setattr(m, "training", flag)\n'
        '    return bias, hasattr(model, "weight")'
    ),
    "a_blocks_bound_call": (
        "from torch.utils.checkpoint import checkpoint\n\ndef f(block, h):\n"
        "    return checkpoint(block.__call__, h, use_reentrant=False)"
    ),
    "every_batchnorm_and_dropout": (
        "from torch.nn.modules.batchnorm import _BatchNorm\n"
        "from torch.nn.modules.dropout import _DropoutNd\n\n"
        "def kinds(m):\n"
        "    return isinstance(m, _BatchNorm), isinstance(m, torch.nn.modules.dropout._DropoutNd)"
    ),
    # the tenth set: one Function class per setting, memoised
    "memoised_factory": (
        "import functools\n\n@functools.lru_cache(maxsize=None)\ndef scaled(limit):\n"
        "    return lambda x: limit * torch.tanh(x / limit)\n\n"
        "@functools.cache\ndef square(n):\n    return n * n"
    ),
    # the thirty-second set: a holder class that names its one attribute
    "class_with_slots": (
        'class Held:\n    __slots__ = ("tensor",)\n\n'
        "    def __init__(self, tensor):\n        self.tensor = tensor"
    ),
    # the thirty-first set: laps timed by timeit on the caller's clock, a function of its own
    "timeit_timer_on_own_function": (
        "import statistics\nimport timeit\n\n\n"
        "def benchmark(work, synchronize, clock, warmup, repeats):\n"
        "    def lap():\n        work()\n        synchronize()\n\n"
        "    laps = timeit.Timer(lap, timer=clock).repeat(repeat=repeats, number=1)\n"
        "    return statistics.median(laps)"
    ),
    "timeit_timer_on_lambda": (
        "from timeit import Timer\n\n\ndef f(work, clock):\n"
        "    return Timer(lambda: work(), timer=clock).timeit(number=3)"
    ),
    # the thirty-first set: a batch moved item by item, its container kept (a tuple stays one)
    "container_of_its_own_kind": (
        "def to_device(batch, device):\n"
        "    if isinstance(batch, (list, tuple)):\n"
        "        return type(batch)(to_device(b, device) for b in batch)\n"
        "    if isinstance(batch, dict):\n"
        "        return type(batch)({k: to_device(v, device) for k, v in batch.items()})\n"
        "    return batch.to(device, non_blocking=True)"
    ),
    # the eighth set: an SGD step as torch's own optimizers take it, on lists of tensors
    "multi_tensor_step": (
        "def step(params, grads, lr):\n"
        "    with torch.no_grad():\n"
        "        torch._foreach_add_(params, grads, alpha=-lr)\n"
        "    return torch._foreach_norm(grads)"
    ),
}


@pytest.mark.parametrize(
    "code",
    [
        "@torch.autocast(x.__class__)\ndef f():\n    pass",  # a dunder step, as anywhere
        "@torch.autocast(torch.device('cpu').type)\ndef f():\n    pass",  # a call
        "import heapq\n\nh = heapq._heapify_max",  # heapq's listed members only
        "import operator\n\nh = operator.setitem",  # operator's listed members only
        "import operator\n\ndef f(t, name):\n    return operator.attrgetter(name)(t)",
        'import operator\n\ndef f(t):\n    return operator.attrgetter("grad._pack")(t)',
        'import operator\n\ndef f(t):\n    return operator.methodcaller("_apply", print)(t)',
        "from operator import attrgetter\n\nget = attrgetter",  # called where named only
        "torch.nn.Module.__call__ = print",  # a change to torch's classes, as any
        "def f(m, name):\n    return getattr(m, name)",  # a name held in a variable
        'def f(m):\n    return getattr(m, "_parameters")',  # a private name
        "def f(ms):\n    return list(map(getattr, ms, ms))",  # passed as a value
        'def f(m):\n    return getattr(m, "bias", default=None)',  # not as getattr reads it
        'setattr(torch, "equal", print)',  # a change to torch, as any
        'setattr(checks, "check_product_grads", print)',  # to the course's code, as any
        "def f(flag):\n    torch._C._set_grad_enabled(flag)",  # torch's C++ binding
        "h = torch._foreach_",  # a prefix is not a name
    ],
)
def test_what_the_fourth_sets_forms_still_refuse(code):
    assert _violations(code)


@pytest.mark.parametrize(
    "code",
    [
        "def f(t):\n    C = type(int)(t)\n    C.allclose = print",  # torch.Tensor as a value
        "def f(t):\n    return type(t).forward",
        "def f(t):\n    return type(t)",
        "def f(t):\n    return type(t)(t)",  # not a comprehension or a display
        "def f(t):\n    return type(t)(*[t])",
        "def f(b):\n    return type(b)(k=[1])",
        'X = type("X", (), {"f": print})',
        "T = type",
    ],
)
def test_type_is_refused_except_to_rebuild_a_container(code):
    (found,) = _violations(code)
    assert "type" in found.what.en and found.instead is policy.INSTEAD["type"]


def test_gradchecks_module_gives_only_its_listed_names():
    found = _violations("from torch.autograd.gradcheck import get_numerical_jacobian")
    assert any("not on the list" in v.what.en for v in found), [v.what.en for v in found]


def test_a_private_name_of_ones_own_says_to_drop_the_underscore():
    code = (
        "class Saver:\n    def _pack(self, t):\n        return t\n\n"
        "    def hooks(self):\n        return self._pack\n\n\nkept = Saver"
    )
    (found,) = _violations(code)
    assert "(private)" in found.what.en
    assert found.instead is policy.OWN_NAMES_PUBLIC
    assert "_forward_hooks" in policy.INSTEAD  # a named private attribute keeps its own hint


SAVER = """
class Saver(torch.autograd.graph.saved_tensors_hooks):
    def __init__(self):
        self._bytes = 0
        super().__init__(self._pack, self._unpack)

    def _pack(self, t):
        self._bytes += t.nbytes
        return t

    @staticmethod
    def _unpack(t):
        return t

    @property
    def total(self):
        return self._bytes


def saved(fn, x):
    with Saver() as s:
        fn(x)
    return s.total if isinstance(s, Saver) else 0
"""


def test_a_class_may_use_its_own_private_names_on_self():
    """The eleventh set's right 02 ex2 answer, as a class that is only called and tested."""
    assert _violations(SAVER) == []


# Each makes ``self`` something else than an instance of the class, or reaches a name that
# is not the class's own: the private access is refused.
NOT_OWN = {
    "called_unbound": (SAVER + "\n\ndef peek(m):\n    return Saver._pack(m, 1)\n", "_pack"),
    "class_as_a_value": (SAVER + "\nkinds = [Saver]\n", "_pack"),
    "subclassed": (SAVER + "\n\nclass More(Saver):\n    pass\n", "_bytes"),
    "defined_twice": (SAVER + SAVER, "_pack"),
    "a_bases_name": (
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self._forward_hooks = {}\n\n    def hooks(self):\n"
        "        return self._forward_hooks\n",
        "_forward_hooks",
    ),
    "not_defined_by_the_class": (
        "class Peek:\n    def look(self):\n        return self._forward_hooks\n",
        "_forward_hooks",
    ),
    "self_rebound": (
        "class P:\n    def __init__(self):\n        self._x = 1\n\n"
        "    def look(self, m):\n        self = m\n        return self._x\n",
        "_x",
    ),
    "self_rebound_in_a_comprehension": (
        "class P:\n    def __init__(self):\n        self._x = 1\n\n"
        "    def look(self, m):\n        [(self := m) for _ in range(1)]\n"
        "        return self._x\n",
        "_x",
    ),
    "a_nested_function's_self": (
        "class P:\n    def __init__(self):\n        self._x = 1\n\n"
        "    def look(self, m):\n        def inner(self):\n            return self._x\n\n"
        "        return inner(m)\n",
        "_x",
    ),
    "classmethod": (
        "class P:\n    _x = 1\n\n    @classmethod\n    def look(cls):\n        return cls._x\n",
        "_x",
    ),
}


@pytest.mark.parametrize("name", list(NOT_OWN))
def test_a_private_name_that_may_not_be_the_classs_own_is_refused(name):
    code, private = NOT_OWN[name]
    found = [v.what.en for v in _violations(code)]
    assert any(f".{private} (private)" in what for what in found), found


def test_a_class_used_as_a_value_in_another_cell_loses_its_private_names():
    """The context is the whole notebook: a later cell that dereferences the class makes
    its methods callable on any object, so the earlier cell's private access is refused."""
    context = _context(SAVER, "def peek(m):\n    return Saver.total.fget(m)\n")
    found = [v.what.en for v in policy.violations(policy.parse(SAVER), context)]
    assert any("._pack (private)" in what for what in found), found


def _context(*cells: str) -> policy.Context:
    instructor = [policy.parse(SETUP)]
    return policy.context_of([policy.parse(c) for c in cells], instructor)


def _violations(code: str) -> list[policy.Violation]:
    tree = policy.parse(code)
    assert tree is not None, code
    return policy.violations(tree, _context(code))


@pytest.mark.parametrize("name", list(ROUTES))
def test_every_route_is_refused_with_its_line(name):
    code, line, fragment = ROUTES[name]
    found = _violations(code)
    assert any(v.line == line and fragment in v.what.en for v in found), [
        v.describe().en for v in found
    ]


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_what_learners_write_is_accepted(name):
    assert not [v.describe() for v in _violations(ACCEPTED[name])]


def _lesson(name: str):
    (path,) = glob.glob(str(REPO / "solutions" / f"{name}*" / "*.ipynb"))
    return nbformat.read(path, as_version=4)


@functools.cache
def _instructor_trees(lesson: int) -> list:
    """The instructor's cells of a lesson, as grading reads them next to a learner's."""
    nb = _lesson(f"{lesson:02d}")
    exempt = verdicts.instructor_sources(nb)
    cells = [c for c in nb.cells if c.cell_type == "code"]
    return [policy.parse(c.source) for c in cells if verdicts.normal_source(c.source) in exempt]


LESSON_NUMBERS = sorted(int(p.name[:2]) for p in (REPO / "solutions").glob("[0-9][0-9]_*"))


def _solution_cells():
    for lesson in LESSON_NUMBERS:
        for cell in _lesson(f"{lesson:02d}").cells:
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
                yield pytest.param(lesson, cell.source, id=cell.metadata["nbgrader"]["grade_id"])


def _right_answers():
    for lesson in LESSON_NUMBERS:
        catalogue = importlib.import_module(f"catalog.lesson{lesson:02d}")
        for grade_id, answers in catalogue.RIGHT.items():
            for right in answers:
                yield pytest.param(lesson, right.code, id=f"{lesson:02d}-{grade_id}-{right.name}")


@pytest.mark.parametrize(("lesson", "code"), [*_solution_cells(), *_right_answers()])
def test_every_solution_and_catalogued_right_answer_is_accepted(lesson, code):
    """Read with the names of its own lesson's instructor cells, as grading does."""
    tree = policy.parse(code)
    context = policy.context_of([tree], _instructor_trees(lesson))
    assert not [v.describe() for v in policy.violations(tree, context)]


def _learner_copy(nb, answers: dict[str, str]):
    """The notebook as a learner submits it: solution cells replaced by ``answers``."""
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    return nb


def test_the_official_notebooks_read_clean_and_keep_the_setup_learner_code_reads():
    for name in ("01", "04", "07"):
        nb = _lesson(name)
        flags, statements, tests = verdicts.read_notebook(nb, verdicts.instructor_sources(nb))
        assert flags == []
        setup = any(s.startswith("DEVICE = autograder.setup(") for s in statements)
        readers = [s for s in statements if "DEVICE" in s and not s.startswith("DEVICE =")]
        assert setup == bool(readers)  # kept where a statement the observer runs reads it
        assert [upto for _, upto in tests] == sorted(upto for _, upto in tests)


def test_a_violation_costs_only_its_own_exercise_and_leaves_the_observer():
    nb = _lesson("01")
    exempt = verdicts.instructor_sources(nb)
    attack = "import sys\n\ndef product_grads(a, b):\n    return sys.modules"
    helper = "SCALE = 2 - 1.0\nstep = print"
    _learner_copy(nb, {"ex1_product_grads": attack, "ex2_output_requires_grad": helper})
    flags, statements, _ = verdicts.read_notebook(nb, exempt)
    assert [(f["cell"], f["detail"], f["voids"]) for f in flags] == [
        ("ex1_product_grads", "line 1: import sys", ["ex1_product_grads_tests"])
    ]
    assert not any("sys" in s for s in statements)
    assert "SCALE = 2 - 1.0" in statements and "step = print" in statements


def test_a_violation_in_a_cell_of_its_own_voids_nothing_but_is_left_out():
    nb = _lesson("01")
    exempt = verdicts.instructor_sources(nb)
    nb.cells.insert(5, nbformat.v4.new_code_cell("import os\nos.system('true')"))
    flags, statements, _ = verdicts.read_notebook(nb, exempt)
    assert [(f["cell"], f["voids"]) for f in flags] == [("cell 5", []), ("cell 5", [])]
    assert not any("os" in s.split() for s in statements)


def _notebook(cells: int):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"x{i} = {i}\nprint(x{i})") for i in range(cells)]
    for i in range(0, cells, 10):
        nb.cells[i].metadata["nbgrader"] = {
            "grade": True,
            "solution": False,
            "grade_id": f"t{i}",
            "points": 1,
        }
    return nb


def _seconds_to_read(nb, repeats: int = 3) -> float:
    """CPU seconds to read ``nb``, the fastest of ``repeats``: a busy machine (CI runs
    other tests beside this one) only ever adds time, so the minimum is the cost."""
    times = []
    for _ in range(repeats):
        started = time.process_time()
        verdicts.read_notebook(nb, set())
        times.append(time.process_time() - started)
    return min(times)


def test_reading_a_notebook_is_linear_in_its_cells(monkeypatch):
    monkeypatch.setattr(verdicts, "MAX_CELLS", 10_000)
    _seconds_to_read(_notebook(50), repeats=1)  # imports and caches
    small, large = _seconds_to_read(_notebook(500)), _seconds_to_read(_notebook(2000))
    assert large < 4 * small * 2, (small, large)  # 4x the cells: linear 4x, quadratic 16x


def test_a_notebook_past_the_limits_is_rejected_unread(tmp_path):
    path = tmp_path / "big.ipynb"
    nbformat.write(_notebook(verdicts.MAX_CELLS + 1), str(path))
    status, reason = submission.problem(path)
    assert status == "rejected" and f"more than the {verdicts.MAX_CELLS}" in reason.en
    with pytest.raises(ValueError, match="cells"):
        verdicts.read_notebook(_notebook(verdicts.MAX_CELLS + 1), set())
    huge = nbformat.v4.new_notebook()
    huge.cells = [nbformat.v4.new_code_cell("x = 1\n" * (verdicts.MAX_CODE_CHARS // 6 + 1))]
    nbformat.write(huge, str(path))
    assert submission.problem(path)[0] == "rejected"
    nbformat.write(_notebook(20), str(path))
    assert submission.problem(path) is None


def test_a_statement_that_hangs_costs_only_itself_in_the_observer(tmp_path):
    """As in the kernel: the loop is stopped and dropped, the later exercises still pass."""
    from autograder.common import protocol
    from autograder.grader.pipeline.judge import judge_cell
    from autograder.kernel import observer

    nb = _lesson("01")
    exempt = verdicts.instructor_sources(nb)
    first = next(
        i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("solution")
    )
    nb.cells.insert(first + 1, nbformat.v4.new_code_cell("while True:\n    pass"))
    _, statements, tests = verdicts.read_notebook(nb, exempt)
    job = {
        "statements": statements,
        "tests": [
            {"grade_id": c.metadata.nbgrader.grade_id, "source": c.source, "upto": upto}
            for c, upto in tests
        ],
        # the loop burns a core until stopped; lesson 01's cells take < 1 s alone, but its last
        # one ran past 5 s beside the classroom and browser tests on two cores (twice, 2026-12-07)
        "timeout_s": 10,
        "budget_s": 300,
    }
    # One CPU thread, as the grader gives its observers (``serve``, the job's "threads"):
    # run in one pytest process (PYTEST_WORKERS=0), the tests before this one started torch's
    # OpenMP pool of a thread per core, which the forked children cannot use, and lesson 01's
    # last test cell then ran past its limit.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    started = time.monotonic()
    try:
        results = observer.run(job, str(tmp_path / "observer.log"))
    finally:
        torch.set_num_threads(threads)
    # one stop and one retry, not one per test cell (seven cells: 70 s)
    assert time.monotonic() - started < 45
    for cell, _ in tests:
        record = protocol.cell_record(results[cell.metadata.nbgrader.grade_id])
        verdict = judge_cell(cell.source, record, "en")
        assert verdict.passed, (cell.metadata.nbgrader.grade_id, verdict.feedback)


class _Recorder:
    """Stands in for the zygote: keeps the observer's job instead of starting it."""

    def fork(self, kind, cgroup, env, *, cwd, payload):
        import json

        self.job = json.loads(payload)
        return self

    def kill(self):
        pass


def test_reading_a_notebook_is_counted_in_its_budget_and_bounds_the_observer():
    nb = _lesson("01")
    step = verdicts.ObserveTestCells(cell_timeout=60, notebook_timeout=40, zygote=_Recorder())
    _, resources = step.preprocess(nb, {"unique_key": "01"})
    verdicts.RUNNING.clear()
    job = step.zygote.job
    assert 0 < resources["reading_s"] < 40
    assert job["budget_s"] <= 40 - resources["reading_s"]  # not 60 per test cell
    assert resources["observation"].deadline - time.monotonic() < 40 + 60


# -- issue 34: one table, what it lets a dotted name reach, and bad input --------------------


def _readme_section(heading: str, end: str) -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(heading)
    return text[start : text.index(end, start + len(heading))]


README_LISTS = {
    "en": ("#### What graded code may use", "\n## "),
    "zh": ("#### 评分代码可以使用的写法", "\n### "),
}


@pytest.mark.parametrize("lang", list(README_LISTS))
def test_the_readme_names_what_the_table_allows(lang):
    """The README's list (each language) names every module, listed member and builtin of
    policy_table.py, and no builtin the table does not allow."""
    from autograder.grader.pipeline import policy_table as table

    section = _readme_section(*README_LISTS[lang])
    quoted = set(re.findall(r"`([^`]+)`", section))
    for module, members in table.ALLOWED_MODULES.items():
        short = module.removeprefix("torch.")
        assert module in quoted or short in quoted, (lang, module)
        for member in members or ():
            assert member in quoted, (lang, module, member)
    builtins_line = next(line for line in section.split("\n- ") if "abs all any" in line)
    words = set(" ".join(re.findall(r"`([^`]+)`", builtins_line)).split())
    named = {w for w in words if hasattr(builtins, w)} - {"type", "vars", *table.BY_NAME_BUILTINS}
    named -= {"open"}
    named -= {"exec", "input"}  # the builtins it names as refused
    allowed = table.ALLOWED_BUILTINS | table.DECORATOR_BUILTINS
    assert named <= allowed, named - allowed
    plain = {b for b in table.ALLOWED_BUILTINS if b[0].islower()}
    assert plain <= named, plain - named
    assert table.DECORATOR_BUILTINS <= named
    assert table.ALLOWED_DUNDER_ATTRIBUTES | table.ALLOWED_PRIVATE_ATTRIBUTES <= {
        word.removeprefix("t.") for word in quoted
    }
    assert "policy_table.py" in section
    for limit in (f"{table.MAX_CELL_CHARS // 1024} KiB", str(table.MAX_CELL_DEPTH)):
        assert limit in section, (lang, limit)


def test_every_allowed_home_is_a_module():
    from autograder.grader.pipeline import policy_table as table

    for home in [*table.ALLOWED_HOMES, *table.ALLOWED_MODULES]:
        assert importlib.import_module(home).__name__ == home


def _reachable() -> dict[str, object]:
    """What dotted names reach: every public name of every allowed module (and what a
    module subclass hands on), and every attribute of the classes found so."""
    from autograder.grader.pipeline import policy_table as table

    found = {}
    for module, members in table.ALLOWED_MODULES.items():
        value = importlib.import_module(module)
        names = set(members or vars(value))
        wrapped = vars(value).get("m")
        names |= set(vars(wrapped)) if isinstance(wrapped, type(importlib)) else set()
        for name in sorted(names):
            obj, problem = policy.resolve(f"{module}.{name}")
            if problem:
                continue
            found[f"{module}.{name}"] = obj
            if isinstance(obj, type):
                for attr in dir(obj):
                    inner, problem = policy.resolve(f"{module}.{name}.{attr}")
                    if not problem:
                        found[f"{module}.{name}.{attr}"] = inner
    return found


def test_no_dotted_name_reaches_unpickling_attribute_getters_or_the_interpreter():
    """By construction, not by name: whatever public path leads to them."""
    import copyreg
    import marshal
    import operator
    import pickle
    import shelve
    import sys

    import numpy
    import torch

    closed = {
        "pickle.load": pickle.load,
        "pickle.loads": pickle.loads,
        "pickle.Unpickler": pickle.Unpickler,
        "pickle._Unpickler": pickle._Unpickler,
        "copyreg._reconstructor": copyreg._reconstructor,
        "marshal.loads": marshal.loads,
        "shelve.open": shelve.open,
        "torch.load": torch.load,
        "numpy.load": numpy.load,
        "getattr": getattr,
        "eval": eval,
        "exec": exec,
        "__import__": __import__,
        "importlib.import_module": importlib.import_module,
        "sys.modules": sys.modules,
        "sys._getframe": sys._getframe,
    }
    modules = (pickle, copyreg, marshal, shelve, sys, importlib, builtins)
    by_name = (operator.attrgetter, operator.methodcaller)  # called where named, names written
    found = _reachable()
    assert len(found) > 5000  # the walk saw torch's and numpy's public names
    for path, obj in found.items():
        assert not any(obj is c for c in closed.values()), path
        assert not any(obj is g for g in by_name) or policy._is_value_kind(obj), path
        assert not any(obj is m for m in modules), path
        assert not isinstance(obj, type) or obj.__module__ not in ("pickle", "_pickle"), path


def test_a_cell_too_deep_to_read_costs_only_its_own_exercise():
    """A 40,000-term expression makes Python's parser run out of recursion: that cell is
    refused with a reason in both languages, the notebook is still read."""
    nb = _lesson("01")
    exempt = verdicts.instructor_sources(nb)
    _learner_copy(nb, {"ex2_output_requires_grad": "x = " + "1+" * 40_000 + "1"})
    flags, statements, tests = verdicts.read_notebook(nb, exempt)
    assert [(f["cell"], f["voids"]) for f in flags] == [
        ("ex2_output_requires_grad", ["ex2_output_requires_grad_tests"])
    ]
    (flag,) = flags
    assert "nested too deeply" in flag["detail"] and "嵌套太深" in flag["detail_zh"]
    assert not any(s.startswith("x = 1") for s in statements)
    assert any(s.startswith("def product_grads") for s in statements)  # ex1 still observed
    assert len(tests) == len([c for c in nb.cells if verdicts.is_test_cell(c)])


def test_every_output_kind_is_bounded_per_cell_and_per_notebook():
    """Images, HTML, JSON and streams all count; a flood is cut to the bounds with a note,
    errors are kept (shortened), and a cell stops taking outputs past a few times its bound."""
    from nbformat import NotebookNode

    from autograder.grader.pipeline.execute import SandboxedExecute, output_size
    from autograder.grader.sandbox.limits import Limits

    limits = Limits()
    step = SandboxedExecute()
    step.clear_before_next_output = False
    image = "A" * 600_000

    def message(kind: str, content: dict) -> dict:
        header = {"msg_type": kind, "msg_id": kind}
        return {"msg_type": kind, "header": header, "parent_header": {}, "content": content}

    kinds = [
        ("display_data", {"data": {"image/png": image}, "metadata": {}}),
        ("display_data", {"data": {"text/html": "<p>" + "x" * 600_000}, "metadata": {}}),
        (
            "execute_result",
            {
                "data": {"application/json": {"x": "y" * 600_000}},
                "metadata": {},
                "execution_count": 1,
            },
        ),
        ("stream", {"name": "stdout", "text": "z" * 600_000}),
    ]
    cells = []
    for index in range(12):
        step._received, step._errors, step._cut = 0, 0, False
        outputs = []
        for _ in range(10):
            for kind, content in kinds:
                step.output(outputs, message(kind, content), None, index)
        big_error = {"ename": "E", "evalue": "v" * 1_000_000, "traceback": ["t" * 9_000] * 99}
        step.output(outputs, message("error", big_error), None, index)
        assert sum(map(output_size, outputs)) <= 5 * limits.cell_output_bytes  # taken, then cut
        cell = NotebookNode(cell_type="code", source="", metadata={}, outputs=outputs)
        step._bound_cell(cell, index)
        cells.append(cell)
    sizes = [sum(map(output_size, c.outputs)) for c in cells]
    assert max(sizes) <= limits.cell_output_bytes
    assert sum(sizes) <= limits.notebook_output_bytes + len(cells) * 2048  # past it: a note
    for cell in cells:
        assert any(o.output_type == "error" for o in cell.outputs)  # the first run's verdict
        assert "MiB" in cell.outputs[-1]["data"]["text/plain"]  # the note, in both languages
    kept_kinds = {o.output_type for o in cells[0].outputs}
    assert {"display_data", "execute_result", "stream", "error"} <= kept_kinds
    nb = NotebookNode(cells=cells)
    step.bound_notebook(nb)  # again at the end: nothing grows, the notes are not doubled
    assert [sum(map(output_size, c.outputs)) for c in cells] == sizes


@pytest.mark.parametrize(
    "code",
    [
        "import timeit\n\ndef f(c):\n    return timeit.Timer('import os', timer=c).timeit(1)",
        "import timeit\n\ndef f(w, c):\n    return timeit.Timer(w, timer=c).timeit(1)",  # param
        "import timeit\n\ns = 'x'\n\ndef f(c):\n    return timeit.Timer(s).timeit(1)",
        "import timeit\n\ndef f():\n    def lap():\n        pass\n"
        "    lap = 'import os'\n    return timeit.Timer(lap).timeit(1)",  # rebound
        "import timeit\n\ndef f():\n    def lap():\n        pass\n    def g():\n"
        "        nonlocal lap\n        lap = 's'\n    return timeit.Timer(lap).timeit(1)",
        "import timeit\n\ndef f():\n    return timeit.Timer(lambda: 0, globals={}).timeit(1)",
        "import timeit\n\ndef f():\n    return timeit.Timer(lambda: 0, setup='x').timeit(1)",
        "import timeit\n\ndef f(*a):\n    return timeit.Timer(*a).timeit(1)",
        "import timeit\n\ndef f():\n    t = timeit.Timer(lambda: 0)\n"
        "    t.__init__('import os')\n    return t.timeit(1)",  # kept, set up again
        "import timeit\n\ndef f():\n    return timeit.Timer(lambda: 0).__init__('x')",
        "import timeit\n\nT = timeit.Timer",
        "import timeit\n\nclass T(timeit.Timer):\n    pass",  # its own would take strings
    ],
)
def test_timeit_timer_is_refused_unless_it_times_a_function_at_once(code):
    found = _violations(code)
    assert found and all("Timer" in v.what.en for v in found), [v.what.en for v in found]


@pytest.mark.parametrize(
    "code",
    [
        "__slots__ = ('a',)",  # not in a class body
        "class H:\n    __slots__ = f()",  # not a literal
        "class H:\n    x = __slots__",  # read
        "class H:\n    __dict__ = {}",  # another dunder
        "def f():\n    class H:\n        pass\n    H.__slots__ = ()",
    ],
)
def test_slots_only_as_a_literal_in_a_class_body(code):
    assert _violations(code)
