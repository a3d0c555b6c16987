"""A learner's home of a fixed size: a file system of its own, in an image file.

Homes share the machine's disk: one learner who fills theirs fills the disk of the whole
class, the hub and grading. Where the file system offers user quotas the instructor can
give each learner one (README); where it does not (ext4 without the ``quota`` tools and
mount options, as on a stock server), ``setup --home-mb N`` gives each learner it makes a
home of at most N MiB: an ext4 file system in ``disks/<user>.img`` of the classroom folder
(sparse: it takes on disk what the learner wrote), mounted on their home without set-uid
programs or devices. A learner who fills it gets "No space left on device"; nobody else's
home, nor the machine's disk, fills. The learner's own ``/tmp`` is bounded too (own_pids.py).

Mounts end with a reboot: the classroom's spawner mounts a learner's home again before it
starts their server (spawner.py), and ``course-classroom start`` mounts every one. Remove a
classroom only after ``umount FOLDER/home/*`` (setup's image files stay in ``disks/``).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from autograder.classroom import reach

FOLDER = "disks"
LISTED = "homes.json"  # home -> image, for the spawner and `start`


class DiskError(RuntimeError):
    """A home of a fixed size could not be made or mounted."""


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise DiskError(
            f"{' '.join(command)}: {done.stderr.strip() or done.returncode} / "
            f"{' '.join(command)} 失败：{done.stderr.strip() or done.returncode}"
        )


def listed(folder: Path) -> dict[str, str]:
    """Home -> image of every learner whose home has a fixed size in the classroom ``folder``."""
    try:
        found = json.loads((folder / FOLDER / LISTED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _list(folder: Path, home: Path, image: Path) -> None:
    homes = listed(folder) | {str(home): str(image)}
    (folder / FOLDER / LISTED).write_text(json.dumps(homes, indent=1) + "\n", encoding="utf-8")


def mount(home: Path, image: Path) -> None:
    """Mount ``image`` on ``home`` unless something is mounted there already (as root)."""
    if reach.mounted_at(home):
        return
    _run(["mount", "-o", "loop,nosuid,nodev", str(image), str(home)])


def give_fixed_home(folder: Path, account: pwd.struct_passwd, size_mb: int) -> Path:
    """Give ``account`` (an account setup has just made) a home of at most ``size_mb`` MiB,
    holding what its home holds now; an existing image is mounted as it is. Its image."""
    disks = folder / FOLDER
    disks.mkdir(mode=0o700, exist_ok=True)
    os.chmod(disks, 0o700)
    home, image = Path(account.pw_dir), disks / f"{account.pw_name}.img"
    if not image.exists():
        staging = image.with_suffix(".partial")
        with open(staging, "wb") as handle:
            handle.truncate(size_mb * 1024 * 1024)
        owner = f"root_owner={account.pw_uid}:{account.pw_gid}"
        _run(["mkfs.ext4", "-q", "-F", "-m", "0", "-E", owner, str(staging)])
        with tempfile.TemporaryDirectory(dir=disks) as scratch:
            _run(["mount", "-o", "loop,nosuid,nodev", str(staging), scratch])
            try:
                shutil.rmtree(Path(scratch) / "lost+found", ignore_errors=True)
                _run(["cp", "-a", f"{home}/.", scratch])  # the skeleton useradd put there
                os.chmod(scratch, 0o700)
            finally:
                _run(["umount", scratch])
        os.rename(staging, image)
        for entry in list(home.iterdir()):  # now in the image, which hides them anyway
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    mount(home, image)
    _list(folder, home, image)
    return image


def mount_all(folder: Path) -> None:
    """Mount every learner's fixed-size home of the classroom ``folder`` (after a reboot)."""
    for home, image in listed(folder).items():
        if Path(image).is_file() and Path(home).is_dir():
            mount(Path(home), Path(image))


def release_all(folder: Path) -> None:
    """Unmount them (before the classroom folder is removed)."""
    for home in listed(folder):
        if reach.mounted_at(Path(home)):
            subprocess.run(["umount", home], capture_output=True, check=False)
