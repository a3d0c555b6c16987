"""The learner-code policy's tables: the one place that says what graded code may reach.

``policy.py`` reads cells against these tables; the README's "What graded code may use"
(both languages) names the same modules, members and builtins, and
``tests/test_policy.py`` checks that it does. What a dotted name may reach is decided
from the tables step by step (``policy.resolve``):

- a **module** only when it is one of :data:`ALLOWED_MODULES`, whatever path leads to it
  (``torch.backends.cudnn.torch`` is ``torch``; ``torch.nn.modules`` is not listed);
- a module's **attribute** only when the module lists it (the modules with named
  members) or, for the modules open to every public name (:data:`ANY`), when its
  name is public and not one of :data:`REFUSED_ATTRIBUTES`;
- any **function, class or other object** only when the code that defines it lives in
  one of :data:`ALLOWED_HOMES` (its ``__module__``, or its type's): the listed modules
  and the implementation modules behind them. So ``operator.attrgetter`` found in some
  module's namespace, ``typing`` helpers, ``pickle``, ``copyreg``, ``torch.serialization``,
  ``torch.jit`` or ``torch.overrides`` are refused wherever they are re-exported;
- a step the grader cannot look up without running the owner's code (a module's or an
  object's ``__getattr__``) is refused, not waved through.
"""

from __future__ import annotations

ANY = None  # every public name of the module (what it reaches is checked as below)

# Modules graded code may import, and reach as attributes of each other.
ALLOWED_MODULES: dict[str, frozenset[str] | None] = {
    **dict.fromkeys(
        """torch torch.nn torch.nn.functional torch.nn.init torch.nn.utils torch.autograd
        torch.autograd.graph torch.autograd.function torch.autograd.functional torch.func
        torch.nn.modules torch.optim torch.optim.lr_scheduler torch.cuda torch.mps torch.xpu
        torch.backends torch.backends.cuda torch.backends.cudnn torch.backends.mps torch.accelerator
        torch.utils torch.utils.data torch.linalg torch.fft torch.special torch.testing
        numpy numpy.random numpy.linalg
        math cmath statistics itertools random""".split(),
        ANY,
    ),
    "time": frozenset(
        "time perf_counter perf_counter_ns monotonic monotonic_ns process_time sleep".split()
    ),
    # default_timer: time.perf_counter, as timeit names it; Timer only on a lambda or a function
    # of one's own (timer_calls.py: given a string, it would run code no one read)
    "timeit": frozenset({"default_timer", "Timer"}),
    # lesson 09: the documented entry points only (the modules also hold warnings, uuid, ...)
    "torch.utils.checkpoint": frozenset(
        "checkpoint checkpoint_sequential CheckpointError noop_context_fn".split()
    ),
    "torch.amp": frozenset("autocast GradScaler is_autocast_available".split()),
    "copy": frozenset({"copy", "deepcopy"}),
    "contextlib": frozenset({"contextmanager", "nullcontext", "ExitStack", "suppress"}),
    # lesson 07: gradcheck's failure, to catch it (the module's other names are its helpers)
    "torch.autograd.gradcheck": frozenset("gradcheck gradgradcheck GradcheckError".split()),
    # lru_cache and cache: a learner's own memo (what it keeps across calls is judged by
    # behaviour, like any state)
    "functools": frozenset({"partial", "reduce", "wraps", "lru_cache", "cache"}),
    "collections": frozenset("OrderedDict defaultdict Counter deque namedtuple".split()),
    # a running top-k or median of losses, or a sorted list of timings
    "bisect": frozenset("bisect bisect_left bisect_right insort insort_left insort_right".split()),
    "heapq": frozenset(
        "heappush heappop heapify heappushpop heapreplace nlargest nsmallest merge".split()
    ),
    # operators as functions (``functools.reduce(operator.or_, flags)``); attrgetter and
    # methodcaller take attribute names as strings: only called where they are named, with
    # plain public names written out (``policy._Reader.visit_Call``); no setitem or delitem
    "operator": frozenset(
        """abs add and_ attrgetter concat contains countOf eq floordiv ge getitem gt index
        indexOf inv invert is_ is_not itemgetter le lshift lt matmul methodcaller mod mul ne
        neg not_ or_ pos pow rshift sub truediv truth xor""".split()
    ),
}

# Packages whose public submodules are allowed too, each open to every public name:
# ``torch.nn.modules.linear.Linear`` is ``nn.Linear``, and ``torch.nn.modules.module`` holds
# the global module hooks (``register_module_forward_hook`` and the rest), which return a
# removable handle like a module's own hooks. A hook still registered when a check starts
# fails it (``protocol.hooks_left_before``): it would run during the check's own calls.
ALLOWED_PACKAGES = ("torch.nn.modules",)

# Where the code of a reachable function, class or object may live: a home matches an
# entry when it is the entry or a module inside it (``torch.nn`` covers
# ``torch.nn.modules.linear``). The listed modules are homes too. Anything else — the
# standard library beyond the listed modules (operator, typing, logging, weakref, os,
# sys, builtins, importlib, pickle, copyreg, marshal, shelve), and torch's and numpy's
# machinery (serialization, jit, fx, overrides, _ops, _dynamo, hub, package, the data
# pipes, which decode files by extension, pickle among them; numpy's file readers) — is
# not a home graded code may reach.
ALLOWED_HOMES: dict[str, str] = {
    "torch._C": "torch's C half: Tensor's methods, Generator, dtypes, the C functions",
    "torch._tensor": "torch.Tensor's Python methods",
    "torch._tensor_str": "torch.set_printoptions",
    "torch._linalg_utils": "torch's older linear-algebra functions",
    "torch._lowrank": "torch.pca_lowrank, torch.svd_lowrank",
    "torch._lobpcg": "torch.lobpcg",
    "torch.functional": "torch.einsum, torch.meshgrid, torch.norm, ...",
    "torch.random": "torch.manual_seed, torch.get_rng_state, ...",
    "torch.storage": "tensor storages",
    "torch.nn": "layers, parameters, losses, init, utils",
    "torch.autograd": "autograd and its graph, functions, grad modes",
    "torch.optim": "optimizers and schedulers",
    "torch.amp": "autocast, GradScaler",
    "torch.cuda": "CUDA devices, streams, events, memory statistics",
    "torch.mps": "Apple GPUs",
    "torch.xpu": "Intel GPUs",
    "torch.accelerator": "the current accelerator",
    "torch.backends": "backend switches",
    "torch.func": "torch.func transforms",
    "torch.utils._contextlib": "the grad modes' base class",
    "torch.utils.checkpoint": "activation checkpointing",
    "torch.utils.data.dataset": "datasets",
    "torch.utils.data.dataloader": "DataLoader",
    "torch.utils.data.sampler": "samplers",
    "torch.utils.data._utils": "default_collate, default_convert, get_worker_info",
    "torch.testing": "assert_close, make_tensor",
    "torch.linalg": "linear algebra",
    "torch.fft": "Fourier transforms",
    "torch.special": "special functions",
    "numpy": "numpy's own functions, classes and ufuncs",
    "numpy.linalg": "linear algebra",
    "numpy.random": "random generators",
    "numpy._core.getlimits": "numpy.finfo, numpy.iinfo",
    "numpy.lib._index_tricks_impl": "numpy.s_, numpy.r_, numpy.c_, numpy.mgrid, numpy.ogrid",
    "_functools": "functools.reduce, functools.partial (their C implementation)",
    "_collections": "collections.deque, collections.defaultdict (their C implementation)",
    "_random": "random's generator (its C implementation)",
    "math": "math",
    "cmath": "cmath",
    "statistics": "statistics",
    "itertools": "itertools",
    "random": "random",
    "time": "time",
    "copy": "copy",
    "contextlib": "contextlib",
    "functools": "functools",
    "collections": "collections",
    "bisect": "bisect",
    "_bisect": "bisect's functions (their C implementation)",
    "heapq": "heapq",
    "_heapq": "heapq's heap functions (their C implementation)",
    "operator": "operator.attrgetter, operator.itemgetter, operator.methodcaller",
    "_operator": "operator's functions (their C implementation)",
}

ALLOWED_BUILTINS = frozenset(
    """abs all any ascii bin bool bytearray bytes callable chr complex dict divmod enumerate
    filter float format frozenset hash hex id int oct ord
    isinstance issubclass iter len list map max min next object pow print range repr reversed
    round set slice sorted str sum super tuple zip NotImplemented Ellipsis
    ArithmeticError AssertionError AttributeError BaseException Exception IndexError KeyError
    KeyboardInterrupt
    LookupError MemoryError
    NotImplementedError OverflowError RuntimeError StopIteration TypeError ValueError
    ZeroDivisionError Warning UserWarning""".split()
)
DECORATOR_BUILTINS = frozenset({"staticmethod", "classmethod", "property"})
# Builtins that reach an attribute by its name: allowed only where they are called with the
# name written out as a public string, so that they read or set exactly what ``obj.name``
# would (``getattr(m, "bias", None)``), with how many arguments each takes.
BY_NAME_BUILTINS = {"getattr": (2, 3), "hasattr": (2, 2), "setattr": (3, 3)}
# ``type`` only as ``type(x)(items)``, the items a comprehension or a display: a new container
# of x's own kind (a tuple stays a tuple, a list a list). Never the class as a value, which
# passes every check made on attributes (``type(int)(t)`` is ``torch.Tensor``, whose methods a
# cell could replace); called on a display, even a class's metaclass only gives back the
# display's own built-in type, whose attributes cannot be set.
CONTAINER_TYPE_BUILTIN = "type"
# Besides the context protocol, the container methods that only spell a subscript
# (``d.__setitem__(k, v)`` is ``d[k] = v``, usable inside a lambda), and ``__call__``, which
# only spells a call (``checkpoint(block.__call__, h)``; assigning it is refused as any change
# to torch's classes is, and an instance's own ``__call__`` is never what a call runs).
ALLOWED_DUNDER_ATTRIBUTES = frozenset(
    {"__init__", "__enter__", "__exit__", "__getitem__", "__setitem__", "__contains__", "__call__"}
)
# torch's own private names learners use: a tensor's version and base, and the base classes
# that every BatchNorm and Dropout shares (``isinstance(m, batchnorm._BatchNorm)``)
ALLOWED_PRIVATE_ATTRIBUTES = frozenset(
    {"_version", "_base", "_is_view", "_BatchNorm", "_NormBase", "_DropoutNd"}
)
# and torch's arithmetic on lists of tensors, which its optimizers' steps run
# (``torch._foreach_add_(params, grads, alpha=-lr)``)
ALLOWED_PRIVATE_PREFIXES = ("_foreach_",)
ALLOWED_DUNDER_DEFINITIONS = frozenset(
    """__init__ __len__ __getitem__ __iter__ __next__ __enter__ __exit__ __call__ __repr__
    __str__""".split()
)
# A class of one's own may name the attributes its instances hold, as a literal in its body
# (``__slots__ = ("tensor",)``): it only restricts what they can hold.
CLASS_BODY_DUNDERS = frozenset({"__slots__"})
# Public attribute names that lead out of the interpreter's sandbox of objects: frames,
# code, files, foreign memory, loaders, processes, the interpreter's own modules. Dunder
# and private names are refused before these are consulted; on a module, what a name
# reaches is checked against the homes above as well.
REFUSED_ATTRIBUTES = frozenset(
    """f_globals f_locals f_back f_builtins f_code f_trace tb_frame tb_next save load loads
    tofile fromfile from_file savetxt loadtxt savez savez_compressed memmap open_memmap
    genfromtxt fromregex load_library ctypes ctypeslib cffi ops classes library overrides
    system popen spawn fork sys os builtins importlib gc inspect subprocess mro hub jit
    serialization package multiprocessing distributed fx compiler cpp_extension
    compile compile_shader load_metallib cudart caching_allocator_alloc caching_allocator_delete
    change_current_allocator CUDAPluggableAllocator PyTorchFileReader PyTorchFileWriter
    import_ir_module import_ir_module_from_buffer get_file_path DataSource swap_tensors
    set_module TorchFunctionMode TorchDispatchMode DisableTorchFunction
    DisableTorchFunctionSubclass ExcludeDispatchKeyGuard
    """.split()
)
REFUSED_ATTRIBUTE_PREFIXES = ("gi_", "cr_", "ag_", "co_")

# A cell the reader refuses whole, before or instead of reading it: longer than this, or
# nested deeper than this in its syntax tree (the course's own cells stay under 5,000
# characters and 20 levels; Python's parser gives up near 1,000 levels, and the reader's
# own recursion would before that).
MAX_CELL_CHARS = 256 * 1024
MAX_CELL_DEPTH = 100


def module_allowed(name: str) -> bool:
    """Whether graded code may import module ``name`` and reach it: one of
    :data:`ALLOWED_MODULES`, or a public submodule of one of :data:`ALLOWED_PACKAGES`."""
    if name in ALLOWED_MODULES:
        return True
    for package in ALLOWED_PACKAGES:
        inside = name.removeprefix(package + ".")
        if inside != name and all(part and not part.startswith("_") for part in inside.split(".")):
            return True
    return False


def home_allowed(home: str) -> bool:
    """Whether code defined in module ``home`` may be reached (see :data:`ALLOWED_HOMES`)."""
    if module_allowed(home):
        return True
    return any(home == entry or home.startswith(entry + ".") for entry in ALLOWED_HOMES)
