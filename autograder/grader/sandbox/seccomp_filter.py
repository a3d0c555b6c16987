"""The system calls a kernel or observer may make: an allow-list loaded with seccomp.

Namespaces, dropped capabilities and Landlock decide what a confined child sees
and where it may write; they do not close the kernel's facilities that are not
namespaced. The kernel keyring is one (a key added by one submission could be
read by the next under the same uid), and ptrace, bpf, perf_event_open,
userfaultfd and io_uring are the usual ways into kernel bugs. Every child of
the zygote therefore joins a fresh, empty session keyring and then loads this
filter, which allows what Docker's default seccomp profile allows a container
without capabilities (moby/profiles ``seccomp/default.json``) less a few calls
learner code never makes (``REMOVED``). Anything else fails with EPERM, not a
kill: a learner who tries sees an ordinary ``PermissionError`` in the feedback,
and a library that probes a call degrades as it does in Docker. ``clone3``
fails with ENOSYS, so that the C library falls back to ``clone``, whose flags
a filter can read: a thread or a process may be made, a namespace may not.

The filter is built once in the zygote (``build``) and loaded in each child
(``enter``); libseccomp resolves every name for the architecture it runs on.
"""

from __future__ import annotations

import ctypes
import errno

import pyseccomp as seccomp

# Docker's default profile: the calls it allows every container (seccomp/default.json,
# moby/profiles at cd3bed8), including the names of other architectures, which
# libseccomp maps or drops. Arguments are checked for socket, personality and clone.
DOCKER_ALLOWED = """
accept accept4 access adjtimex alarm bind brk cachestat capget capset chdir chmod chown
chown32 clock_adjtime clock_adjtime64 clock_getres clock_getres_time64 clock_gettime
clock_gettime64 clock_nanosleep clock_nanosleep_time64 close close_range connect
copy_file_range creat dup dup2 dup3 epoll_create epoll_create1 epoll_ctl epoll_ctl_old
epoll_pwait epoll_pwait2 epoll_wait epoll_wait_old eventfd eventfd2 execve execveat exit
exit_group faccessat faccessat2 fadvise64 fadvise64_64 fallocate fanotify_mark fchdir fchmod
fchmodat fchmodat2 fchown fchown32 fchownat fcntl fcntl64 fdatasync fgetxattr flistxattr
flock fork fremovexattr fsetxattr fstat fstat64 fstatat64 fstatfs fstatfs64 fsync ftruncate
ftruncate64 futex futex_requeue futex_time64 futex_wait futex_waitv futex_wake futimesat
getcpu getcwd getdents getdents64 getegid getegid32 geteuid geteuid32 getgid getgid32
getgroups getgroups32 getitimer getpeername getpgid getpgrp getpid getppid getpriority
getrandom getresgid getresgid32 getresuid getresuid32 getrlimit get_robust_list getrusage
getsid getsockname getsockopt get_thread_area gettid gettimeofday getuid getuid32 getxattr
getxattrat inotify_add_watch inotify_init inotify_init1 inotify_rm_watch io_cancel ioctl
io_destroy io_getevents io_pgetevents io_pgetevents_time64 ioprio_get ioprio_set io_setup
io_submit ipc kill landlock_add_rule landlock_create_ruleset landlock_restrict_self lchown
lchown32 lgetxattr link linkat listen listmount listxattr listxattrat llistxattr _llseek
lremovexattr lseek lsetxattr lstat lstat64 madvise map_shadow_stack membarrier memfd_create
memfd_secret mincore mkdir mkdirat mknod mknodat mlock mlock2 mlockall mmap mmap2 mprotect
mq_getsetattr mq_notify mq_open mq_timedreceive mq_timedreceive_time64 mq_timedsend
mq_timedsend_time64 mq_unlink mremap mseal msgctl msgget msgrcv msgsnd msync munlock
munlockall munmap name_to_handle_at nanosleep newfstatat _newselect open openat openat2
pause pidfd_open pidfd_send_signal pipe pipe2 pkey_alloc pkey_free pkey_mprotect poll ppoll
ppoll_time64 prctl pread64 preadv preadv2 prlimit64 process_mrelease pselect6
pselect6_time64 pwrite64 pwritev pwritev2 read readahead readlink readlinkat readv recv
recvfrom recvmmsg recvmmsg_time64 recvmsg remap_file_pages removexattr removexattrat rename
renameat renameat2 restart_syscall riscv_hwprobe rmdir rseq rt_sigaction rt_sigpending
rt_sigprocmask rt_sigqueueinfo rt_sigreturn rt_sigsuspend rt_sigtimedwait
rt_sigtimedwait_time64 rt_tgsigqueueinfo sched_getaffinity sched_getattr sched_getparam
sched_get_priority_max sched_get_priority_min sched_getscheduler sched_rr_get_interval
sched_rr_get_interval_time64 sched_setaffinity sched_setattr sched_setparam
sched_setscheduler sched_yield seccomp select semctl semget semop semtimedop
semtimedop_time64 send sendfile sendfile64 sendmmsg sendmsg sendto setfsgid setfsgid32
setfsuid setfsuid32 setgid setgid32 setgroups setgroups32 setitimer setpgid setpriority
setregid setregid32 setresgid setresgid32 setresuid setresuid32 setreuid setreuid32
setrlimit set_robust_list setsid setsockopt set_thread_area set_tid_address setuid setuid32
setxattr setxattrat shmat shmctl shmdt shmget shutdown sigaltstack signalfd signalfd4
sigprocmask sigreturn socketcall socketpair splice stat stat64 statfs statfs64 statmount
statx symlink symlinkat sync sync_file_range syncfs sysinfo tee tgkill time timer_create
timer_delete timer_getoverrun timer_gettime timer_gettime64 timer_settime timer_settime64
timerfd_create timerfd_gettime timerfd_gettime64 timerfd_settime timerfd_settime64 times
tkill truncate truncate64 ugetrlimit umask uname unlink unlinkat uretprobe utime utimensat
utimensat_time64 utimes vfork vmsplice wait4 waitid waitpid write writev
arch_prctl sync_file_range2 swapcontext arm_fadvise64_64 arm_sync_file_range breakpoint
cacheflush set_tls s390_pci_mmio_read s390_pci_mmio_write s390_runtime_instr
riscv_flush_icache
""".split()
# Allowed by Docker, never needed here: file handles that outlive a path check, the clock's
# tuning (read-only queries included), 16-bit segments (x86), and the calls Docker allows
# from kernel 4.8 on, which read or write another process's memory.
REMOVED = frozenset(
    "name_to_handle_at adjtimex clock_adjtime clock_adjtime64 modify_ldt "
    "ptrace process_vm_readv process_vm_writev".split()
)
ALLOWED = tuple(name for name in DOCKER_ALLOWED if name not in REMOVED)
# socket(): local, IP and netlink (getaddrinfo) sockets. Docker allows every family but
# AF_ALG and AF_VSOCK, comparing all 64 bits of an argument the kernel reads as an int.
SOCKET_FAMILIES = (1, 2, 10, 16)  # AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
# personality(): the query (0xffffffff) and the few settings Docker allows.
PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)
INT = 0xFFFFFFFF  # both arguments are ints to the kernel: only their low 32 bits count
# clone(): no CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID or NEWNET.
CLONE_NAMESPACES = 0x7E020000
KEYCTL_JOIN_SESSION_KEYRING = 1
Filter = seccomp.SyscallFilter


def build() -> Filter:
    """The filter for this machine's architecture, ready to load in each child."""
    syscalls = seccomp.SyscallFilter(seccomp.ERRNO(errno.EPERM))
    syscalls.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.ERRNO(errno.EPERM))  # e.g. int 0x80
    syscalls.set_attr(seccomp.Attr.CTL_OPTIMIZE, 2)  # a binary tree: each call costs little
    for name in ALLOWED:
        if _known(name):
            syscalls.add_rule(seccomp.ALLOW, name)
    for family in SOCKET_FAMILIES:
        syscalls.add_rule(seccomp.ALLOW, "socket", seccomp.Arg(0, seccomp.MASKED_EQ, INT, family))
    for persona in PERSONALITIES:
        query = seccomp.Arg(0, seccomp.MASKED_EQ, INT, persona)
        syscalls.add_rule(seccomp.ALLOW, "personality", query)
    flags = 1 if seccomp.system_arch() in (seccomp.Arch.S390, seccomp.Arch.S390X) else 0
    no_namespace = seccomp.Arg(flags, seccomp.MASKED_EQ, CLONE_NAMESPACES, 0)
    syscalls.add_rule(seccomp.ALLOW, "clone", no_namespace)
    syscalls.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    return syscalls


def enter(syscalls: Filter) -> None:
    """Leave the inherited session keyring for a fresh, empty one, then load ``syscalls``.

    After this the process and everything it starts can neither make nor reach a key
    (``keyctl``, ``add_key`` and ``request_key`` are refused), and keys the grader's
    session held are no longer this process's to see in ``/proc/keys``.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    keyctl = seccomp.resolve_syscall(seccomp.Arch.NATIVE, "keyctl")
    if libc.syscall(keyctl, KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        error = ctypes.get_errno()
        if error != errno.ENOSYS:  # ENOSYS: a kernel without keys has nothing to reach
            raise OSError(error, f"join a fresh session keyring: {errno.errorcode[error]}")
    syscalls.load()


def _known(name: str) -> bool:
    """Whether libseccomp knows ``name`` here (a negative pseudo-number it maps itself)."""
    return seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) != -1
