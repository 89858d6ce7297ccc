"""Drive Debian's Chromium through chromedriver's WebDriver protocol (JSON
over HTTP: the standard library is enough) for the HTML report's tests.

    with Browser(workdir) as b:
        b.open(path)
        b.js("return 1 + 1")
        b.click("css selector")
        b.type("css selector", "text")
        b.console_errors()
        b.screenshot("out.png")

Browser() raises Unavailable when chromium or chromedriver is missing or
will not start: the test then exits 77 (skipped).
"""

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import time
import urllib.error
import urllib.request
import zlib


class Unavailable(Exception):
    pass


FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-quic", "--window-size=1280,900"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Browser:
    def __init__(self, workdir):
        self.binary = shutil.which("chromium") or "/usr/bin/chromium"
        self.driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
        if not (os.access(self.binary, os.X_OK) and os.access(self.driver, os.X_OK)):
            raise Unavailable("no chromium or chromedriver (apt install chromium chromium-driver)")
        self.workdir = workdir
        self.port = free_port()
        self.proc = subprocess.Popen(
            [self.driver, "--port=%d" % self.port],
            stdout=open(os.path.join(workdir, "chromedriver.log"), "w"),
            stderr=subprocess.STDOUT)
        self.url = "http://127.0.0.1:%d" % self.port
        for _ in range(200):
            try:
                if self._call("GET", "/status")["value"].get("ready"):
                    break
            except (OSError, urllib.error.URLError, ValueError):
                pass
            time.sleep(0.05)
        else:
            self.close()
            raise Unavailable("chromedriver did not start")
        profile = os.path.join(workdir, "chromium-profile")
        os.makedirs(profile, exist_ok=True)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": self.binary,
                                   "args": FLAGS + ["--user-data-dir=" + profile]},
            "goog:loggingPrefs": {"browser": "ALL"}}}}
        try:
            r = self._call("POST", "/session", caps, timeout=60)
        except (OSError, urllib.error.URLError) as e:
            self.close()
            raise Unavailable("chromium did not start: %s" % e)
        if "sessionId" not in r.get("value", {}):
            self.close()
            raise Unavailable("chromium did not start: %s" % r)
        self.sid = r["value"]["sessionId"]

    def _call(self, method, path, body=None, timeout=30):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as f:
                return json.loads(f.read() or b"{}")
        except urllib.error.HTTPError as e:
            raise AssertionError("webdriver %s %s: %s" % (method, path, e.read()[:500]))

    def s(self, method, path, body=None):
        return self._call(method, "/session/%s%s" % (self.sid, path), body)["value"]

    def open(self, path):
        self.s("POST", "/url", {"url": "file://" + os.path.abspath(path)})

    def js(self, script, *args):
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def element(self, css):
        v = self.s("POST", "/element", {"using": "css selector", "value": css})
        return list(v.values())[0]

    def click(self, css):
        self.s("POST", "/element/%s/click" % self.element(css), {})

    def type(self, css, text):
        self.s("POST", "/element/%s/value" % self.element(css), {"text": text})

    def console_errors(self):
        """The page's console messages of level SEVERE (errors)."""
        logs = self.s("POST", "/se/log", {"type": "browser"})
        return [e for e in logs if e.get("level") == "SEVERE"]

    def screenshot(self, path):
        png = base64.b64decode(self.s("GET", "/screenshot"))
        with open(path, "wb") as f:
            f.write(png)
        return png

    def close(self):
        try:
            if getattr(self, "sid", None):
                self._call("DELETE", "/session/" + self.sid, timeout=20)
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def png_colours(png, limit=1000):
    """Distinct pixel colours of an 8-bit RGB/RGBA non-interlaced PNG (as
    Chromium writes them), counted up to limit: a blank page has one."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(png):
        n, kind = struct.unpack(">I4s", png[pos:pos + 8])
        chunk = png[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and ctype in (2, 6) and inter == 0, (depth, ctype, inter)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    seen = set()
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        if y % 8 == 0:
            for x in range(0, stride, bpp * 8):
                seen.add(bytes(line[x:x + 3]))
                if len(seen) >= limit:
                    return len(seen)
        prev = line
    return len(seen)
