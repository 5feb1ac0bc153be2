"""A headless Chromium driven over the DevTools protocol through a pipe (--remote-debugging-pipe),
with the standard library only: no WebDriver, no network port.

    with Browser() as b:                     # Browser.find() says where Chromium is, or None
        page = b.open("file:///tmp/r.html")  # waits for the load event
        page.evaluate("document.title")
        page.screenshot("r.png")

Every console message, uncaught exception and JavaScript dialog (alert, confirm, prompt) of a
page is recorded in page.console, page.exceptions and page.dialogs; a dialog is dismissed at once.
"""
import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, executable=None, timeout=60.0):
        self.executable = executable or Browser.find()
        if not self.executable:
            raise BrowserError("no Chromium on PATH")
        self.timeout = timeout
        self._id = 0
        self._buf = b""
        self._events = []
        self._dialogs = []  # (session, type, message) of every dialog, dismissed as it opened

    @staticmethod
    def find():
        for name in [os.environ.get("LAPTIME_CHROMIUM", "")] + list(CANDIDATES):
            if name and shutil.which(name):
                return shutil.which(name)
        return None

    def __enter__(self):
        self._profile = tempfile.mkdtemp(prefix="laptime-chromium-")
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()

        def child():  # Chromium reads commands on fd 3 and answers on fd 4
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        args = [self.executable, "--headless=new", "--remote-debugging-pipe", "--no-first-run",
                "--no-default-browser-check", "--disable-gpu", "--disable-extensions",
                "--disable-background-networking", "--disable-sync", "--mute-audio",
                "--hide-scrollbars", "--force-color-profile=srgb", "--font-render-hinting=none",
                "--user-data-dir=" + self._profile, "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses to run its sandbox as root
        self._proc = subprocess.Popen(args, pass_fds=(3, 4), preexec_fn=child,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._w = os.fdopen(to_chrome_w, "wb", buffering=0)
        self._r = os.fdopen(from_chrome_r, "rb", buffering=0)
        return self

    def __exit__(self, *exc):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._w.close()
        self._r.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def _read(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.time()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self._r.fileno(), 1 << 16)
            if not chunk:
                raise BrowserError("Chromium closed the pipe")
            self._buf += chunk
        msg, _, self._buf = self._buf.partition(b"\0")
        m = json.loads(msg)
        if m.get("method") == "Page.javascriptDialogOpening":
            # A dialog stops the page (its load event never comes): dismissed at once, recorded.
            self._dialogs.append((m.get("sessionId"), m["params"].get("type"), m["params"].get("message")))
            self._send("Page.handleJavaScriptDialog", {"accept": False}, m.get("sessionId"))
        return m

    def _send(self, method, params, session):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self._w.write(json.dumps(msg).encode() + b"\0")
        return self._id

    def call(self, method, params=None, session=None, timeout=None):
        sent = self._send(method, params, session)
        deadline = time.time() + (timeout or self.timeout)
        while True:
            m = self._read(deadline)
            if m.get("id") == sent:
                if "error" in m:
                    raise BrowserError("%s: %s" % (method, m["error"].get("message")))
                return m.get("result", {})
            self._events.append(m)

    def wait_event(self, method, session, timeout=None):
        deadline = time.time() + (timeout or self.timeout)
        while True:
            for i, m in enumerate(self._events):
                if m.get("method") == method and m.get("sessionId") == session:
                    return self._events.pop(i)
            self._events.append(self._read(deadline))

    def open(self, url, width=1400, height=900, dark=False):
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, target, session)
        for domain in ("Page", "Runtime", "Log"):
            self.call(domain + ".enable", session=session)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
        self.call("Emulation.setEmulatedMedia",
                  {"features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]},
                  session=session)
        start = time.time()
        self.call("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session)
        page.load_seconds = time.time() - start
        page.collect()
        return page


class Page:
    def __init__(self, browser, target, session):
        self.browser, self.target, self.session = browser, target, session
        self.console, self.exceptions, self.dialogs = [], [], []
        self.load_seconds = None

    def collect(self):
        """Moves the events received so far into console, exceptions and dialogs."""
        keep = []
        for m in self.browser._events:
            if m.get("sessionId") != self.session:
                keep.append(m)
                continue
            method, p = m.get("method"), m.get("params", {})
            if method == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                self.console.append((p.get("type"), text))
            elif method == "Log.entryAdded":
                e = p.get("entry", {})
                self.console.append((e.get("level"), e.get("text", "")))
            elif method == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                self.exceptions.append(d.get("exception", {}).get("description") or d.get("text"))
        self.browser._events = keep
        for d in [d for d in self.browser._dialogs if d[0] == self.session]:
            self.dialogs.append(d[1:])
            self.browser._dialogs.remove(d)

    def errors(self):
        self.collect()
        return [t for level, t in self.console if level in ("error", "assert")] + [str(e) for e in self.exceptions]

    def evaluate(self, expression):
        r = self.browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                    "awaitPromise": True}, session=self.session)
        if "exceptionDetails" in r:
            raise BrowserError("page script failed: %s" % r["exceptionDetails"].get("exception", {}).get("description"))
        self.collect()
        return r.get("result", {}).get("value")

    def screenshot(self, path, full_page=False):
        params = {"format": "png"}
        if full_page:
            size = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params["clip"] = {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.browser.call("Page.captureScreenshot", params, session=self.session)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        self.browser.call("Target.closeTarget", {"targetId": self.target})
