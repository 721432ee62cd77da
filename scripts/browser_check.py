#!/usr/bin/env python3
"""Open an HTML page in headless Chromium and report what a browser sees, as JSON on stdout.

Speaks the Chrome DevTools Protocol over --remote-debugging-pipe (file descriptors 3 and 4,
NUL-separated JSON), so it needs only the Python standard library and Debian's `chromium`.

    browser_check.py PAGE.html [--eval NAME=EXPR]... [--screenshot OUT.png] [--width 1200]

Output: {"load_ms": float, "console_errors": [...], "exceptions": [...],
         "requests": [urls other than the page itself], "eval": {NAME: value}}
EXPR is evaluated in the page after the load event (promises awaited, result by value).
Used by tests/it/report.rs and scripts/report_screenshots.sh.
"""
import argparse
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


class Browser:
    def __init__(self, binary: str, width: int, height: int):
        self.profile = tempfile.mkdtemp(prefix="npgx-chromium-")
        cmd_r, cmd_w = os.pipe()  # we write commands, chromium reads fd 3
        ev_r, ev_w = os.pipe()  # chromium writes fd 4, we read

        def child_fds():
            a, b = os.dup(cmd_r), os.dup(ev_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--mute-audio",
             f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
             "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=child_fds, close_fds=False)
        os.close(cmd_r)
        os.close(ev_w)
        self.w, self.r = cmd_w, ev_r
        self.buf = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def read(self, timeout):
        end = time.monotonic() + timeout
        while b"\0" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.r], [], [], left)[0]:
                return None
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method, params=None, session=None, timeout=30):
        mid = self.send(method, params, session)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            m = self.read(end - time.monotonic())
            if m is None:
                break
            if m.get("id") == mid:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)
        raise TimeoutError(method)

    def wait_event(self, name, timeout=30):
        for i, m in enumerate(self.events):
            if m.get("method") == name:
                return self.events.pop(i)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            m = self.read(end - time.monotonic())
            if m is None:
                break
            if m.get("method") == name:
                return m
            self.events.append(m)
        raise TimeoutError(name)

    def drain(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            m = self.read(end - time.monotonic())
            if m is None:
                break
            self.events.append(m)

    def close(self):
        try:
            self.send("Browser.close")
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("page", type=Path)
    ap.add_argument("--eval", action="append", default=[], metavar="NAME=EXPR")
    ap.add_argument("--screenshot", type=Path, help="write a full-page PNG here")
    ap.add_argument("--width", type=int, default=1200)
    ap.add_argument("--max-height", type=int, default=4000, help="screenshot height cap")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = ap.parse_args()
    url = args.page.resolve().as_uri()
    b = Browser(args.chromium, args.width, 900)
    try:
        target = b.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = b.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            b.call(f"{domain}.enable", session=s)
        b.events.clear()
        t0 = time.monotonic()
        b.call("Page.navigate", {"url": url}, session=s)
        b.wait_event("Page.loadEventFired", timeout=60)
        load_ms = (time.monotonic() - t0) * 1000
        b.drain(0.3)
        out = {"load_ms": round(load_ms, 1), "console_errors": [], "exceptions": [], "requests": [],
               "eval": {}}
        for m in b.events:
            p = m.get("params", {})
            meth = m.get("method")
            if meth == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out["console_errors"].append(" ".join(str(a.get("value", a.get("description")))
                                                      for a in p.get("args", [])))
            elif meth == "Log.entryAdded" and p["entry"].get("level") == "error":
                out["console_errors"].append(p["entry"].get("text", ""))
            elif meth == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out["exceptions"].append(d.get("exception", {}).get("description") or d.get("text"))
            elif meth == "Network.requestWillBeSent" and p["request"]["url"] != url:
                out["requests"].append(p["request"]["url"])
        for e in args.eval:
            name, expr = e.split("=", 1)
            r = b.call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                             "awaitPromise": True}, session=s)
            if "exceptionDetails" in r:
                out["exceptions"].append(f"--eval {name}: {r['exceptionDetails'].get('text')}")
                out["eval"][name] = None
            else:
                out["eval"][name] = r["result"].get("value")
        if args.screenshot:
            h = b.call("Page.getLayoutMetrics", session=s)["cssContentSize"]["height"]
            h = min(int(h) + 1, args.max_height)
            b.call("Emulation.setDeviceMetricsOverride",
                   {"width": args.width, "height": h, "deviceScaleFactor": 1, "mobile": False}, session=s)
            shot = b.call("Page.captureScreenshot", {"format": "png"}, session=s)
            args.screenshot.write_bytes(base64.b64decode(shot["data"]))
        json.dump(out, sys.stdout)
        print()
    finally:
        b.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
