"""References to the functions the checks rely on, taken before any learner code runs.

Grades never depend on them (the grader judges in its own process), but in the
learner's kernel they keep self-study feedback honest: a learner who reassigns
``torch.allclose`` changes the module attribute, not these names. The notebook's
first cell, ``autograder.setup(...)``, imports this module, as does every lesson's
checks module.
"""

import builtins
import copy

import torch
import torch.autograd

allclose = torch.allclose
equal = torch.equal
isclose = torch.isclose
autograd_grad = torch.autograd.grad
gradcheck = torch.autograd.gradcheck
is_grad_enabled = torch.is_grad_enabled
is_tensor = torch.is_tensor
as_tensor = torch.as_tensor
tensor = torch.tensor
zeros = torch.zeros
empty = torch.empty
frombuffer = torch.frombuffer
ones = torch.ones
rand = torch.rand
randn = torch.randn
randint = torch.randint
generator = torch.Generator
no_grad = torch.no_grad
inference_mode = torch.inference_mode
set_grad_enabled = torch.set_grad_enabled
is_inference_mode_enabled = torch.is_inference_mode_enabled
get_default_dtype = torch.get_default_dtype
set_default_dtype = torch.set_default_dtype
get_autocast_dtype = torch.get_autocast_dtype
set_autocast_dtype = torch.set_autocast_dtype
save = torch.save
load = torch.load
saved_tensors_hooks = torch.autograd.graph.saved_tensors_hooks
tensor_type = torch.Tensor
untyped_storage = torch.Tensor.untyped_storage
storage_address = torch.UntypedStorage.data_ptr
parameter_type = torch.nn.Parameter
module_type = torch.nn.Module
function_node_type = torch.autograd.function.BackwardCFunction  # a custom Function's node

deepcopy = copy.deepcopy
isinstance_ = builtins.isinstance
type_ = builtins.type
len_ = builtins.len
repr_ = builtins.repr
vars_ = builtins.vars
dict_items = dict.items  # a plain dict's items, whatever a subclass's items() does
