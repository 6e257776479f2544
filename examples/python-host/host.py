#!/usr/bin/env python3
"""python-host: embeds sitefile in Python through ctypes and include/sitefile.h's contract only.

    python3 host.py [SITE_DIR [URL]]    (defaults: ../storefront, https://storefront.example/shoes)

It loads libsitefile (the path in $SITEFILE_LIB, else the system's `sitefile` library), loads
the site, begins resolving the page for URL, answers each round of loader calls with canned data
(a real host would call its commerce platform here) and prints the page JSON (with its effects)
on stdout, as the library wrote it. The statuses, the out-parameters and who frees what are
those of the header; every string the library returns is freed with sitefile_string_free.
"""

import ctypes
import ctypes.util
import json
import os
import sys

# Canned loader results, by loader key (the same data as examples/c-host).
CANNED = {
    "vtex/loaders/intelligentSearch/productListingPage.ts":
        '{"products": [{"name": "Trail runner", "price": 89.9}, '
        '{"name": "City sneaker", "price": 64.5}], "pageInfo": {"records": 2}}',
    "vtex/loaders/intelligentSearch/productList.ts":
        '[{"name": "Canvas tote", "price": 24.0}, {"name": "Trail runner", "price": 89.9}]',
    "vtex/loaders/intelligentSearch/productDetailsPage.ts":
        '{"product": {"name": "Trail runner", "price": 89.9}}',
}

SITEFILE_STATUS_OK = 0


class Site(ctypes.Structure):
    """sitefile_site, opaque."""


class Resolution(ctypes.Structure):
    """sitefile_resolution, opaque."""


class Host(ctypes.Structure):
    """sitefile_host, opaque."""


def load_library():
    path = os.environ.get("SITEFILE_LIB") or ctypes.util.find_library("sitefile")
    if not path:
        sys.exit("python-host: libsitefile not found: set SITEFILE_LIB to its path")
    lib = ctypes.CDLL(path)
    status = ctypes.c_int
    # Strings the library returns are declared c_void_p, not c_char_p: ctypes would copy a
    # c_char_p into bytes and lose the pointer sitefile_string_free needs.
    signatures = {
        "sitefile_version": (ctypes.c_char_p, []),
        "sitefile_last_error": (ctypes.c_char_p, []),
        "sitefile_status_name": (ctypes.c_char_p, [ctypes.c_int]),
        "sitefile_string_free": (None, [ctypes.c_void_p]),
        "sitefile_site_from_dir": (
            status, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.POINTER(Site))]),
        "sitefile_site_free": (None, [ctypes.POINTER(Site)]),
        "sitefile_resolve_begin": (
            status,
            [ctypes.POINTER(Site), ctypes.c_char_p, ctypes.POINTER(Host),
             ctypes.POINTER(ctypes.POINTER(Resolution))]),
        "sitefile_resolution_next": (
            status, [ctypes.POINTER(Resolution), ctypes.POINTER(ctypes.c_void_p)]),
        "sitefile_resolution_provide": (
            status, [ctypes.POINTER(Resolution), ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p]),
        "sitefile_resolution_free": (None, [ctypes.POINTER(Resolution)]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib


class SitefileError(Exception):
    """A call returned a status other than SITEFILE_STATUS_OK."""


def check(lib, what, status):
    if status != SITEFILE_STATUS_OK:
        name = lib.sitefile_status_name(status).decode()
        message = lib.sitefile_last_error().decode("utf-8", "replace")
        raise SitefileError(f"{what}: {name}: {message}")


def take_string(lib, pointer):
    """Copies a string the library returned, then frees it with sitefile_string_free."""
    try:
        return ctypes.string_at(pointer.value).decode("utf-8")
    finally:
        lib.sitefile_string_free(pointer)


def resolve(lib, site, url):
    """Resolves the page for `url`, answering loader rounds from CANNED; returns the page text."""
    request = json.dumps({"url": url, "method": "GET"}).encode()
    res = ctypes.POINTER(Resolution)()
    check(lib, "resolve", lib.sitefile_resolve_begin(site, request, None, ctypes.byref(res)))
    try:
        while True:
            out = ctypes.c_void_p()
            check(lib, "next", lib.sitefile_resolution_next(res, ctypes.byref(out)))
            text = take_string(lib, out)
            step = json.loads(text)
            if step["step"] == "done":
                # {"step":"done","value":<page>}: the page as the library wrote it.
                prefix = '{"step":"done","value":'
                assert text.startswith(prefix) and text.endswith("}")
                return text[len(prefix):-1]
            for call in step["value"]:
                result = CANNED.get(call["key"])
                print(f"python-host: loader {call['key']} (call {call['id']}): "
                      f"{'canned data' if result is not None else 'no data'}", file=sys.stderr)
                if result is not None:
                    status = lib.sitefile_resolution_provide(res, call["id"], result.encode(), None)
                else:
                    status = lib.sitefile_resolution_provide(
                        res, call["id"], None, b"python-host has no canned data for this loader")
                check(lib, "provide", status)
    finally:
        lib.sitefile_resolution_free(res)


def main(argv):
    site_dir = argv[1] if len(argv) > 1 else "../storefront"
    url = argv[2] if len(argv) > 2 else "https://storefront.example/shoes"
    lib = load_library()
    site = ctypes.POINTER(Site)()
    try:
        check(lib, site_dir, lib.sitefile_site_from_dir(site_dir.encode(), None, ctypes.byref(site)))
        print(resolve(lib, site, url))
    except SitefileError as error:
        print(f"python-host: {error}", file=sys.stderr)
        return 1
    finally:
        lib.sitefile_site_free(site)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
