#!/usr/bin/env python3
"""Draws a `mappack serve` viewer page in headless Chromium (Debian's `chromium` and
`chromium-driver`, driven by Selenium) and checks the picture's pixels.

    screenshot.py URL --png OUT.png [--view LON,LAT,ZOOM] [--expect LON,LAT=COLOUR ...] [--width 800] [--height 600] [--timeout 120]

It loads URL (the page at `/`), waits until the page sets `window.mapIdle` (MapLibre's `idle`
event; polled against a deadline), with `--view` moves the map there (`map.jumpTo`) and waits for
its next `idle`, saves the screenshot to OUT.png and, for each `--expect`,
asks the map where LON,LAT is (`map.project`) and compares that pixel of the screenshot with
COLOUR (R,G,B or a name of check_outputs.py's palette: water, land, CH, LI, AT, ...).

Exit 0 when every check passes, 1 with one `FAIL:` line per failed check, 2 on bad usage or a
missing tool. The last line printed is the summary: `screenshot: PASS|FAIL ...`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_outputs import Report, Usage, parse_point  # noqa: E402  (the same palette and report lines)

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# A pixel may differ this much per channel from the style's colour (the compositor's rounding).
TOLERANCE = 12


class ScreenshotReport(Report):
    """check_outputs.py's report lines, with this script's name on the summary line."""

    def finish(self) -> int:
        if self.failures:
            print(f"screenshot: FAIL {len(self.failures)} of {len(self.failures) + self.passed} checks "
                  f"({'; '.join(self.failures)}) - {self.target}", flush=True)
            return 1
        print(f"screenshot: PASS {self.passed} checks - {self.target}", flush=True)
        return 0


def decode_png(data: bytes) -> tuple[int, int, int, bytes]:
    """(width, height, channels, rows of 8-bit pixels) of a non-interlaced 8-bit RGB/RGBA PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    position, idat = 8, bytearray()
    width = height = channels = 0
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError(f"PNG of depth {depth}, colour type {colour}, interlace {interlace}: not read here")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    pixels = bytearray(height * stride)
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:
            for i in range(stride):
                line[i] = (line[i] + previous[i]) & 0xFF
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = previous[i]
                c = previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        pixels[y * stride:(y + 1) * stride] = line
        previous = line
    return width, height, channels, bytes(pixels)


def browser(width: int, height: int, profile: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for tool in (CHROMIUM, CHROMEDRIVER):
        if not shutil.which(tool):
            raise Usage(f"{tool} not found: install the Debian packages chromium and chromium-driver (make deps)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--no-sandbox",
                     f"--window-size={width},{height}", "--force-device-scale-factor=1", "--hide-scrollbars",
                     "--disable-dev-shm-usage", f"--user-data-dir={profile}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # A driver given by path: Selenium Manager never runs (it would download a browser).
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def console(driver) -> str:
    try:
        return " | ".join(entry.get("message", "") for entry in driver.get_log("browser"))[-1500:]
    except Exception:  # the log is a help in a failure message, never a failure of its own
        return ""


def parse_view(text: str) -> tuple[float, float, float]:
    parts = text.split(",")
    try:
        lon, lat, zoom = (float(part) for part in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--view {text!r}: give LON,LAT,ZOOM")
    return lon, lat, zoom


def wait_idle(driver, deadline: float) -> bool:
    """True once the page sets `window.mapIdle`, polled until `deadline` (time.monotonic())."""
    while time.monotonic() < deadline:
        if driver.execute_script("return window.mapIdle === true"):
            return True
        time.sleep(0.2)
    return False


def run(args) -> int:
    report = ScreenshotReport("screenshot", args.url)
    expectations = [parse_point(text) for text in args.expect]
    deadline = time.monotonic() + args.timeout
    with tempfile.TemporaryDirectory(prefix="mappack-chromium-") as profile:
        driver = browser(args.width, args.height, profile)
        try:
            driver.set_page_load_timeout(max(5, int(deadline - time.monotonic())))
            driver.set_script_timeout(30)
            # The viewport itself WIDTHxHEIGHT at one pixel per CSS pixel (the window's size includes no promise about it).
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                   {"width": args.width, "height": args.height, "deviceScaleFactor": 1, "mobile": False})
            driver.get(args.url)
            if driver.execute_script("return window.mapMissing === true"):
                report.check(False, "the page has MapLibre GL JS", "it says MapLibre GL JS is not available")
                return report.finish()
            idle = wait_idle(driver, deadline)
            if not report.check(idle, "the map draws and goes idle (window.mapIdle)",
                                f"not within {args.timeout} s; console: {console(driver)}"):
                return report.finish()
            if args.view:
                lon, lat, zoom = args.view
                driver.execute_script(
                    "window.mapIdle = false; window.map.once('idle', () => { window.mapIdle = true; });"
                    "window.map.jumpTo({center: [arguments[0], arguments[1]], zoom: arguments[2]});", lon, lat, zoom)
                idle = wait_idle(driver, deadline)
                if not report.check(idle, f"the map moves to {lon},{lat} zoom {zoom} and goes idle",
                                    f"not within {args.timeout} s; console: {console(driver)}"):
                    return report.finish()
            view_width = driver.execute_script("return window.innerWidth")
            png = driver.get_screenshot_as_png()
            Path(args.png).write_bytes(png)
            report.info(f"screenshot: {args.png} ({len(png)} bytes)")
            width, height, channels, pixels = decode_png(png)
            scale = width / view_width if view_width else 1.0
            report.check((width, height) == (args.width, args.height), f"the screenshot is {args.width}x{args.height}", f"it is {width}x{height}")
            for lon, lat, want in expectations:
                x, y = driver.execute_script("const p = window.map.project([arguments[0], arguments[1]]); return [p.x, p.y];", lon, lat)
                px, py = int(round(x * scale)), int(round(y * scale))
                where = f"{lon},{lat} (pixel {px},{py})"
                if not (0 <= px < width and 0 <= py < height):
                    report.check(False, f"{where} is on the screenshot")
                    continue
                offset = (py * width + px) * channels
                got = tuple(pixels[offset:offset + 3])
                report.check(all(abs(g - w) <= TOLERANCE for g, w in zip(got, want)),
                             f"{where} is {','.join(map(str, want))}", f"it is {','.join(map(str, got))}")
        finally:
            driver.quit()
    return report.finish()


def main(argv) -> int:
    parser = argparse.ArgumentParser(prog="screenshot.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("--png", required=True, help="where the screenshot is written")
    parser.add_argument("--expect", action="append", default=[], metavar="LON,LAT=COLOUR")
    parser.add_argument("--view", type=parse_view, default=None, metavar="LON,LAT,ZOOM", help="where the map is moved before the screenshot")
    parser.add_argument("--width", type=int, default=800)
    parser.add_argument("--height", type=int, default=600)
    parser.add_argument("--timeout", type=float, default=120, help="seconds for the page to load and go idle")
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return 2 if stop.code else 0
    try:
        return run(args)
    except Usage as usage:
        print(f"screenshot: usage: {usage}", file=sys.stderr)
        print("screenshot: USAGE ERROR", flush=True)
        return 2
    except ModuleNotFoundError as missing:
        print(f"screenshot: {missing}; run `make venv` and use .venv/bin/python", file=sys.stderr)
        print("screenshot: USAGE ERROR (missing Python package)", flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
