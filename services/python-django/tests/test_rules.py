"""The contract's input rules, the routes and the worker/pool arithmetic,
without a server or database: .venv/bin/python -m unittest discover -s tests"""

import asyncio
import os
import unittest
from unittest import mock

from app import config
from app.httpjson import MAX_ID, ApiError, get_int, get_str
from app.observe import clean_path, read_body


class GetInt(unittest.TestCase):
    def test_accepts(self):
        for raw, want in [
            (10, 10),  # a plain integer
            (10.0, 10),  # I-JSON: 10.0 is 10
            (1e1, 10),  # and so is 1e1
            (MAX_ID, MAX_ID),  # the largest id is exact in a double
        ]:
            with self.subTest(raw=raw):
                self.assertEqual(get_int({"n": raw}, "n", 1, MAX_ID), want)

    def test_refuses(self):
        for obj in [
            {},  # missing
            {"n": "10"},  # a string, even of digits
            {"n": True},  # a boolean (a subclass of int in Python)
            {"n": None},  # null
            {"n": 10.5},  # not integral
            {"n": 0},  # below the range
            {"n": MAX_ID + 2},  # 2^53+1 reads as 2^53: over the range
            {"n": 10**400},  # beyond a double
            {"n": float("inf")},  # not a number the contract knows
            {"n": [1]},  # an array
        ]:
            with self.subTest(obj=obj):
                with self.assertRaises(ApiError) as e:
                    get_int(obj, "n", 1, MAX_ID)
                self.assertEqual(e.exception.status, 400)


class GetStr(unittest.TestCase):
    def test_refuses(self):
        for obj in [{}, {"s": ""}, {"s": "a\x00b"}, {"s": 1}, {"s": None}]:  # missing, empty, NUL, number, null
            with self.subTest(obj=obj):
                with self.assertRaises(ApiError):
                    get_str(obj, "s")

    def test_accepts_unicode(self):
        self.assertEqual(get_str({"s": "straße"}, "s").upper(), "STRASSE")  # full case mapping


class CleanPath(unittest.TestCase):
    def test(self):
        for raw, want in [
            (b"/health", True),  # the common case
            (b"/health/", True),  # a trailing slash is the router's business (404)
            (b"/client/%2e%2e/balance", True),  # encoded dots are a value (400 later)
            (b"/client/../balance", False),  # a dot segment never matches a route
            (b"/./health", False),
            (b"//health", False),  # an empty segment
            (b"/sku/1?x=/../", True),  # the query string is not the path
        ]:
            with self.subTest(raw=raw):
                self.assertEqual(clean_path(raw), want)


class Routes(unittest.TestCase):
    """Each path resolves to the view of its contract pattern, which is
    also its metrics label; anything else reaches the 404 view."""

    @classmethod
    def setUpClass(cls):
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "app.settings")
        import django

        django.setup(set_prefix=False)

    def test_labels(self):
        from django.urls import resolve

        for path, label in [
            ("/uppercase", "/uppercase"),
            ("/client/new/0", "/client/new/{balance}"),
            ("/client/12/balance", "/client/{id}/balance"),
            ("/client/abc/balance", "/client/{id}/balance"),  # a value the view refuses (400), not a 404
            ("/user", "/user"),
            ("/user/7", "/user/{id}"),
            ("/sku/3", "/sku/{sku_id}"),
            ("/metrics", "/metrics"),
            ("/health/", None),  # a trailing slash is another path
            ("/user/7/x", None),
            ("/", None),
        ]:
            with self.subTest(path=path):
                self.assertEqual(getattr(resolve(path).func, "route_label", None), label)


class BodyLimit(unittest.TestCase):
    def read(self, chunks, headers=()):
        messages = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]

        async def receive():
            return messages.pop(0)

        return asyncio.run(read_body({"headers": list(headers)}, receive))

    def test(self):
        mib = 1 << 20
        self.assertEqual(self.read([b'{"s":', b'"x"}']), b'{"s":"x"}')  # chunks joined
        self.assertEqual(self.read([b"x" * mib]), b"x" * mib)  # exactly 1 MiB is allowed
        self.assertEqual(self.read([b"x" * mib, b"x"])[0], 413)  # one byte over, however it arrives
        self.assertEqual(self.read([b""], [(b"content-length", str(mib + 1).encode())])[0], 413)  # declared: before reading


class Workers(unittest.TestCase):
    def load(self, cpus, **env):
        with mock.patch.object(config, "usable_cpus", return_value=cpus):
            return config.load({"DATABASE_URL": "postgres://u@h/d", **env})

    def test_split(self):
        for cpus, env, workers, per in [
            (2, {}, 2, 10),  # the default 20 over two CPUs
            (1, {}, 1, 20),  # one CPU: one worker with the whole pool
            (4, {"DB_POOL_SIZE": "2"}, 2, 1),  # auto is capped at the pool size
            (2, {"WORKERS": "3"}, 3, 6),  # 20 over 3 rounds down: 18 in all
        ]:
            with self.subTest(cpus=cpus, env=env):
                c = self.load(cpus, **env)
                self.assertEqual((c.workers, c.worker_pool_size), (workers, per))
                self.assertLessEqual(c.workers * c.worker_pool_size, c.pool_size)

    def test_refused(self):
        with self.assertRaises(config.ConfigError) as e:
            self.load(2, WORKERS="4", DB_POOL_SIZE="3", PORT="x", DB_ACQUIRE_TIMEOUT="2")
        for part in ("WORKERS=4", "PORT=", "DB_ACQUIRE_TIMEOUT="):  # every mistake at once
            self.assertIn(part, str(e.exception))


if __name__ == "__main__":
    unittest.main()
