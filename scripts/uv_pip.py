"""``uv pip`` into this interpreter's environment, with pip's own configuration.

`make setup` installs the 6 GB environment with uv, which unpacks wheels and byte-compiles
on every core: on the 2-core machine, 26 to 48 s against 87 s for pip and compileall. uv
reads its own settings, not pip's, so a mirror, a folder of wheels or a constraints file
that a machine or a user gave pip (``pip config list``: files and ``PIP_*`` variables)
would be passed over, and the environment would differ from the one pip makes. This hands
uv the same sources, constraints and ways to reach them (certificates, proxy, timeout), and
has it weigh every index as pip does (the best version wherever it is, not the first index
that has it).

    python scripts/uv_pip.py install -e ".[dev]"    # arguments go to `uv pip`
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from typing import NoReturn

# pip's setting -> uv's option, for the settings that say where packages come from and
# which versions are allowed. Those that take several values hold them space-separated.
LISTS = {
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraint",
    "trusted-host": "--allow-insecure-host",
}
SINGLE = {"index-url": "--index-url"}
FLAGS = {"no-index": "--no-index"}
# pip's settings that uv takes from the environment instead: how it reaches an index.
ENVIRONMENT = {
    "cert": ("SSL_CERT_FILE",),
    "client-cert": ("SSL_CLIENT_CERT",),
    "proxy": ("HTTPS_PROXY", "HTTP_PROXY"),
    "timeout": ("UV_HTTP_TIMEOUT",),
    "default-timeout": ("UV_HTTP_TIMEOUT",),
}
# Which section wins when several set one key: pip's environment variables, then the
# install command's section, then [global].
SECTIONS = (":env:", "install", "global")
TRUE = {"1", "true", "yes", "on"}


def pip_settings(listing: str) -> dict[str, str]:
    """The settings pip would use for `pip install`, from ``pip config list`` output
    (one ``section.key='value'`` per line)."""
    found: dict[tuple[str, str], str] = {}
    for line in listing.splitlines():
        name, _, value = line.partition("=")
        section, _, key = name.rpartition(".")
        if section in SECTIONS and value:
            found[section, key] = ast.literal_eval(value)
    settings = {}
    for section in reversed(SECTIONS):  # the winning section last
        settings.update({key: value for (where, key), value in found.items() if where == section})
    return settings


def uv_options(settings: dict[str, str]) -> list[str]:
    """uv's options for the same package sources and constraints."""
    options = ["--index-strategy", "unsafe-best-match"]
    for key, option in SINGLE.items():
        if key in settings:
            options += [option, settings[key]]
    for key, option in LISTS.items():
        for value in settings.get(key, "").split():
            options += [option, value]
    for key, option in FLAGS.items():
        if settings.get(key, "").lower() in TRUE:
            options.append(option)
    return options


def uv_environment(settings: dict[str, str], environ: dict[str, str]) -> dict[str, str]:
    """``environ`` with the variables through which uv reaches an index as pip was told to
    (a certificate bundle, a proxy, a timeout); a variable already set is kept."""
    added = {
        variable: settings[key]
        for key, variables in ENVIRONMENT.items()
        if key in settings
        for variable in variables
    }
    return {**added, **environ}


def main(argv: list[str]) -> NoReturn:
    from uv import find_uv_bin  # installed beside pip by `make setup`

    listing = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    command, *rest = argv
    uv = [find_uv_bin(), "pip", command, "--python", sys.executable]
    settings = pip_settings(listing)
    os.execve(uv[0], [*uv, *uv_options(settings), *rest], uv_environment(settings, os.environ))


if __name__ == "__main__":
    main(sys.argv[1:])
