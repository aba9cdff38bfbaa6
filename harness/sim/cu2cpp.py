#!/usr/bin/env python3
"""Translate a CUDA C++ source file so that a C++17 compiler can build it against cudasim.

Only what C++ cannot express is rewritten, and every line keeps its number (a `#line` directive
points diagnostics at the original file):

* ``kernel<<<grid, block[, shmem[, stream]]>>>(args)`` becomes
  ``::cudasim::launch([](auto&... a) { kernel(a...); }, "kernel", __FILE__, __LINE__, grid, block,
  shmem, stream)(args)``: the lambda lets a template kernel's arguments be deduced and default
  arguments apply, as with nvcc.
* ``extern __shared__ T name[];`` becomes ``static ::cudasim::DynamicShared<T> name;`` at namespace
  scope, and a local ``T*`` set to the block's dynamic shared memory inside a function (a
  thread-local one in a file with a lambda that has no captures, which could not use a local).
* A ``__shared__`` declaration inside a function becomes a reference into the block's shared
  memory arena (``using T = float[8]; T& name = ::cudasim::detail::static_shared<T>(...)``), so
  each block gets fresh, garbage-filled shared memory, out-of-bounds accesses are caught, and the
  48 KiB limit is checked.
* ``printf(`` (also ``std::printf(``) becomes ``cudasim_printf(`` so that a kernel that runs once per thread schedule
  prints once.
* ``clock()`` becomes ``cudasim_clock()``: in device code it counts the thread's own work, the
  same under every thread order (host code still gets the C library's clock()).
* Each launch passes the kernel's parameter names, so that reports say ``out[3]``, not "buffer #2".
* The body of every ``__global__`` and ``__device__`` function (and ``__device__`` lambda) is
  bracketed by ``#define __CUDA_ARCH__ 900`` and ``#undef __CUDA_ARCH__`` (the simulated device is
  sm_90), each followed by a ``#line`` directive so that numbering stays the original's. nvcc
  compiles a file twice, once for the device with ``__CUDA_ARCH__`` set and once for the host
  without it; g++ compiles it once, so device code sees the macro only inside those bodies. Host
  code, namespace-scope ``#if`` blocks and ``__host__ __device__`` functions (compiled once for both
  callers) see the host pass: ``__CUDA_ARCH__`` undefined (see device_function_bodies).

A whole program (`--tree`, used by `puzzle.py sim` and harness/cmake/Cudasim.cmake) also gets
every file it includes translated into a mirror tree; see translate_tree.

Usage: cu2cpp.py INPUT.cu OUTPUT.cpp
"""
import os
import re
import sys


def mask_comments_and_strings(src):
    """Return a copy of src where comments and string/char literals are replaced by spaces
    (newlines kept), so that searches only see code. Offsets stay the same."""
    out = list(src)
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif c in "\"'":
            # Raw strings are rare in kernels; treat R"( ... )" as an ordinary literal.
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                if out[k] != "\n":
                    out[k] = " "
            i = j + 1
        elif c == "#" and (i == 0 or src[i - 1] == "\n" or src[:i].rstrip(" \t").endswith("\n")):
            # Preprocessor lines (e.g. #include <a>) are not code for our purposes.
            j = i
            while True:
                e = src.find("\n", j)
                if e < 0:
                    e = n
                    break
                if src[e - 1] == "\\":
                    j = e + 1
                    continue
                break
            for k in range(i, e):
                if out[k] != "\n":
                    out[k] = " "
            i = e
        else:
            i += 1
    return "".join(out)


def split_top_level(text):
    """Split on commas that are not nested in (), [], {} or <> of template arguments. A `<` opens
    template arguments when it follows a name (`atomic<int, scope>`), and a `>` closes one only
    while one is open, so a comparison in a default argument does not swallow the rest."""
    parts, depth, angle, cur = [], 0, 0, []
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "<" and text[:i].rstrip()[-1:].isidentifier() and text[i + 1:i + 2] not in ("<", "="):
            angle += 1
        elif ch == ">" and angle > 0:
            angle -= 1
        if ch == "," and depth == 0 and angle == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def kernel_expr_start(code, end):
    """Given code[:end] ending just before '<<<', find where the kernel expression starts:
    identifiers, '::' and template argument lists such as reduce<256>."""
    i = end
    while i > 0 and code[i - 1] in " \t\n":
        i -= 1
    while True:
        if i > 0 and code[i - 1] == ">":
            depth = 0
            j = i - 1
            while j >= 0:
                if code[j] == ">":
                    depth += 1
                elif code[j] == "<":
                    depth -= 1
                    if depth == 0:
                        break
                j -= 1
            i = j
            while i > 0 and code[i - 1] in " \t":
                i -= 1
        j = i
        while j > 0 and (code[j - 1].isalnum() or code[j - 1] == "_"):
            j -= 1
        if j == i:
            raise ValueError("could not find the kernel name before <<<")
        i = j
        if code[max(0, i - 2):i] == "::":
            i -= 2
            continue
        return i


class Edit:
    def __init__(self, start, end, text):
        self.start, self.end, self.text = start, end, text


GLOBAL_FN = re.compile(r"\b__global__\b[^;{}()]*?\b([A-Za-z_]\w*)\s*\(")


# A pointer to const data declared __restrict__ (`const float* __restrict__ in`, `float const*
# __restrict in`): nvcc may load through it on the read-only (non-coherent) path, as with __ldg.
READ_ONLY_PARAM = re.compile(r"\bconst\b[^*]*\*\s*(?:__restrict__|__restrict)\b")


def kernel_params(code):
    """{kernel name: "a,b,c"}: the parameter names of every __global__ function in the file; a
    name marked "!" is a `const T* __restrict__` pointer (launch.cpp reads the mark)."""
    out = {}
    for m in GLOBAL_FN.finditer(code):
        depth, j = 0, m.end() - 1
        while j < len(code):
            if code[j] == "(":
                depth += 1
            elif code[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        names = []
        for p in split_top_level(code[m.end():j]):
            p = re.sub(r"=.*$", "", p, flags=re.S)            # default argument
            p = re.sub(r"(\[[^\]]*\])+\s*$", "", p.strip())  # array parameter
            n = re.search(r"([A-Za-z_]\w*)\s*$", p)
            name = n.group(1) if n and p.strip() not in ("void",) and len(p.split()) > 1 or (n and "*" in p) else ""
            names.append("!" + name if name and READ_ONLY_PARAM.search(p) else name)
        out.setdefault(m.group(1), ",".join(names))
    return out


def kernel_facts(code):
    """(arities, definitions, templated) of the file's __global__ functions, by name."""
    defs, arities, templ = {}, {}, set()
    for m in GLOBAL_FN.finditer(code):
        depth, j = 0, m.end() - 1
        while j < len(code):
            depth += {"(": 1, ")": -1}.get(code[j], 0)
            if depth == 0:
                break
            j += 1
        plist = split_top_level(code[m.end():j])
        arities.setdefault(m.group(1), set()).add(len(plist))
        if any("=" in p for p in plist):
            templ.add(m.group(1))  # default arguments do not survive a call through a pointer
        if code[j + 1:j + 200].lstrip()[:1] == "{":
            defs[m.group(1)] = defs.get(m.group(1), 0) + 1
        head = code[max(0, m.start() - 300):m.start()]
        head = head[max(head.rfind(";"), head.rfind("}")) + 1:]
        if re.search(r"\btemplate\s*<", head) or re.search(r"\btemplate\s*<", code[m.start():m.end()]):
            templ.add(m.group(1))
    return arities, defs, templ


def merge_facts(all_facts):
    arities, defs, templ = {}, {}, set()
    for a, d, t in all_facts:
        for n, v in a.items():
            arities.setdefault(n, set()).update(v)
        for n, v in d.items():
            defs[n] = defs.get(n, 0) + v
        templ |= t
    return arities, defs, templ


def plain_kernels(facts):
    """Names of the __global__ functions defined once, not as templates, with no overloads."""
    arities, defs, templ = facts
    # A declaration and a definition are one kernel; two definitions or arities are overloads.
    return {n for n, a in arities.items() if len(a) == 1 and defs.get(n, 0) <= 1 and n not in templ}


def find_launches(src, code, program=None):
    """program: (params, facts) of the whole program's files (translate_tree), so that a launch
    in one file of a kernel defined in an included header is known too."""
    edits = []
    params = kernel_params(code)
    facts = kernel_facts(code)
    if program:
        params = dict(program[0], **params)
        facts = merge_facts([program[1]])
    plain = plain_kernels(facts)
    for m in re.finditer(r"<<<", code):
        start = m.start()
        if any(e.start <= start < e.end for e in edits):
            continue
        close = code.find(">>>", m.end())
        if close < 0:
            raise ValueError(f"line {src.count(chr(10), 0, start) + 1}: '<<<' without a matching '>>>'")
        kstart = kernel_expr_start(code, start)
        kexpr = src[kstart:start].strip()
        config = split_top_level(src[m.end():close])
        if not 2 <= len(config) <= 4:
            raise ValueError(f"line {src.count(chr(10), 0, start) + 1}: a launch takes <<<grid, block[, shared bytes[, stream]]>>>")
        name = re.sub(r"\s+", "", kexpr).replace('"', "")
        base = re.sub(r"<.*$", "", name).split("::")[-1]
        if name in plain:
            # A kernel that is neither a template nor overloaded: launched through its address, so
            # its parameters are converted once, on the host, and every thread gets a bitwise copy
            # (no constructor or destructor runs in device code), as nvcc does.
            text = f'::cudasim::launch_fn(&{kexpr}, "{name}", "{params.get(base, "")}", __FILE__, __LINE__,{",".join(config)})'
        else:
            # `[&]`: the kernel may be a function pointer variable (`kernel_fn<<<...>>>`).
            call = f"[&](auto&... cudasim_arg) {{ {kexpr}(cudasim_arg...); }}"
            text = f'::cudasim::launch({call}, "{name}", "{params.get(base, "")}", __FILE__, __LINE__,{",".join(config)})'
        edits.append(Edit(kstart, close + 3, text))
    return edits


def strip_template_params(head):
    """Drop `template <...>` parameter lists, whose `class T` does not make a function a class."""
    while True:
        m = re.search(r"\btemplate\s*<", head)
        if not m:
            return head
        depth, j = 0, m.end() - 1
        while j < len(head):
            if head[j] == "<":
                depth += 1
            elif head[j] == ">":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        head = head[:m.start()] + " " + head[j + 1:]


def brace_scopes(code):
    """For every offset, whether it lies inside a function body (or a block within one).
    Returns a list of (offset, is_code) events at each brace."""
    events = []
    stack = []
    last_stmt = 0
    for i, ch in enumerate(code):
        if ch == "{":
            head = code[last_stmt:i]
            is_code = bool(stack and stack[-1])
            if not is_code:
                bare = strip_template_params(head)
                is_code = not re.search(r"\b(namespace|struct|class|union|enum)\b|=\s*$", bare) and bool(bare.strip())
                # `extern "C" {` and similar linkage blocks are not code.
                if re.search(r"\bextern\b", head):
                    is_code = False
            stack.append(is_code)
            events.append((i, bool(stack[-1])))
            last_stmt = i + 1
        elif ch == "}":
            if stack:
                stack.pop()
            events.append((i, bool(stack and stack[-1])))
            last_stmt = i + 1
        elif ch == ";":
            last_stmt = i + 1
    return events


def in_code(events, offset):
    state = False
    for pos, is_code in events:
        if pos >= offset:
            break
        state = is_code
    return state


# `extern __shared__ float s[];` and the other orders real code uses (`extern float __shared__ s[];`,
# `extern "C" __shared__ ...`): group 1 holds the type with __shared__ somewhere in it.
DYN_SHARED = re.compile(r"\bextern\s+((?:\"C\"\s*)?[^;\[{}]*?\b__shared__\b[^;\[{}]*?|[^;\[{}]*?)\s*\b([A-Za-z_]\w*)\s*\[\s*\]\s*;")
STATIC_SHARED = re.compile(r"\b__shared__\b([^;{}()]*(?:\([^;{}]*\))?[^;{}]*);")


# `[]` followed by what can follow a lambda's captures (parameters, body, template parameters,
# specifiers): a lambda without captures. `delete[] (p)` matches too, which only costs speed.
CAPTURELESS_LAMBDA = re.compile(r"\[\s*\]\s*(?:[({<]|->|mutable\b|constexpr\b|noexcept\b|__device__\b|__host__\b)")


# Shared memory that stays `static __thread` (one copy per OS thread): a namespace-scope
# `__shared__`, a declaration the translator does not understand, a dynamic-shared pointer in a
# file with a captureless lambda. Blocks that take turns on one OS thread (the 'random' schedule)
# would share it, so such a file registers itself and the simulator runs its blocks one at a time.
THREAD_LOCAL_SHARED_NOTE = "\nstatic const bool cudasim_thread_local_shared_ = ::cudasim::detail::note_thread_local_shared(__FILE__);\n"


def find_shared(src, code):
    """The edits, and whether some shared memory stays per OS thread (THREAD_LOCAL_SHARED_NOTE)."""
    edits = []
    thread_local_shared = False
    events = brace_scopes(code)
    captureless = bool(CAPTURELESS_LAMBDA.search(code))
    for m in DYN_SHARED.finditer(code):
        if "__shared__" not in m.group(1):
            continue
        ctype = re.sub(r"__align__\s*\([^)]*\)|alignas\s*\([^)]*\)|\b__shared__\b|\"C\"", "", src[m.start(1):m.end(1)])
        ctype = re.sub(r"\s+", " ", ctype).strip()
        name = m.group(2)
        if in_code(events, m.start()):
            # Inside a function: a real pointer, so that casts such as reinterpret_cast<float*>(smem)
            # work, and a local one. The instrumented code reads a thread-local variable through a
            # call to the memory checker after every barrier (two of the five checker calls of a
            # step of the p14 scan), a local from a register. A lambda without captures cannot use
            # a local of its function, so a file that has one keeps a thread-local per worker
            # instead (every thread of the block stores the same address in it).
            text = f'{ctype}* {name}; {name} = ::cudasim::DynamicShared<{ctype}>("{name}");'
            if captureless:
                text = "static __thread " + text
                thread_local_shared = True
        else:
            text = f'static ::cudasim::DynamicShared<{ctype}> {name}{{"{name}"}};'
        edits.append(Edit(m.start(), m.end(), text))
    for m in STATIC_SHARED.finditer(code):
        if code[max(0, m.start() - 20):m.start()].rstrip().endswith("extern"):
            continue
        if not in_code(events, m.start()):
            thread_local_shared = True
            continue  # namespace scope: stays `static __thread` (one copy per worker, so per block)
        # The type may come first: `float __shared__ tile[32];` (and `static`/`volatile` with it).
        stmt = max(code.rfind(";", 0, m.start()), code.rfind("{", 0, m.start()), code.rfind("}", 0, m.start())) + 1
        prefix = code[stmt:m.start()]
        start = m.start()
        if prefix.strip() and not re.search(r"[=()<>]|\b(return|case|else|do)\b", prefix) and ":" not in prefix.replace("::", ""):
            start = stmt + len(prefix) - len(prefix.lstrip())
            prefix = re.sub(r"\bstatic\b", "", src[start:m.start()])
        else:
            prefix = ""
        text = static_shared_decl(prefix + " " + src[m.start(1):m.end(1)] if prefix.strip() else src[m.start(1):m.end(1)])
        if text:
            edits.append(Edit(start, m.end(), text))
        else:
            thread_local_shared = True
    return edits, thread_local_shared


DECLARATOR = re.compile(r"^(.*?)\b([A-Za-z_]\w*)\s*((?:\[[^\]]*\])*)\s*$", re.S)


def static_shared_decl(decl):
    """`__shared__ float tile[32][33], b[4];` inside a function becomes references into the
    block's shared-memory arena, where arrays are separated by canaries and the last one ends at
    an inaccessible page: `using T = float[32][33]; T& tile = ::cudasim::detail::static_shared<T>(...);`
    Returns None when the declaration is not understood (it then stays thread-local storage)."""
    decl = re.sub(r"__align__\s*\([^)]*\)|alignas\s*\([^)]*\)", "", decl)
    parts = split_top_level(decl)
    first = DECLARATOR.match(parts[0].split("=")[0])
    if not first or not first.group(1).strip():
        return None
    base = first.group(1).strip()
    out = []
    for i, part in enumerate(parts):
        m = DECLARATOR.match(part.split("=")[0]) if i == 0 else re.match(r"^\s*([*&\s]*)([A-Za-z_]\w*)\s*((?:\[[^\]]*\])*)\s*$", part)
        if not m:
            return None
        ptr = "" if i == 0 else m.group(1).replace(" ", "")
        name, dims = m.group(2), m.group(3)
        alias = "cudasim_shared_%s_t" % name
        out.append('using %s = %s%s %s; %s& %s = ::cudasim::detail::static_shared<%s>("%s", __FILE__, __LINE__);'
                   % (alias, base, ptr, dims, alias, name, alias, name))
    return " ".join(out)


DEVICE_VAR = re.compile(r"(?<![\w])(?:__device__|__constant__)\b[^;{}]*;")


def find_device_vars(code):
    """Namespace-scope `__device__`/`__constant__` variables: a registration follows each on the
    same line (runtime.h, SymbolReg), so that every schedule of a launch starts from their values."""
    events = brace_scopes(code)
    edits = []
    for m in DEVICE_VAR.finditer(code):
        decl = m.group(0)
        head = decl.split("=")[0]
        if "(" in head or in_code(events, m.start()):
            continue  # a function, or a local variable
        stmt = max(code.rfind(";", 0, m.start()), code.rfind("{", 0, m.start()), code.rfind("}", 0, m.start())) + 1
        if re.search(r"\b(extern|typedef|using|template)\b", code[stmt:m.start()] + head):
            continue
        names = []
        for part in split_top_level(decl[:-1]):
            n = re.match(r"^\s*(?:.*?[\s*&])?([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*$", part.split("=")[0])
            if n and n.group(1) not in ("__device__", "__constant__"):
                names.append(n.group(1))
        regs = "".join(' static ::cudasim::detail::SymbolReg cudasim_symbol_%s_%d(&%s, sizeof(%s), "%s", __FILE__, __LINE__);'
                       % (n, m.end(), n, n, n) for n in names)
        if regs:
            edits.append(Edit(m.end(), m.end(), regs))
    return edits


CUDA_ARCH = 900  # the simulated device: cudaGetDeviceProperties reports sm_90 (launch.cpp)
QUALIFIERS = {"__device__", "__host__", "__global__", "__forceinline__", "__noinline__", "inline", "static",
              "constexpr", "extern", "__inline__"}
QUALIFIER_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]*?)[ \t]*$", re.M)


def qualifier_macros(src):
    """{NAME: "__host__ __device__"} for object-like macros made only of function qualifiers
    (`#define HD __host__ __device__`), so that `HD float f()` is judged like its expansion."""
    out = {}
    for m in QUALIFIER_MACRO.finditer(src):
        words = m.group(2).split()
        if words and all(w in QUALIFIERS for w in words) and {"__device__", "__global__", "__host__"} & set(words):
            out.setdefault(m.group(1), " ".join(words))
    return out


def is_device_function_head(head, macros):
    """Whether `head {` opens the body of a function that only the device runs: `__global__` or
    `__device__` without `__host__` (a `__host__ __device__` function is compiled once, for host
    and device callers alike: it gets the host pass), or a `[...] __device__` lambda."""
    head = strip_template_params(head)
    for name, expansion in macros.items():
        head = re.sub(r"\b%s\b" % name, expansion, head)
    if re.search(r"\b__host__\b", head):
        return False
    if re.search(r"\]\s*__device__\b", head):
        return True  # an extended lambda: [=] __device__ (int i) { ... }
    if not re.search(r"\b(__global__|__device__)\b", head) or "(" not in head:
        return False
    # A variable (`__device__ int v = f(2);`, `__device__ T t{...}`), not a function: `=` outside
    # parentheses that is not part of an operator's name or a comparison.
    bare = re.sub(r"\boperator\s*(?:\(\)|[^\s(]+)", "operator", head)
    depth = 0
    for i, ch in enumerate(bare):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "=" and depth == 0 and bare[i + 1:i + 2] != "=" and bare[i - 1:i] not in "=!<>":
            return False
    return True


def matching_brace(code, open_at):
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return -1


def has_init_list(head):
    """`S(int x) : a(x), b`: a constructor's member initializers so far (a single `:` outside
    parentheses; access labels such as `public:` are not one)."""
    head = re.sub(r"\b(?:public|private|protected)\s*:(?!:)", " ", strip_template_params(head))
    depth = 0
    for i, ch in enumerate(head):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == ":" and depth == 0 and head[i - 1:i] != ":" and head[i + 1:i + 2] != ":":
            return True
    return False


def device_function_bodies(code, macros):
    """(open, close) offsets of the braces of every device-only function body (see
    is_device_function_head), outermost only."""
    bodies = []
    i, n, stmt = 0, len(code), 0
    while i < n:
        ch = code[i]
        if ch in ";}":
            stmt = i + 1
        elif ch == "{":
            head = code[stmt:i]
            if is_device_function_head(head, macros):
                if has_init_list(head) and re.search(r"[\w>]\s*$", head):
                    # `S() : a{1}, b{2} {`: a member initializer's braces, not the body yet.
                    close = matching_brace(code, i)
                    if close < 0:
                        return bodies
                    i = close + 1
                    continue
                close = matching_brace(code, i)
                if close < 0:
                    return bodies
                bodies.append((i, close))
                i = stmt = close + 1
                continue
            stmt = i + 1
        i += 1
    return bodies


def find_device_bodies(src, code, path):
    """Edits that define __CUDA_ARCH__ inside device-only function bodies; a `#line` after each
    directive gives the rest of the line its original number (see the module's docstring)."""
    line_path = os.path.abspath(path).replace("\\", "/")
    edits = []
    for open_at, close in device_function_bodies(code, qualifier_macros(src)):
        for at, directive in ((open_at, "#define __CUDA_ARCH__ %d" % CUDA_ARCH), (close, "#undef __CUDA_ARCH__")):
            line = src.count("\n", 0, at) + 1
            edits.append(Edit(at + 1, at + 1, '\n%s\n#line %d "%s"\n' % (directive, line, line_path)))
    return edits


def find_printf(code):
    # Also std::printf and ::printf (the qualifier goes too: cudasim_printf is a global function).
    pattern = r"(?<![\w.:>])((?:::\s*)?(?:std\s*::\s*)?printf)\s*\("
    return [Edit(m.start(1), m.end(1), "cudasim_printf") for m in re.finditer(pattern, code)]


def find_clock(code):
    return [Edit(m.start(1), m.end(1), "cudasim_clock") for m in re.finditer(r"(?<![\w.:>])(clock)\s*\(\s*\)", code)]


def find_noinline(code):
    """CUDA's `__noinline__` (`__device__ __noinline__ int f()`). A macro cannot give it: libstdc++
    spells GCC's attribute `__attribute__((__noinline__))`, which the macro would break. So the
    user's own uses become the attribute, and one already inside an attribute list stays."""
    edits = []
    for m in re.finditer(r"\b__noinline__\b", code):
        before = code[max(0, m.start() - 200):m.start()]
        at = before.rfind("__attribute__")
        if at >= 0 and before[at:].count("(") > before[at:].count(")"):
            continue
        edits.append(Edit(m.start(), m.end(), "__attribute__((noinline))"))
    return edits


def translate(src, path, program=None):
    code = mask_comments_and_strings(src)
    shared_edits, thread_local_shared = find_shared(src, code)
    edits = find_launches(src, code, program) + shared_edits + find_printf(code) + find_clock(code) + find_device_vars(code)
    edits += find_noinline(code)
    edits += find_device_bodies(src, code, path)
    # An insertion goes before a replacement that starts at the same offset (`{__shared__ ...`).
    edits.sort(key=lambda e: (e.start, e.end > e.start))
    out, pos = [], 0
    for e in edits:
        if e.start < pos:
            continue  # overlapping (e.g. printf inside a launch argument list): the launch wins
        out.append(src[pos:e.start])
        out.append(e.text)
        pos = e.end
    out.append(src[pos:])
    if thread_local_shared:
        out.append(THREAD_LOCAL_SHARED_NOTE)  # after the last line: no line number moves
    abs_path = os.path.abspath(path).replace("\\", "/")
    return f'#line 1 "{abs_path}"\n' + "".join(out)


INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]', re.M)
DEVICE_CODE = re.compile(r"__global__|__device__|__shared__|__constant__|<<<|\bclock\s*\(")


def local_includes(path, src, include_dirs):
    """The files `#include`d by src that exist on disk: quoted names next to the file first, then
    in include_dirs; angle-bracket names only in include_dirs (so the simulator's own
    <cuda_runtime.h> is never taken for a program file)."""
    found = []
    for m in INCLUDE.finditer(src):
        dirs = ([os.path.dirname(path)] if m.group(1) == '"' else []) + list(include_dirs)
        for d in dirs:
            cand = os.path.normpath(os.path.join(d, m.group(2)))
            if os.path.isfile(cand):
                found.append(cand)
                break
    return found


def mirror_path(tree, path):
    return os.path.join(tree, os.path.abspath(path).lstrip("/\\").replace(":", ""))


def translate_tree(sources, tree, include_dirs=()):
    """Translate each source and every file it includes, directly or not, from its own folder or
    from include_dirs, into tree/<absolute path of the file>, so that `#include "kernel.cuh"`
    finds the translated header next to the translated file. Files with device code (or a
    .cu/.cuh name) are translated; the others are copied with a #line directive. Returns
    (the translated sources, every file read)."""
    todo = [os.path.abspath(s) for s in sources]
    files = {}  # path: text, in the order found
    while todo:
        path = todo.pop()
        if path in files:
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            files[path] = f.read()
        todo.extend(p for p in local_includes(path, files[path], include_dirs) if p not in files)
    # The kernels of every file, so that a launch of a kernel from an included header is a plain
    # launch (parameters copied once, on the host) with the parameters' names.
    device_files = {p: src for p, src in files.items() if p.endswith((".cu", ".cuh")) or DEVICE_CODE.search(src)}
    params, facts = {}, []
    for src in device_files.values():
        code = mask_comments_and_strings(src)
        for k, v in kernel_params(code).items():
            params.setdefault(k, v)
        facts.append(kernel_facts(code))
    program = (params, merge_facts(facts))
    outputs = []
    for path, src in files.items():
        if path in device_files:
            try:
                text = translate(src, path, program)
            except ValueError as e:
                raise ValueError(f"{path}: error: {e}")
        else:
            text = f'#line 1 "{path}"\n' + src
        out = mirror_path(tree, path)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        write_if_changed(out, text)
    for s in sources:
        out = mirror_path(tree, s) + ".cpp"  # the name a C++ compiler (and CMake) builds as C++
        with open(mirror_path(tree, s), encoding="utf-8") as f:
            write_if_changed(out, f.read())
        os.utime(out)  # newer than its inputs, so that make/ninja consider the step done
        outputs.append(out)
    return outputs, sorted(files)


def write_if_changed(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return  # keeps the timestamp, so make/ninja do not rebuild
    except OSError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main_tree(argv):
    """--tree DIR [-I DIR]... [--depfile FILE] SOURCE...: the program mode (see translate_tree).
    Prints the translated sources, one a line; the depfile names every file read."""
    tree, dirs, depfile, sources = None, [], None, []
    it = iter(argv)
    for a in it:
        if a == "--tree":
            tree = next(it)
        elif a == "-I":
            dirs.append(next(it))
        elif a.startswith("-I"):
            dirs.append(a[2:])
        elif a == "--depfile":
            depfile = next(it)
        else:
            sources.append(a)
    if not tree or not sources:
        print("usage: cu2cpp.py --tree DIR [-I DIR]... [--depfile FILE] SOURCE.cu...", file=sys.stderr)
        return 2
    try:
        outputs, read = translate_tree(sources, tree, dirs)
    except (ValueError, OSError) as e:
        print(e, file=sys.stderr)
        return 1
    if depfile:
        esc = lambda p: p.replace(" ", "\\ ")
        write_if_changed(depfile, "".join(f"{esc(o)}: {' '.join(esc(r) for r in read)}\n" for o in outputs))
    print("\n".join(outputs))
    return 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--tree":
        return main_tree(argv[1:])
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    src_path, out_path = argv[1], argv[2]
    with open(src_path, encoding="utf-8") as f:
        src = f.read()
    try:
        result = translate(src, src_path)
    except ValueError as e:
        print(f"{src_path}: error: {e}", file=sys.stderr)
        return 1
    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(result)
    os.replace(tmp, out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
