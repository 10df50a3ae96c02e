/**
 * The seccomp filter of every sandbox, in the OCI runtime spec's form. runc has no default
 * profile of its own (container engines bring theirs), so slipway states one: everything an
 * ordinary unprivileged program needs is allowed, and the system calls that only serve to
 * reach the kernel's rarely audited corners or to build new namespaces are refused with EPERM.
 * A denylist, not an allowlist: Node, Bun and the JVM keep working across kernel and libc
 * versions, while what no web app needs (keyrings, BPF, mounting, new user namespaces in
 * which a process would hold capabilities again, io_uring and its history of kernel flaws) stays
 * out of reach; libuv and the JVM fall back to ordinary system calls when io_uring is refused.
 */

const EPERM = 1;
const ENOSYS = 38;

/** Refused outright. */
const DENIED = [
  'acct',
  'add_key',
  'bpf',
  'clock_adjtime',
  'clock_settime',
  'create_module',
  'delete_module',
  'fanotify_init',
  'finit_module',
  'fsconfig',
  'fsmount',
  'fsopen',
  'fspick',
  'get_kernel_syms',
  'get_mempolicy',
  'init_module',
  'ioperm',
  'io_uring_enter',
  'io_uring_register',
  'io_uring_setup',
  'iopl',
  'kcmp',
  'kexec_file_load',
  'kexec_load',
  'keyctl',
  'lookup_dcookie',
  'mbind',
  'mount',
  'mount_setattr',
  'move_mount',
  'move_pages',
  'name_to_handle_at',
  'nfsservctl',
  'open_by_handle_at',
  'open_tree',
  'perf_event_open',
  'pivot_root',
  'process_vm_readv',
  'process_vm_writev',
  'ptrace',
  'query_module',
  'quotactl',
  'reboot',
  'request_key',
  'set_mempolicy',
  'setns',
  'settimeofday',
  'swapoff',
  'swapon',
  'syslog',
  'umount2',
  'unshare',
  'uselib',
  'userfaultfd',
  'ustat',
  'vhangup',
];

/** clone() flags that create namespaces: a clone asking for any of them is refused. */
const NAMESPACE_FLAGS = {
  CLONE_NEWNS: 0x00020000,
  CLONE_NEWCGROUP: 0x02000000,
  CLONE_NEWUTS: 0x04000000,
  CLONE_NEWIPC: 0x08000000,
  CLONE_NEWUSER: 0x10000000,
  CLONE_NEWPID: 0x20000000,
  CLONE_NEWNET: 0x40000000,
};

export const SANDBOX_SECCOMP = {
  defaultAction: 'SCMP_ACT_ALLOW',
  architectures: ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32', 'SCMP_ARCH_AARCH64', 'SCMP_ARCH_ARM'],
  syscalls: [
    { names: DENIED, action: 'SCMP_ACT_ERRNO', errnoRet: EPERM },
    // clone3 passes its flags in memory, where a filter cannot read them: answering ENOSYS
    // makes the C library fall back to clone(), whose flags are checked below.
    { names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: ENOSYS },
    ...Object.values(NAMESPACE_FLAGS).map((flag) => ({
      names: ['clone'],
      action: 'SCMP_ACT_ERRNO',
      errnoRet: EPERM,
      args: [{ index: 0, value: flag, valueTwo: flag, op: 'SCMP_CMP_MASKED_EQ' }],
    })),
  ],
};
