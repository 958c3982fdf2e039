"""The `page` of a python call in a Gleaner sandbox: Playwright's async API names, bridged to the
Node runner that owns the browser connection (there is no Python Playwright in the sandbox).

The runner starts this file with fd 3 a socket: the first line is {"code": ...}; then each call is
one JSON line out ({"id", "chain", "method", "args", "kwargs"}) and one back ({"id", "value"} or
{"id", "error", "name"}); the last line out is {"type": "done", "result"?, "error"?}. Calls block
on their answer, so they run one at a time even under asyncio.gather.

Method and keyword names are Playwright's Python ones (snake_case); the runner maps them to the
Node API (camelCase, keywords as the options object). Values cross as JSON; bytes (a screenshot)
as base64; Playwright objects (a Response, an ElementHandle) come back as None.
"""

import ast
import asyncio
import base64
import inspect
import json
import os
import sys
import traceback

_channel_in = os.fdopen(3, "rb", buffering=0)
_buffer = b""
_next_id = 0
_RESULT = "__gleaner_result__"


def _send(message):
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(3, data) :]


def _receive():
    global _buffer
    while b"\n" not in _buffer:
        chunk = _channel_in.read(65536)
        if not chunk:
            raise ConnectionError("the Gleaner runner closed the bridge")
        _buffer += chunk
    line, _buffer = _buffer.split(b"\n", 1)
    return json.loads(line)


class Error(Exception):
    """A Playwright call failed (playwright.async_api.Error)."""


class TimeoutError(Error):
    """A Playwright call timed out (playwright.async_api.TimeoutError)."""


def _from_wire(value):
    if isinstance(value, dict):
        if set(value) == {"__bytes__"}:
            return base64.b64decode(value["__bytes__"])
        return {k: _from_wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_wire(v) for v in value]
    return value


def _call(chain, method, args, kwargs):
    global _next_id
    _next_id += 1
    _send({"id": _next_id, "chain": chain, "method": method, "args": list(args), "kwargs": kwargs})
    answer = _receive()
    if "error" in answer:
        raise (TimeoutError if answer.get("name") == "TimeoutError" else Error)(answer["error"])
    return _from_wire(answer.get("value"))


class _Remote:
    """A Playwright object on the Node side, named by the steps from the page to it."""

    _chain_methods = ()  # methods that make another object without a round trip
    _properties = ()  # attributes read as values, not called

    def __init__(self, chain=()):
        self._chain = list(chain)

    def _step(self, name, args=(), kwargs=None):
        return {"name": name, "args": list(args), "kwargs": kwargs or {}}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._properties:
            return _call(self._chain, name, (), {})
        if name in self._chain_methods:
            return lambda *args, **kwargs: Locator(self._chain + [self._step(name, args, kwargs)])

        async def method(*args, **kwargs):
            return _call(self._chain, name, args, kwargs)

        method.__name__ = name
        return method


_LOCATOR_FACTORIES = (
    "locator",
    "get_by_text",
    "get_by_role",
    "get_by_label",
    "get_by_placeholder",
    "get_by_alt_text",
    "get_by_title",
    "get_by_test_id",
    "nth",
    "filter",
)


class Locator(_Remote):
    _chain_methods = _LOCATOR_FACTORIES

    @property
    def first(self):
        return Locator(self._chain + [self._step("first")])

    @property
    def last(self):
        return Locator(self._chain + [self._step("last")])


class _Input(_Remote):
    """page.keyboard, page.mouse."""


class Page(_Remote):
    _chain_methods = _LOCATOR_FACTORIES
    _properties = ("url",)

    @property
    def keyboard(self):
        return _Input([self._step("keyboard")])

    @property
    def mouse(self):
        return _Input([self._step("mouse")])


page = Page()


def _compile(code):
    """The caller's code, compiled with top-level await; its last expression's value kept in _RESULT."""
    tree = ast.parse(code, "<code>", "exec")
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        tree.body[-1] = ast.Assign(targets=[ast.Name(_RESULT, ast.Store())], value=last.value)
        ast.copy_location(tree.body[-1], last)
        ast.fix_missing_locations(tree)
    return compile(tree, "<code>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


async def _run(code):
    scope = {"__name__": "__main__", "page": page, "asyncio": asyncio}
    outcome = eval(_compile(code), scope)  # a coroutine when the code awaits
    if inspect.iscoroutine(outcome):
        await outcome
    return scope.get(_RESULT)


def main():
    code = _receive()["code"]
    try:
        value = asyncio.run(_run(code))
    except SystemExit:
        raise
    except BaseException as err:  # noqa: BLE001 - everything the caller's code raises is reported
        traceback.print_exc()
        _send({"type": "done", "error": f"{type(err).__name__}: {err}"})
        sys.exit(1)
    _send({"type": "done", "result": None if value is None else json.dumps(value, default=str)})


if __name__ == "__main__":
    main()
