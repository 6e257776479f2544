"""app.py: resolves the home page of my-site through libsitefile, as a desktop and as a phone
(docs/src/getting-started/python.md). Only the standard library: ctypes and json."""

import ctypes
import json
import os

lib = ctypes.CDLL(os.environ["SITEFILE_LIB"])
# Declare each function called. Strings the library hands over are c_void_p, not c_char_p,
# so the pointer is kept for sitefile_string_free.
P = ctypes.POINTER
lib.sitefile_last_error.restype = ctypes.c_char_p
lib.sitefile_status_name.restype = ctypes.c_char_p
lib.sitefile_site_from_dir.argtypes = [ctypes.c_char_p, ctypes.c_char_p, P(ctypes.c_void_p)]
lib.sitefile_site_free.argtypes = [ctypes.c_void_p]
lib.sitefile_resolve_begin.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, P(ctypes.c_void_p)]
lib.sitefile_resolution_next.argtypes = [ctypes.c_void_p, P(ctypes.c_void_p)]
lib.sitefile_resolution_provide.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p]
lib.sitefile_resolution_free.argtypes = [ctypes.c_void_p]
lib.sitefile_string_free.argtypes = [ctypes.c_void_p]


def check(status):
    """Raises the library's message when a call did not return SITEFILE_STATUS_OK (0)."""
    if status != 0:
        name = lib.sitefile_status_name(status).decode()
        raise RuntimeError(f"{name}: {lib.sitefile_last_error().decode()}")


def take(pointer):
    """The string the library handed over, then freed."""
    try:
        return ctypes.string_at(pointer.value).decode()
    finally:
        lib.sitefile_string_free(pointer)


def products(props):
    """The site's products loader (a real host asks its commerce platform)."""
    return [{"name": f"Product {i + 1}", "price": 10 * (i + 1)} for i in range(props.get("count", 3))]


LOADERS = {"site/loaders/products.ts": products}


def resolve(site, request):
    """Drives one resolution to its page, running each round of loader calls."""
    res = ctypes.c_void_p()
    check(lib.sitefile_resolve_begin(site, json.dumps(request).encode(), None, ctypes.byref(res)))
    try:
        while True:
            out = ctypes.c_void_p()
            check(lib.sitefile_resolution_next(res, ctypes.byref(out)))
            step = json.loads(take(out))
            if step["step"] == "done":
                return step["value"]
            for call in step["value"]:  # {"id", "key", "props"}
                loader = LOADERS.get(call["key"])
                if loader is None:
                    check(lib.sitefile_resolution_provide(res, call["id"], None, b"no such loader"))
                else:
                    result = json.dumps(loader(call["props"])).encode()
                    check(lib.sitefile_resolution_provide(res, call["id"], result, None))
    finally:
        lib.sitefile_resolution_free(res)


site = ctypes.c_void_p()
check(lib.sitefile_site_from_dir(b"my-site", None, ctypes.byref(site)))
try:
    for agent in ["Mozilla/5.0 (X11; Linux x86_64)",
                  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148"]:
        request = {"url": "https://my-site.example/", "headers": [["user-agent", agent]]}
        page = resolve(site, request)
        print(json.dumps([section["props"] for section in page["sections"]]))
finally:
    lib.sitefile_site_free(site)
